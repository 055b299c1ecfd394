// Indexing of arrays autograd records. Any NumPy index (ints, slices, integer arrays, masks)
// reads a set of a's elements; indexing a table of a's flat positions with the same key
// names them. Reading is then one gather of those positions and assignment one select
// between a and a gather of the values, both built from registered differentiable ops
// (embedding, where), so gradients scatter-add back through the embedding's backward.
#include <string_view>
#include <utility>

#include "ndx/imperative.h"
#include "ndx/indexing.h"

namespace ndx {

namespace {

using Params = std::vector<std::pair<std::string_view, Value>>;

NDArray run(const char* op, const std::vector<NDArray>& inputs, const Params& params) {
  return invoke(Op::get(op)->make_attrs(params), inputs)[0];
}

NDArray reshaped(const NDArray& a, Shape shape) {
  if (a.shape() == shape) return a;
  return run("_np_reshape", {a}, {{"newshape", Value(std::move(shape))}});
}

// a's flat positions that a[key] reads, in the shape of a[key] (int64, on the host): the
// key's validation and NumPy's result layout come from getitem itself.
NDArray positions(const NDArray& a, const std::vector<IndexItem>& key) {
  NDArray table(a.shape(), DType::kInt64);
  int64_t* p = table.data<int64_t>();
  for (int64_t i = 0, n = a.size(); i < n; ++i) p[i] = i;
  return getitem(table, key).contiguous();  // getitem reads device index arrays on the host
}

// rows[index[...]] as a recorded embedding lookup of a one-column table, in index's shape.
NDArray gather_rows(const NDArray& values, const NDArray& index, const Device& device) {
  NDArray table = reshaped(values, Shape{values.size(), 1});
  NDArray g = run("_npx_embedding", {index.to(device), table},
                  {{"input_dim", Value(values.size())}, {"output_dim", Value(int64_t{1})}});
  return reshaped(g, index.shape());
}

}  // namespace

NDArray recorded_getitem_gather(const NDArray& a, const std::vector<IndexItem>& key) {
  NDArray pos = positions(a, key);
  if (pos.size() > 0) return gather_rows(a, pos, a.device());
  // Nothing selected: still a recorded result (an empty slice), so a loss over it backpropagates.
  NDArray flat = reshaped(a, Shape{a.size()});
  NDArray none =
      run("_npx_slice", {flat},
          {{"begin", Value(Shape{0})}, {"end", Value(Shape{0})}, {"step", Value(Shape{1})}});
  return reshaped(none, pos.shape());
}

NDArray recorded_setitem_update(const NDArray& a, const std::vector<IndexItem>& key,
                                const NDArray& value) {
  NDArray pos = positions(a, key);
  // NumPy's assignment: value broadcasts to the indexed shape (checked even when it is empty),
  // its leading axes of length 1 beyond the indexed ones dropped.
  NDArray fitted = value;
  int lead = 0;
  while (value.ndim() - lead > pos.ndim() && value.shape()[lead] == 1) ++lead;
  if (lead > 0) fitted = reshaped(value, Shape(value.shape().begin() + lead, value.shape().end()));
  NDArray vals = fitted.shape() == pos.shape()
                     ? fitted
                     : run("_np_broadcast_to", {fitted}, {{"shape", Value(pos.shape())}});
  if (vals.dtype() != a.dtype()) vals = run("_npi_astype", {vals}, {{"dtype", Value(a.dtype())}});
  const int64_t n = pos.size();
  if (n == 0) return a;
  // source[p]: which element of vals lands on a's flat position p; later writes win, as in
  // NumPy's sequential assignment. Positions nobody writes keep a.
  NDArray source(Shape{a.size()}, DType::kInt64), written(a.shape(), DType::kBool);
  int64_t* src = source.data<int64_t>();
  bool* hit = written.data<bool>();
  for (int64_t i = 0; i < a.size(); ++i) src[i] = 0, hit[i] = false;
  const int64_t* p = pos.data<int64_t>();
  for (int64_t j = 0; j < n; ++j) src[p[j]] = j, hit[p[j]] = true;
  NDArray landed = reshaped(gather_rows(vals, source, a.device()), a.shape());
  return run("_np_where", {written.to(a.device()), landed, a}, {});
}

}  // namespace ndx
