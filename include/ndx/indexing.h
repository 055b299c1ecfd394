// NumPy indexing: basic (ints, slices, newaxis, Ellipsis: views) and advanced (integer arrays
// and boolean masks, mixed with basic items: copies), for reading and for assignment.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "ndx/ndarray.h"

namespace ndx {

struct IndexItem {
  enum class Kind : uint8_t { kInt, kSlice, kNewAxis, kEllipsis, kArray };
  Kind kind = Kind::kInt;
  int64_t index = 0;                   // kInt
  std::optional<int64_t> start, stop;  // kSlice
  int64_t step = 1;                    // kSlice
  NDArray array;                       // kArray: an integer or bool array

  static IndexItem integer(int64_t i) { return {Kind::kInt, i, {}, {}, 1, {}}; }
  static IndexItem slice(std::optional<int64_t> b, std::optional<int64_t> e, int64_t s = 1) {
    return {Kind::kSlice, 0, b, e, s, {}};
  }
  static IndexItem newaxis() { return {Kind::kNewAxis, 0, {}, {}, 1, {}}; }
  static IndexItem ellipsis() { return {Kind::kEllipsis, 0, {}, {}, 1, {}}; }
  static IndexItem array_index(NDArray a) { return {Kind::kArray, 0, {}, {}, 1, std::move(a)}; }
};

// a[key]: a view when the key is basic, a new array when it holds arrays.
NDArray getitem(const NDArray& a, const std::vector<IndexItem>& key);
// a[key] = value, with value broadcast to the indexed shape and cast to a's dtype.
void setitem(const NDArray& a, const std::vector<IndexItem>& key, const NDArray& value);
// The same for arrays autograd records, as recorded differentiable ops (gradients scatter-add):
// a[key] as a gather of a's elements, and a[key] = value as a new array (a with value written
// where the key selects; the caller rebinds a to it, since a's data may be saved for backward).
NDArray recorded_getitem_gather(const NDArray& a, const std::vector<IndexItem>& key);
// a[key] while hybridize traces a block, where an index array comes from the block's inputs:
// ops of the graph that read the indices when it runs (slices, a transpose and a take of the
// linear index), differentiable in a. Boolean masks from the inputs are NotImplementedError.
NDArray traced_getitem_gather(const NDArray& a, const std::vector<IndexItem>& key);
NDArray recorded_setitem_update(const NDArray& a, const std::vector<IndexItem>& key,
                                const NDArray& value);
// A shape op (attrs: _np_reshape, _np_transpose, ...) on an array autograd records, `view`
// making its result as a view of a: under autograd that view, recorded as the op (whose
// FGradient is the backward: no shape op's backward reads the values, and writes into
// recorded arrays are refused), not the op's copy; in a trace the op, which the graph runs.
// The Python methods' recorded views and recorded indexing both come here.
struct NodeAttrs;
NDArray recorded_shape_op(const NodeAttrs& attrs, const NDArray& a,
                          const std::function<NDArray()>& view);
// NumPy's nonzero: one int64 array of coordinates per dimension of a (a not 0-d), in C order;
// NaN counts as nonzero, -0.0 as zero. On a's device.
std::vector<NDArray> nonzero(const NDArray& a);

}  // namespace ndx
