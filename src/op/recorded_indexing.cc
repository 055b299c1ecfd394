// Indexing of arrays autograd records. Any NumPy index (ints, slices, integer arrays, masks)
// reads a set of a's elements; indexing a table of a's flat positions with the same key
// names them. Reading is then one gather of those positions and assignment one select
// between a and a gather of the values, both built from registered differentiable ops
// (embedding, where), so gradients scatter-add back through the embedding's backward.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>

#include "ndx/autograd.h"
#include "ndx/error.h"
#include "ndx/executor.h"
#include "ndx/imperative.h"
#include "ndx/indexing.h"

namespace ndx {

namespace {

using Params = std::vector<std::pair<std::string_view, Value>>;

NDArray run(const char* op, const std::vector<NDArray>& inputs, const Params& params) {
  return invoke(Op::get(op)->make_attrs(params), inputs)[0];
}

// a reshaped: a recorded view under autograd (recorded_shape_op), the op otherwise.
NDArray reshaped(const NDArray& a, Shape shape) {
  if (a.shape() == shape) return a;
  const NodeAttrs attrs = Op::get("_np_reshape")->make_attrs(Params{{"newshape", Value(shape)}});
  if (!is_tracing() && !autograd::is_recording()) return invoke(attrs, {a})[0];
  return recorded_shape_op(attrs, a, [&] { return a.reshape_view(shape); });
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

// ---- indexing by arrays whose values a traced graph only knows when it runs ----

// A constant int64 array on `device` (a constant node of the trace).
NDArray int64_constant(Shape shape, const std::vector<int64_t>& values, const Device& device) {
  NDArray c(std::move(shape), DType::kInt64);
  int64_t* p = c.data<int64_t>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return c.to(device);
}

// One axis of a with its new axes inserted: a new axis (length 1) or one of a's own (axis
// `source`), kept whole, sliced or indexed by an integer array.
struct AxisPlan {
  bool new_axis = false;
  int source = -1;
  IndexItem item = IndexItem::slice({}, {});
};

[[noreturn]] void mask_mismatch(int axis, int64_t n, int64_t m) {
  index_error("boolean index did not match indexed array along axis ", axis, "; size of axis is ",
              n, " but size of corresponding boolean axis is ", m);
}

// The key as one plan per axis: the ellipsis expanded, Python ints turned into 0-d index arrays
// (NumPy treats them as advanced indices next to arrays), constant boolean masks into the
// integer arrays of their nonzero positions, and a 0-d boolean (a Python True / False) into a
// new axis indexed by [0] or []. Masks whose values come from the graph's inputs give shapes
// known only at run time: NotImplementedError.
std::vector<AxisPlan> axis_plans(const NDArray& a, const std::vector<IndexItem>& key) {
  int consumed = 0, ellipses = 0;
  for (const auto& it : key) {
    if (it.kind == IndexItem::Kind::kArray && it.array.dtype() == DType::kBool)
      consumed += it.array.ndim();
    else if (it.kind != IndexItem::Kind::kNewAxis && it.kind != IndexItem::Kind::kEllipsis)
      ++consumed;
    ellipses += it.kind == IndexItem::Kind::kEllipsis;
  }
  if (ellipses > 1) index_error("an index can only have a single ellipsis ('...')");
  if (consumed > a.ndim())
    index_error("too many indices for array: array is ", a.ndim(), "-dimensional, but ", consumed,
                " were indexed");
  std::vector<AxisPlan> plans;
  int source = 0;
  auto own = [&](IndexItem item) { plans.push_back({false, source++, std::move(item)}); };
  for (const auto& it : key) {
    const bool is_array = it.kind == IndexItem::Kind::kArray;
    if (is_array && !is_integer(it.array.dtype()) && it.array.dtype() != DType::kBool)
      index_error("arrays used as indices must be of integer (or boolean) type, got ",
                  it.array.dtype());
    if (it.kind == IndexItem::Kind::kEllipsis) {
      for (int k = a.ndim() - consumed; k > 0; --k) own(IndexItem::slice({}, {}));
    } else if (it.kind == IndexItem::Kind::kNewAxis) {
      plans.push_back({true, -1, IndexItem::slice({}, {})});
    } else if (it.kind == IndexItem::Kind::kInt) {
      own(IndexItem::array_index(int64_constant(Shape{}, {it.index}, a.device())));
    } else if (is_array && it.array.dtype() == DType::kBool) {
      if (autograd::has_live_history(it.array))
        not_implemented(
            "[getitem] a boolean mask computed from a hybridized block's inputs: the result's "
            "shape would depend on the mask's values (use np.where, or npx.boolean_mask outside "
            "hybridize)");
      if (it.array.ndim() == 0) {
        const bool keep = it.array.contiguous().data<bool>()[0];
        NDArray index = keep ? int64_constant(Shape{}, {0}, a.device())
                             : int64_constant(Shape{0}, {}, a.device());
        plans.push_back({true, -1, IndexItem::array_index(std::move(index))});
        continue;
      }
      for (int k = 0; k < it.array.ndim(); ++k)
        if (it.array.shape()[k] != a.shape()[source + k])
          mask_mismatch(source + k, a.shape()[source + k], it.array.shape()[k]);
      for (NDArray& coords : nonzero(it.array)) own(IndexItem::array_index(coords));
    } else {
      own(it);
    }
  }
  if (!ellipses)
    while (source < a.ndim()) own(IndexItem::slice({}, {}));
  return plans;
}

// NumPy's IndexError for index arrays whose shapes do not broadcast together.
void check_index_shapes(const std::vector<AxisPlan>& plans) {
  std::vector<int64_t> shape;  // (right-aligned)
  std::string shapes;
  bool ok = true;
  for (const auto& p : plans) {
    if (p.item.kind != IndexItem::Kind::kArray) continue;
    const Shape& s = p.item.array.shape();
    shapes += (shapes.empty() ? "" : " ") + s.str();
    if (static_cast<int>(shape.size()) < s.ndim())
      shape.insert(shape.begin(), s.ndim() - shape.size(), 1);
    for (int k = 1; k <= s.ndim(); ++k) {
      int64_t& d = shape[shape.size() - k];
      const int64_t e = s[s.ndim() - k];
      if (d == 1)
        d = e;
      else if (e != 1 && e != d)
        ok = false;
    }
  }
  if (!ok)
    index_error("shape mismatch: indexing arrays could not be broadcast together with shapes ",
                shapes);
}

NDArray sliced(const NDArray& a, const Shape& begin, const Shape& end, const Shape& step) {
  return run("_npx_slice", {a},
             {{"begin", Value(begin)}, {"end", Value(end)}, {"step", Value(step)}});
}

NDArray transposed(const NDArray& a, const Shape& axes) {
  bool identity = true;
  for (int i = 0; i < static_cast<int>(axes.ndim()); ++i) identity = identity && axes[i] == i;
  return identity ? a : run("_np_transpose", {a}, {{"axes", Value(axes)}});
}

NDArray taken(const NDArray& a, const NDArray& index, int axis, std::string_view mode) {
  return run("_npi_take", {a, index},
             {{"axis", Value(int64_t{axis})}, {"mode", Value(std::string_view(mode))}});
}

// The index along axis `axis` of a (of length n), checked (an IndexError naming that axis
// when the graph runs) and with negative values wrapped: a take from [0, n) laid along `axis`.
NDArray normalized_index(const NDArray& index, int axis, int64_t n, const Device& device) {
  std::vector<int64_t> range(static_cast<size_t>(n));
  std::iota(range.begin(), range.end(), int64_t{0});
  Shape along = Shape::filled(axis + 1, 1);
  along[axis] = n;
  return reshaped(taken(int64_constant(along, range, device), index, axis, "raise"), index.shape());
}

}  // namespace

NDArray recorded_shape_op(const NodeAttrs& attrs, const NDArray& a,
                          const std::function<NDArray()>& view) {
  if (is_tracing()) return invoke(attrs, {a})[0];
  std::vector<NDArray> out{view()};
  autograd::record_op(attrs, {a}, &out);
  return out[0];
}

NDArray traced_getitem_gather(const NDArray& a, const std::vector<IndexItem>& key) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  const std::vector<AxisPlan> plans = axis_plans(a, key);
  check_index_shapes(plans);
  // New axes become axes of length 1 of a, so that every plan names one axis of b.
  Shape with_new;
  for (const auto& p : plans) with_new.push_back(p.new_axis ? 1 : a.shape()[p.source]);
  NDArray b = reshaped(a, with_new);
  // The slices first (as views of b), leaving the indexed axes whole.
  const int nd = static_cast<int>(plans.size());
  Shape begin = Shape::filled(nd, kNone), end = Shape::filled(nd, kNone),
        step = Shape::filled(nd, 1);
  std::vector<int> indexed, others;
  for (int i = 0; i < nd; ++i) {
    const IndexItem& it = plans[i].item;
    if (it.kind == IndexItem::Kind::kArray) {
      indexed.push_back(i);
      continue;
    }
    if (it.step == 0) value_error("[getitem] slice step cannot be zero");
    begin[i] = it.start ? *it.start : kNone;
    end[i] = it.stop ? *it.stop : kNone;
    step[i] = it.step;
    others.push_back(i);
  }
  b = sliced(b, begin, end, step);
  // The axis of a an index checks against, for its error message (a new axis: its place in b).
  auto error_axis = [&](int i) { return plans[i].new_axis ? i : plans[i].source; };
  if (indexed.size() == 1) {  // (one index array: a take along its axis is the whole story)
    const int i = indexed[0];
    if (error_axis(i) == i) return taken(b, plans[i].item.array, i, "raise");
    NDArray index = normalized_index(plans[i].item.array, error_axis(i), b.shape()[i], a.device());
    return taken(b, index, i, "clip");
  }
  // NumPy's layout: the broadcast index dims replace the indexed axes where those are adjacent
  // in the key, else they lead.
  bool adjacent = true;
  for (size_t k = 1; k < indexed.size(); ++k)
    adjacent = adjacent && indexed[k] == indexed[k - 1] + 1;
  // Several: the indexed axes move to the front and merge into one, taken at the linear index
  // sum_k i_k * stride_k (each i_k checked and wrapped against its axis first).
  NDArray linear;
  int64_t stride = 1, merged = 1;
  for (int k = static_cast<int>(indexed.size()) - 1; k >= 0; --k) {
    const int i = indexed[k];
    const int64_t n = b.shape()[i];
    NDArray term = normalized_index(plans[i].item.array, error_axis(i), n, a.device());
    if (stride != 1)
      term = run("_np_multiply", {term, int64_constant(Shape{}, {stride}, a.device())}, {});
    linear = k == static_cast<int>(indexed.size()) - 1 ? term : run("_np_add", {term, linear}, {});
    stride *= n;
    merged *= n;
  }
  Shape order, rest_shape{merged};
  for (int i : indexed) order.push_back(i);
  for (int i : others) order.push_back(i), rest_shape.push_back(b.shape()[i]);
  NDArray gathered = taken(reshaped(transposed(b, order), rest_shape), linear, 0, "clip");
  if (!adjacent || indexed.front() == 0) return gathered;
  // The index dims go back to where the first indexed axis was among the others.
  const int lead = static_cast<int>(linear.ndim());
  const int before = indexed.front();  // (the others before it: all axes before it)
  Shape back;
  for (int i = 0; i < before; ++i) back.push_back(lead + i);
  for (int i = 0; i < lead; ++i) back.push_back(i);
  for (int i = lead + before; i < static_cast<int>(gathered.ndim()); ++i) back.push_back(i);
  return transposed(gathered, back);
}

// a[index] of one integer array on axis 0 of a float array (a table's rows, an embedding's
// lookup): the embedding op on a's rows directly, so neither a table of a's positions nor a
// copy of a is made and the gradient costs the rows looked up. Negative indices count from
// the end; others outside [-n, n) are NumPy's IndexError.
// a[mask] for a boolean mask over a's leading axes (NumPy's result: the selected cells, each
// with the trailing axes, in C order) as a lookup of the rows of a reshaped (cells, rest), in
// increasing order (whose backward writes each row once); false where the general path
// decides (a shape mismatch it reports, nothing selected).
bool mask_lookup(const NDArray& a, const NDArray& mask, NDArray* out) {
  const int p = mask.ndim();
  if (p < 1 || p > a.ndim()) return false;
  for (int k = 0; k < p; ++k)
    if (mask.shape()[k] != a.shape()[k]) return false;
  const int64_t cells = mask.size(), width = a.size() / cells;
  const NDArray host = mask.to(cpu()).contiguous();
  const bool* m = host.data<bool>();
  int64_t count = 0;
  for (int64_t i = 0; i < cells; ++i) count += m[i];
  if (count == 0) return false;
  // Branch-free (a random mask mispredicts half its branches): every cell writes its position,
  // the next cell overwriting it unless the mask keeps it; the last write goes to a spare slot.
  std::vector<int64_t> kept(static_cast<size_t>(count) + 1);
  for (int64_t i = 0, j = 0; i < cells; ++i) {
    kept[static_cast<size_t>(j)] = i;
    j += m[i] ? 1 : 0;
    j = std::min(j, count);
  }
  NDArray index(Shape{count}, DType::kInt64);
  std::copy(kept.begin(), kept.begin() + count, index.data<int64_t>());
  NDArray g = run("_npx_embedding", {index.to(a.device()), reshaped(a, Shape{cells, width})},
                  {{"input_dim", Value(cells)}, {"output_dim", Value(width)}});
  Shape shape{count};
  for (int k = p; k < a.ndim(); ++k) shape.push_back(a.shape()[k]);
  *out = reshaped(g, shape);
  return true;
}

// An integer index array for an axis of length n, on the host in int64, negative indices
// wrapped (NumPy's IndexError for those out of range).
NDArray wrapped_indices(const NDArray& key, int64_t n, int axis) {
  NDArray index = key.to(cpu()).contiguous();
  if (index.dtype() != DType::kInt64)
    index = run("_npi_astype", {index}, {{"dtype", Value(DType::kInt64)}});
  NDArray wrapped(index.shape(), DType::kInt64);
  const int64_t* src = index.data<int64_t>();
  int64_t* dst = wrapped.data<int64_t>();
  for (int64_t i = 0, m = index.size(); i < m; ++i) {
    if (src[i] < -n || src[i] >= n)
      index_error("index ", src[i], " is out of bounds for axis ", axis, " with size ", n);
    dst[i] = src[i] < 0 ? src[i] + n : src[i];
  }
  return wrapped;
}

// a[:, idx], a[:, :, idx, :], a[..., idx]: one integer array after whole slices (or after
// `...`, for the last axis) is NumPy's take along that axis, recorded as _npi_take, whose
// backward adds each slice back; the general path would gather (and sort) every position.
bool axis_take_lookup(const NDArray& a, const std::vector<IndexItem>& key, NDArray* out) {
  // (_npi_take runs on the host: GPU arrays keep the general path's device gather)
  if (!a.device().is_cpu() || a.ndim() < 2 || !is_float(a.dtype()) || a.size() == 0 ||
      key.size() > static_cast<size_t>(a.ndim()))
    return false;
  auto whole = [](const IndexItem& it) {
    return it.kind == IndexItem::Kind::kSlice && !it.start && !it.stop && it.step == 1;
  };
  int axis = -1;
  const IndexItem* array = nullptr;
  if (key.size() == 2 && key[0].kind == IndexItem::Kind::kEllipsis &&
      key[1].kind == IndexItem::Kind::kArray) {
    axis = a.ndim() - 1, array = &key[1];
  } else {
    for (size_t i = 0; i < key.size(); ++i) {
      if (key[i].kind == IndexItem::Kind::kArray && !array)
        axis = static_cast<int>(i), array = &key[i];
      else if (!whole(key[i]))
        return false;
    }
  }
  if (!array || axis < 1 || !is_integer(array->array.dtype())) return false;
  const NDArray index = wrapped_indices(array->array, a.shape()[axis], axis);
  *out = run("_npi_take", {a, index.to(a.device())},
             {{"axis", Value(static_cast<int64_t>(axis))}, {"mode", Value(std::string("raise"))}});
  return true;
}

bool rows_lookup(const NDArray& a, const std::vector<IndexItem>& key, NDArray* out) {
  if (axis_take_lookup(a, key, out)) return true;
  if (key.size() != 1 || key[0].kind != IndexItem::Kind::kArray || a.ndim() < 1 ||
      !is_float(a.dtype()) || a.size() == 0)
    return false;
  if (key[0].array.dtype() == DType::kBool) return mask_lookup(a, key[0].array, out);
  if (!is_integer(key[0].array.dtype())) return false;
  const int64_t n = a.shape()[0], width = a.size() / n;
  const NDArray index = key[0].array;
  const NDArray wrapped = wrapped_indices(index, n, 0);
  NDArray rows = a.ndim() == 2 ? a : reshaped(a, Shape{n, width});
  NDArray g = run("_npx_embedding", {wrapped.to(a.device()), rows},
                  {{"input_dim", Value(n)}, {"output_dim", Value(width)}});
  Shape shape = index.shape();
  for (int k = 1; k < a.ndim(); ++k) shape.push_back(a.shape()[k]);
  *out = reshaped(g, shape);
  return true;
}

NDArray recorded_getitem_gather(const NDArray& a, const std::vector<IndexItem>& key) {
  NDArray looked_up;
  if (rows_lookup(a, key, &looked_up)) return looked_up;
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
