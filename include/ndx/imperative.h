// Imperative invoke: infer shape and dtype, validate, allocate outputs, choose request types,
// dispatch FCompute per device.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ndx/ndarray.h"
#include "ndx/op.h"

namespace ndx {

struct InvokeOptions {
  // Device for ops without inputs (creation ops); inputs' device otherwise.
  std::optional<Device> device;
  // Write into these arrays instead of allocating (NumPy's out=).
  const std::vector<NDArray>* outputs = nullptr;
  // Without `outputs`: write output j into (*preferred)[j] where that array is defined and has
  // the output's shape, dtype and device; allocate the others. Autograd writes gradients
  // straight into the leaves' .grad arrays with it.
  const std::vector<NDArray>* preferred = nullptr;
  // Request per output; kWriteTo (or kWriteInplace when allowed) by default.
  const std::vector<OpReqType>* req = nullptr;
  bool is_train = false;  // also true while autograd is in training mode
  // Return every output, hidden ones (FNumVisibleOutputs) included.
  bool all_outputs = false;
};

// Runs `attrs.op` on inputs and returns its visible outputs.
// The ops that ran on host copies of GPU arrays for want of a GPU kernel, with call counts.
std::map<std::string, int64_t> gpu_host_fallbacks();

std::vector<NDArray> invoke(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                            const InvokeOptions& options = {});
// Convenience: by op name with a string dict.
std::vector<NDArray> invoke(const std::string& op_name, const std::vector<NDArray>& inputs,
                            std::map<std::string, std::string> dict = {},
                            const InvokeOptions& options = {});

// NumPy's ufunc keywords around an elementwise op: np.add(a, b, out=o, where=m, dtype=d,
// casting=c). Ops marked "TIsUfunc" take them from Python.
struct UfuncOptions {
  std::optional<DType> dtype;  // the loop's dtype: inputs are cast to it, outputs must be it
  Casting casting = Casting::kSameKind;
  const NDArray* where = nullptr;  // bool, broadcast to the output: False keeps out's element
  std::vector<bool> weak;          // inputs that were Python scalars: exempt from casting checks
};
// Without `outputs`, elements where `where` is False are unspecified (NumPy leaves them
// uninitialized); with it, results are cast into the outputs' dtypes under `casting`.
std::vector<NDArray> invoke_ufunc(const NodeAttrs& attrs, std::vector<NDArray> inputs,
                                  const std::vector<NDArray>* outputs, const UfuncOptions& options);
// Whether dtype= t names the output of the op's loop for these inputs as they are (the
// comparisons and logical ops with dtype=bool), so nothing is cast to t.
bool ufunc_gives_dtype_uncast(const NodeAttrs& attrs, const std::vector<NDArray>& inputs, DType t);

// Shape and dtype inference alone (as invoke does it), for introspection and tests.
void infer_shapes(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out);
void infer_types(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out);

}  // namespace ndx
