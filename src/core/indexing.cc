#include "ndx/indexing.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <optional>

#include "gpu/runtime.h"
#include "kernel/blob.h"
#include "kernel/compress.h"
#include "kernel/gpu.h"
#include "kernel/gpu_fused.h"

namespace ndx {

namespace {

using Kind = IndexItem::Kind;

// a with axis `axis` fixed at `index` (the axis removed): a view.
NDArray select(const NDArray& a, int axis, int64_t index) {
  int64_t n = a.shape()[axis];
  if (index < -n || index >= n)
    index_error("index ", index, " is out of bounds for axis ", axis, " with size ", n);
  if (index < 0) index += n;
  Shape shape, strides;
  for (int i = 0; i < a.ndim(); ++i)
    if (i != axis) shape.push_back(a.shape()[i]), strides.push_back(a.strides()[i]);
  return a.view(a.byte_offset() + index * a.strides()[axis] * a.itemsize(), shape, strides,
                a.dtype());
}

// The coordinates of a bool mask's true elements, one int64 array per dimension (on the host).
std::vector<NDArray> mask_coordinates(const NDArray& m) {
  const NDArray bits = m.device().is_gpu() ? m.to(cpu()) : m.contiguous();
  const bool* b = bits.data<bool>();
  const int64_t total = bits.size();
  int64_t count = 0;
  for (int64_t flat = 0; flat < total; ++flat) count += b[flat];
  // Each element's coordinates are written unconditionally and kept by advancing k only for
  // true ones (no branch to mispredict on a random mask); one spare slot takes the last write.
  std::vector<NDArray> buffers;
  std::vector<int64_t*> c;
  for (int d = 0; d < m.ndim(); ++d) {
    buffers.emplace_back(Shape{count + 1}, DType::kInt64);
    c.push_back(buffers.back().data<int64_t>());
  }
  if (m.ndim() == 1) {  // the coordinates are the flat positions
    for (int64_t flat = 0, k = 0; flat < total; ++flat) {
      c[0][k] = flat;
      k += b[flat];
    }
  } else {  // walk the multi-index along with the flat position: no division per element
    std::vector<int64_t> at(static_cast<size_t>(m.ndim()), 0);
    for (int64_t flat = 0, k = 0; flat < total; ++flat) {
      for (int d = 0; d < m.ndim(); ++d) c[d][k] = at[d];
      k += b[flat];
      for (int d = m.ndim() - 1; d >= 0 && ++at[d] == m.shape()[d]; --d) at[d] = 0;
    }
  }
  std::vector<NDArray> coords;
  for (const auto& buf : buffers)
    coords.emplace_back(buf.storage(), 0, Shape{count}, Shape{1}, DType::kInt64);
  return coords;
}

// Replaces every boolean array by the integer arrays of its nonzero coordinates (one per dim
// it spans) and checks the item types; the result holds no bool arrays.
std::vector<IndexItem> expand_masks(const NDArray& a, const std::vector<IndexItem>& key) {
  std::vector<IndexItem> out;
  int consumed = 0, ellipses = 0;
  for (const auto& it : key) {
    if (it.kind == Kind::kEllipsis) ++ellipses;
    if (it.kind == Kind::kInt || it.kind == Kind::kSlice) ++consumed;
    if (it.kind == Kind::kArray) consumed += it.array.dtype() == DType::kBool ? it.array.ndim() : 1;
  }
  if (ellipses > 1) index_error("an index can only have a single ellipsis ('...')");
  if (consumed > a.ndim())
    index_error("too many indices for array: array is ", a.ndim(), "-dimensional, but ", consumed,
                " were indexed");
  int axis = 0;
  for (const auto& it : key) {
    switch (it.kind) {
      case Kind::kEllipsis:
        axis += a.ndim() - consumed;
        break;
      case Kind::kNewAxis:
        break;
      case Kind::kArray: {
        DType t = it.array.dtype();
        if (t != DType::kBool && !is_integer(t))
          index_error("arrays used as indices must be of integer (or boolean) type, got ", t);
        if (t == DType::kBool) {
          if (it.array.ndim() == 0) break;  // a new axis of length 1 or 0: plan_advanced's job
          const NDArray& m = it.array;
          // (an empty mask selects nothing whatever its shape: NumPy takes it, as an empty
          // integer index for one dimension)
          for (int d = 0; d < m.ndim() && m.size() != 0; ++d)
            if (m.shape()[d] != a.shape()[axis + d])
              index_error("boolean index did not match indexed array along axis ", axis + d,
                          "; size of axis is ", a.shape()[axis + d],
                          " but size of corresponding boolean axis is ", m.shape()[d]);
          // nonzero(): one int64 coordinate array per mask dim.
          for (auto& c : mask_coordinates(m)) out.push_back(IndexItem::array_index(std::move(c)));
          axis += m.ndim();
          continue;
        }
        ++axis;
        break;
      }
      default:
        ++axis;
    }
    out.push_back(it);
  }
  return out;
}

bool has_arrays(const std::vector<IndexItem>& key) {
  for (const auto& it : key)
    if (it.kind == Kind::kArray) return true;
  return false;
}

// Basic indexing only: a view.
NDArray basic(const NDArray& a, const std::vector<IndexItem>& key) {
  int consumed = 0;
  for (const auto& it : key) consumed += it.kind == Kind::kInt || it.kind == Kind::kSlice;
  NDArray v = a;
  int axis = 0;
  for (const auto& it : key) {
    switch (it.kind) {
      case Kind::kNewAxis:
        v = v.expand_dims(axis++);
        break;
      case Kind::kEllipsis:
        axis += a.ndim() - consumed;
        break;
      case Kind::kSlice:
        v = v.slice(axis++, it.start, it.stop, it.step);
        break;
      case Kind::kInt:
        v = select(v, axis, it.index);
        break;
      case Kind::kArray:
        break;
    }
  }
  return v;
}

// The plan of an advanced index: the view the arrays index into (slices and newaxis applied),
// which of its axes the arrays index, the broadcast index arrays, and where the result's
// broadcast dims go.
struct AdvancedPlan {
  NDArray view;  // axes: advanced ones first, then the rest, in order
  int num_advanced = 0;
  // Per advanced axis: the index array broadcast to `bshape`, as contiguous non-negative int64
  // (kept alive in index_arrays; indices points at their data).
  std::vector<NDArray> index_arrays;
  std::vector<const int64_t*> indices;
  Shape bshape;
  int insert_at = 0;  // position of the broadcast dims in the result
};

bool is_scalar_mask(const IndexItem& it) {
  return it.kind == Kind::kArray && it.array.ndim() == 0 && it.array.dtype() == DType::kBool;
}

AdvancedPlan plan_advanced(const NDArray& a, const std::vector<IndexItem>& key) {
  int consumed = 0;
  for (const auto& it : key)
    consumed += it.kind != Kind::kNewAxis && it.kind != Kind::kEllipsis && !is_scalar_mask(it);
  // Apply slices and newaxis; ints and arrays become advanced axes of the view.
  NDArray v = a;
  int axis = 0;
  std::vector<int> adv_axes;
  std::vector<NDArray> adv_arrays;
  std::vector<int> adv_item_pos;
  for (size_t k = 0; k < key.size(); ++k) {
    const auto& it = key[k];
    switch (it.kind) {
      case Kind::kNewAxis:
        v = v.expand_dims(axis++);
        break;
      case Kind::kEllipsis:
        axis += a.ndim() - consumed;
        break;
      case Kind::kSlice:
        v = v.slice(axis++, it.start, it.stop, it.step);
        break;
      case Kind::kInt:
        // Checked here: an empty index array beside it leaves nothing for the loop below.
        if (it.index < -v.shape()[axis] || it.index >= v.shape()[axis])
          index_error("index ", it.index, " is out of bounds for axis ", axis, " with size ",
                      v.shape()[axis]);
        adv_axes.push_back(axis++);
        adv_arrays.push_back(NDArray::scalar(static_cast<double>(it.index), DType::kInt64));
        adv_item_pos.push_back(static_cast<int>(k));
        break;
      case Kind::kArray:
        if (is_scalar_mask(it)) {
          // NumPy: a 0-d mask is nonzero() of itself, an index of shape (1,) or (0,) into a new
          // axis of length 1, so x[True] is x[None] and x[False] is x[None][:0], copied.
          v = v.expand_dims(axis);
          NDArray zeros(Shape{it.array.item<bool>() ? 1 : 0}, DType::kInt64);
          if (zeros.size() > 0) zeros.data<int64_t>()[0] = 0;
          adv_arrays.push_back(std::move(zeros));
        } else {
          adv_arrays.push_back(it.array);
        }
        adv_axes.push_back(axis++);
        adv_item_pos.push_back(static_cast<int>(k));
        break;
    }
  }
  AdvancedPlan p;
  p.num_advanced = static_cast<int>(adv_axes.size());
  // Broadcast the index arrays together.
  Shape b;
  for (const auto& arr : adv_arrays) {
    try {
      b = broadcast_shapes(b, arr.shape(), "getitem");
    } catch (const Error&) {
      index_error("shape mismatch: indexing arrays could not be broadcast together with shapes ",
                  b.str(), " ", arr.shape().str());
    }
  }
  p.bshape = b;
  for (size_t k = 0; k < adv_arrays.size(); ++k) {
    int ax = adv_axes[k];
    int64_t n = v.shape()[ax];
    // astype copies into a fresh contiguous array, which the negative indices are fixed in.
    NDArray idx = adv_arrays[k].broadcast_to(b).astype(DType::kInt64);
    int64_t* data = idx.data<int64_t>();
    for (int64_t j = 0, count = idx.size(); j < count; ++j) {
      int64_t& i = data[j];
      if (i < -n || i >= n)
        index_error("index ", i, " is out of bounds for axis ", ax, " with size ", n);
      if (i < 0) i += n;
    }
    p.indices.push_back(data);
    p.index_arrays.push_back(std::move(idx));
  }
  // Advanced items next to each other keep their place; otherwise the broadcast dims go first.
  bool adjacent = true;
  for (size_t k = 1; k < adv_item_pos.size(); ++k)
    adjacent &= adv_item_pos[k] == adv_item_pos[k - 1] + 1;
  p.insert_at = adjacent ? adv_axes.front() : 0;
  std::vector<int64_t> perm(adv_axes.begin(), adv_axes.end());
  for (int i = 0; i < v.ndim(); ++i)
    if (std::find(adv_axes.begin(), adv_axes.end(), i) == adv_axes.end()) perm.push_back(i);
  p.view = v.transpose(perm);
  return p;
}

// Result axes (bshape + rest) -> NumPy's order (bshape inserted at insert_at).
std::vector<int64_t> result_perm(const AdvancedPlan& p, int result_ndim) {
  int nb = p.bshape.ndim(), nrest = result_ndim - nb;
  std::vector<int64_t> perm;
  for (int i = 0; i < p.insert_at && i < nrest; ++i) perm.push_back(nb + i);
  for (int i = 0; i < nb; ++i) perm.push_back(i);
  for (int i = p.insert_at; i < nrest; ++i) perm.push_back(nb + i);
  return perm;
}

// The indexed shape in the plan's order: the broadcast index shape, then the view's other axes.
Shape plan_shape(const AdvancedPlan& p) {
  Shape shape = p.bshape;
  for (int i = p.num_advanced; i < p.view.ndim(); ++i) shape.push_back(p.view.shape()[i]);
  return shape;
}

// An assignment's value seen with at most `ndim` axes: NumPy drops a value's leading axes of
// length 1 beyond the target's (x[0] = ones((1, 3)) for a row of 3); others stay, for
// broadcast_to to refuse.
NDArray fit_value(const NDArray& value, int ndim) {
  NDArray v = value;
  while (v.ndim() > ndim && v.shape()[0] == 1) v = v[0];
  return v;
}

// The basic-indexing assignment: the view takes the value (broadcast, cast).
void assign_basic(const NDArray& a, const std::vector<IndexItem>& key, const NDArray& value) {
  const NDArray dst = basic(a, key);
  dst.assign(fit_value(value, dst.ndim()));
}

// An assignment's value as a new array of dtype t in the plan's order: broadcast to the
// indexed shape in NumPy's order, then transposed back. A copy, so every read of it finishes
// before the scatter writes.
NDArray values_in_plan_order(const AdvancedPlan& p, const NDArray& value, DType t) {
  const Shape ordered = plan_shape(p);
  const auto perm = result_perm(p, ordered.ndim());
  Shape numpy_shape;
  for (int64_t ax : perm) numpy_shape.push_back(ordered[static_cast<int>(ax)]);
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return fit_value(value, numpy_shape.ndim())
      .broadcast_to(numpy_shape)
      .transpose(inverse)
      .astype(t);
}

// Visits each index tuple of the broadcast shape with the view's sub-block it selects.
template <typename F>
void for_each_block(const AdvancedPlan& p, F&& f) {
  const NDArray& v = p.view;
  Shape rest_shape(v.shape().begin() + p.num_advanced, v.shape().end());
  Shape rest_strides(v.strides().begin() + p.num_advanced, v.strides().end());
  int64_t count = p.bshape.size();
  for (int64_t b = 0; b < count; ++b) {
    int64_t offset = v.byte_offset();
    for (int k = 0; k < p.num_advanced; ++k)
      offset += p.indices[k][b] * v.strides()[k] * v.itemsize();
    f(b, v.view(offset, rest_shape, rest_strides, v.dtype()));
  }
}

// True when the view's non-advanced axes (the block each index tuple selects) are laid out
// C-contiguously, so a block is `bytes` consecutive bytes.
bool blocks_contiguous(const AdvancedPlan& p) {
  const NDArray& v = p.view;
  int64_t expected = 1;
  for (int i = v.ndim() - 1; i >= p.num_advanced; --i) {
    if (v.shape()[i] != 1 && v.strides()[i] != expected) return false;
    expected *= v.shape()[i];
  }
  return true;
}

// Byte offset of block b in the view's storage.
int64_t block_offset(const AdvancedPlan& p, int64_t b) {
  const NDArray& v = p.view;
  int64_t offset = v.byte_offset();
  for (int k = 0; k < p.num_advanced; ++k)
    offset += p.indices[k][b] * v.strides()[k] * v.itemsize();
  return offset;
}

// Copies `count` blocks of `bytes` each between the view's storage (at block_offset) and a
// contiguous buffer: a gather (to_buffer) or a scatter. Fixed sizes copy as one word.
template <bool kToBuffer>
void copy_blocks(const AdvancedPlan& p, char* buffer, int64_t bytes) {
  char* base = static_cast<char*>(p.view.storage()->data());
  const int64_t count = p.bshape.size();
  auto run = [&](auto word) {
    using W = decltype(word);
    if (p.num_advanced == 1) {  // the common case: one index array, a stride in bytes
      const int64_t* idx = p.indices[0];
      const int64_t step = p.view.strides()[0] * p.view.itemsize();
      char* start = base + p.view.byte_offset();
      for (int64_t b = 0; b < count; ++b) {
        char* at = start + idx[b] * step;
        if constexpr (kToBuffer)
          std::memcpy(buffer + b * sizeof(W), at, sizeof(W));
        else
          std::memcpy(at, buffer + b * sizeof(W), sizeof(W));
      }
      return;
    }
    for (int64_t b = 0; b < count; ++b) {
      char* at = base + block_offset(p, b);
      if constexpr (kToBuffer)
        std::memcpy(buffer + b * sizeof(W), at, sizeof(W));
      else
        std::memcpy(at, buffer + b * sizeof(W), sizeof(W));
    }
  };
  switch (bytes) {
    case 1:
      return run(uint8_t{});
    case 2:
      return run(uint16_t{});
    case 4:
      return run(uint32_t{});
    case 8:
      return run(uint64_t{});
    default:
      for (int64_t b = 0; b < count; ++b) {
        char* at = base + block_offset(p, b);
        if constexpr (kToBuffer)
          std::memcpy(buffer + b * bytes, at, static_cast<size_t>(bytes));
        else
          std::memcpy(at, buffer + b * bytes, static_cast<size_t>(bytes));
      }
  }
}

}  // namespace

namespace {
// An index array on a GPU, or a GPU array indexed by arrays: the arrays are read and checked
// on the host (they are small next to the data, and one set of checks serves both devices).
// GPU arrays a kernel here reads or writes directly: after another thread's stream's work on
// them (cuda::use_on_this_stream).
void ordered_on_this_stream(std::initializer_list<const NDArray*> arrays) {
  for (const NDArray* a : arrays) cuda::use_on_this_stream(a->storage()->data(), a->device().id);
}

bool needs_host(const NDArray& a, const std::vector<IndexItem>& key) {
  for (const auto& it : key)
    if (it.kind == Kind::kArray && (a.device().is_gpu() || it.array.device().is_gpu())) return true;
  return false;
}
std::vector<IndexItem> host_key(const std::vector<IndexItem>& key) {
  std::vector<IndexItem> k = key;
  for (auto& it : k)
    if (it.kind == Kind::kArray) it.array = it.array.to(cpu());
  return k;
}

// The byte offset of every block in the view's storage, the blocks whose positions are kept
// (all when `keep` is empty), as an int64 array on `device`.
NDArray offsets_on(const AdvancedPlan& p, const std::vector<int64_t>& keep, Device device) {
  const int64_t count = keep.empty() ? p.bshape.size() : static_cast<int64_t>(keep.size());
  NDArray h(Shape{count}, DType::kInt64);
  int64_t* o = h.data<int64_t>();
  for (int64_t b = 0; b < count; ++b)
    o[b] = block_offset(p, keep.empty() ? b : keep[static_cast<size_t>(b)]);
  return h.to(device);
}

// The blocks a scatter writes: where two index tuples name the same block the last one
// wins, as in NumPy; empty when there are no repeats (every block is written). A table over
// the advanced axes' positions finds the last writer of each in one pass where it is not
// much larger than the index; otherwise the blocks are sorted by offset.
std::vector<int64_t> last_writers(const AdvancedPlan& p) {
  const int64_t count = p.bshape.size();
  int64_t span = 1;
  for (int k = 0; k < p.num_advanced && span <= 4 * count + (1 << 20); ++k)
    span *= p.view.shape()[k];
  std::vector<int64_t> keep;
  if (span <= 4 * count + (1 << 20)) {
    std::vector<int64_t> flat(static_cast<size_t>(count), 0), last(static_cast<size_t>(span), -1);
    for (int64_t b = 0; b < count; ++b) {
      int64_t f = 0;
      for (int k = 0; k < p.num_advanced; ++k) f = f * p.view.shape()[k] + p.indices[k][b];
      flat[static_cast<size_t>(b)] = f;
      last[static_cast<size_t>(f)] = b;
    }
    for (int64_t b = 0; b < count; ++b)
      if (last[static_cast<size_t>(flat[static_cast<size_t>(b)])] == b) keep.push_back(b);
  } else {
    std::vector<std::pair<int64_t, int64_t>> at(static_cast<size_t>(count));
    for (int64_t b = 0; b < count; ++b) at[static_cast<size_t>(b)] = {block_offset(p, b), b};
    std::sort(at.begin(), at.end());
    for (size_t i = 0; i < at.size(); ++i)
      if (i + 1 == at.size() || at[i + 1].first != at[i].first) keep.push_back(at[i].second);
  }
  if (static_cast<int64_t>(keep.size()) == count) keep.clear();
  return keep;
}

// Moves the plan's blocks between the view's storage and `buffer` (on the view's GPU), one
// kernel: a gather into the buffer or a scatter from it.
void move_blocks_on_gpu(const AdvancedPlan& p, const std::vector<int64_t>& keep, char* buffer,
                        bool to_buffer) {
  const NDArray& v = p.view;
  ordered_on_this_stream({&v});
  const Shape rest(v.shape().begin() + p.num_advanced, v.shape().end());
  const Shape rest_strides(v.strides().begin() + p.num_advanced, v.strides().end());
  const NDArray offsets = offsets_on(p, keep, v.device());
  NDArray positions;
  if (!keep.empty()) {
    positions = NDArray(Shape{static_cast<int64_t>(keep.size())}, DType::kInt64);
    std::copy(keep.begin(), keep.end(), positions.data<int64_t>());
    positions = positions.to(v.device());
  }
  kernel::gpu::index_blocks(static_cast<char*>(v.storage()->data()), offsets.data<int64_t>(),
                            keep.empty() ? nullptr : positions.data<int64_t>(), offsets.size(),
                            rest, rest_strides, v.itemsize(), buffer, to_buffer, v.device().id);
}
}  // namespace

namespace {
// x[mask] with a mask of x's whole shape (the common case): one pass copying the selected
// elements in C order, with no coordinate arrays (kernel/compress.h).
NDArray full_mask_select(const NDArray& a, const NDArray& mask) {
  const NDArray m = mask.contiguous(), src = a.contiguous();
  const bool* keep = m.data<bool>();
  const int64_t count = kernel::count_true(keep, m.size());
  NDArray buffer(Shape{count + 1}, a.dtype());  // a spare slot for the scalar copies
  NDArray out(buffer.storage(), buffer.byte_offset(), Shape{count}, Shape{1}, a.dtype());
  kernel::compress_by_mask(keep, src.raw_data(), out.raw_data(), m.size(), a.itemsize());
  return out;
}
}  // namespace

namespace {
// x[idx] for one integer array on x's GPU (the common gather): the indices are checked and
// turned into offsets on the device, and only the verdict comes back to the host.
std::optional<NDArray> gpu_take(const NDArray& a, const std::vector<IndexItem>& key) {
  if (key.size() != 1 || key[0].kind != Kind::kArray || a.ndim() == 0) return std::nullopt;
  const NDArray& index = key[0].array;
  if (index.device() != a.device() || !is_integer(index.dtype())) return std::nullopt;
  const NDArray idx = index.contiguous();
  ordered_on_this_stream({&a, &idx});
  const Shape rest(a.shape().begin() + 1, a.shape().end());
  const Shape rest_strides(a.strides().begin() + 1, a.strides().end());
  Shape out_shape = idx.shape();
  for (int64_t d : rest) out_shape.push_back(d);
  NDArray offsets(Shape{idx.size()}, DType::kInt64, a.device());
  const int64_t n = a.shape()[0];
  const int64_t bad =
      kernel::gpu::row_offsets(kernel::to_blob(idx), n, a.byte_offset(),
                               a.strides()[0] * a.itemsize(), offsets.data<int64_t>());
  if (bad >= 0) {
    const NDArray value = idx.reshape({idx.size()})[bad].to(cpu()).astype(DType::kInt64);
    index_error("index ", value.item<int64_t>(), " is out of bounds for axis 0 with size ", n);
  }
  NDArray out(out_shape, a.dtype(), a.device());
  if (out.size() > 0)
    kernel::gpu::index_blocks(static_cast<char*>(a.storage()->data()), offsets.data<int64_t>(),
                              nullptr, idx.size(), rest, rest_strides, a.itemsize(),
                              static_cast<char*>(out.raw_data()), true, a.device().id);
  return out;
}

// x[idx] = value for one integer array on x's GPU (the common scatter): checked, and the last
// writer of each row found, on the device; only the verdict comes back to the host. The row
// table costs 8 bytes a row of x, so a small index into a long axis keeps the host plan.
bool gpu_put(const NDArray& a, const std::vector<IndexItem>& key, const NDArray& value) {
  if (key.size() != 1 || key[0].kind != Kind::kArray || a.ndim() == 0) return false;
  const NDArray& index = key[0].array;
  if (index.device() != a.device() || !is_integer(index.dtype())) return false;
  const int64_t n = a.shape()[0];
  if (n > 4 * index.size() + (1 << 20)) return false;
  const NDArray idx = index.contiguous();
  Shape shape = idx.shape();
  for (int i = 1; i < a.ndim(); ++i) shape.push_back(a.shape()[i]);
  const NDArray on_device = value.device() == a.device() ? value : value.to(a.device());
  // A copy in a's dtype, so every read of the value (which may view a) ends before the writes.
  const NDArray packed =
      fit_value(on_device, shape.ndim()).broadcast_to(shape).astype(a.dtype()).contiguous();
  ordered_on_this_stream({&a, &idx});
  const Shape rest(a.shape().begin() + 1, a.shape().end());
  const Shape rest_strides(a.strides().begin() + 1, a.strides().end());
  const int64_t bad = kernel::gpu::put_rows(
      kernel::to_blob(idx), n, static_cast<char*>(a.storage()->data()) + a.byte_offset(),
      a.strides()[0] * a.itemsize(), rest, rest_strides, a.itemsize(),
      static_cast<const char*>(packed.raw_data()));
  if (bad >= 0) {
    const NDArray v = idx.reshape({idx.size()})[bad].to(cpu()).astype(DType::kInt64);
    index_error("index ", v.item<int64_t>(), " is out of bounds for axis 0 with size ", n);
  }
  return true;
}

// Advanced indexing of a GPU array with a host key: the plan on the host, the elements moved
// on the device.
NDArray gpu_getitem(const NDArray& a, const std::vector<IndexItem>& key) {
  std::vector<IndexItem> k = expand_masks(a, key);
  if (!has_arrays(k)) return basic(a, k);
  AdvancedPlan p = plan_advanced(a, k);
  NDArray out(plan_shape(p), a.dtype(), a.device());
  if (out.size() > 0) move_blocks_on_gpu(p, {}, static_cast<char*>(out.raw_data()), true);
  return out.transpose(result_perm(p, out.ndim()));
}

void gpu_setitem(const NDArray& a, const std::vector<IndexItem>& key, const NDArray& value) {
  std::vector<IndexItem> k = expand_masks(a, key);
  if (!has_arrays(k)) return assign_basic(a, k, value);
  AdvancedPlan p = plan_advanced(a, k);
  const NDArray on_device = value.device() == a.device() ? value : value.to(a.device());
  const NDArray packed = values_in_plan_order(p, on_device, a.dtype()).contiguous();
  if (packed.size() == 0) return;
  move_blocks_on_gpu(p, last_writers(p), static_cast<char*>(packed.raw_data()), false);
}
}  // namespace

NDArray getitem(const NDArray& a, const std::vector<IndexItem>& key) {
  if (needs_host(a, key)) {
    if (!a.device().is_gpu()) return getitem(a, host_key(key));
    if (auto taken = gpu_take(a, key)) return *taken;
    return gpu_getitem(a, host_key(key));
  }
  if (key.size() == 1 && key[0].kind == Kind::kArray && key[0].array.dtype() == DType::kBool &&
      a.ndim() >= 1 && key[0].array.shape() == a.shape() && a.itemsize() <= 8)
    return full_mask_select(a, key[0].array);
  std::vector<IndexItem> k = expand_masks(a, key);
  if (!has_arrays(k)) return basic(a, k);
  AdvancedPlan p = plan_advanced(a, k);
  NDArray out(plan_shape(p), a.dtype(), a.device());
  int64_t block = 1;
  for (int i = p.num_advanced; i < p.view.ndim(); ++i) block *= p.view.shape()[i];
  if (out.size() > 0 && blocks_contiguous(p)) {
    copy_blocks<true>(p, static_cast<char*>(out.raw_data()), block * a.itemsize());
  } else if (out.size() > 0) {
    NDArray flat = out.reshape({p.bshape.size(), block});
    for_each_block(
        p, [&](int64_t b, const NDArray& src) { flat[b].reshape(src.shape()).assign(src); });
  }
  return out.transpose(result_perm(p, out.ndim()));
}

void setitem(const NDArray& a, const std::vector<IndexItem>& key, const NDArray& value) {
  a.check_writeable("setitem");
  if (needs_host(a, key)) {
    if (!a.device().is_gpu()) return setitem(a, host_key(key), value);
    if (gpu_put(a, key, value)) return;
    return gpu_setitem(a, host_key(key), value);
  }
  std::vector<IndexItem> k = expand_masks(a, key);
  if (!has_arrays(k)) return assign_basic(a, k, value);
  AdvancedPlan p = plan_advanced(a, k);
  const NDArray vals = values_in_plan_order(p, value, a.dtype());
  int64_t block = 1;
  for (int i = p.num_advanced; i < p.view.ndim(); ++i) block *= p.view.shape()[i];
  if (vals.size() == 0) return;
  if (blocks_contiguous(p)) {
    NDArray packed = vals.contiguous();
    copy_blocks<false>(p, static_cast<char*>(packed.raw_data()), block * a.itemsize());
    return;
  }
  NDArray flat = vals.reshape({p.bshape.size(), block});
  for_each_block(p,
                 [&](int64_t b, const NDArray& dst) { dst.assign(flat[b].reshape(dst.shape())); });
}

std::vector<NDArray> nonzero(const NDArray& a) {
  if (a.ndim() == 0)
    value_error(
        "[nonzero] calling nonzero on 0d arrays is not allowed; use "
        "atleast_1d(a).nonzero() instead");
  std::vector<NDArray> coords =
      mask_coordinates(a.dtype() == DType::kBool ? a : a.astype(DType::kBool));
  if (a.device().is_gpu())
    for (auto& c : coords) c = c.to(a.device());
  return coords;
}

}  // namespace ndx
