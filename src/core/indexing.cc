#include "ndx/indexing.h"

#include <cstring>
#include <numeric>

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
  return NDArray(a.storage(), a.byte_offset() + index * a.strides()[axis] * a.itemsize(), shape,
                 strides, a.dtype());
}

// Replaces every boolean array by the integer arrays of its nonzero coordinates (one per dim
// it spans) and checks the item types; the result holds no bool arrays.
std::vector<IndexItem> expand_masks(const NDArray& a, const std::vector<IndexItem>& key) {
  std::vector<IndexItem> out;
  int consumed = 0, ellipses = 0;
  for (const auto& it : key) {
    if (it.kind == Kind::kEllipsis) ++ellipses;
    if (it.kind == Kind::kInt || it.kind == Kind::kSlice) ++consumed;
    if (it.kind == Kind::kArray)
      consumed += it.array.dtype() == DType::kBool ? std::max(it.array.ndim(), 1) : 1;
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
          if (it.array.ndim() == 0) not_implemented("[getitem] 0-d boolean indices");
          const NDArray& m = it.array;
          for (int d = 0; d < m.ndim(); ++d)
            if (m.shape()[d] != a.shape()[axis + d])
              index_error("boolean index did not match indexed array along axis ", axis + d,
                          "; size of axis is ", a.shape()[axis + d],
                          " but size of corresponding boolean axis is ", m.shape()[d]);
          // nonzero(): one int64 coordinate array per mask dim.
          auto bits = m.to_vector<bool>();
          int64_t count = std::count(bits.begin(), bits.end(), true);
          std::vector<std::vector<int64_t>> coords(m.ndim(), std::vector<int64_t>(count));
          Shape cs = contiguous_strides(m.shape());
          int64_t k = 0;
          for (int64_t flat = 0; flat < static_cast<int64_t>(bits.size()); ++flat) {
            if (!bits[flat]) continue;
            for (int d = 0; d < m.ndim(); ++d) coords[d][k] = (flat / cs[d]) % m.shape()[d];
            ++k;
          }
          for (int d = 0; d < m.ndim(); ++d)
            out.push_back(IndexItem::array_index(NDArray::from_vector(coords[d], Shape{count})));
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
  std::vector<std::vector<int64_t>> indices;  // per advanced axis, broadcast to `bshape`
  Shape bshape;
  int insert_at = 0;  // position of the broadcast dims in the result
};

AdvancedPlan plan_advanced(const NDArray& a, const std::vector<IndexItem>& key) {
  int consumed = 0;
  for (const auto& it : key) consumed += it.kind != Kind::kNewAxis && it.kind != Kind::kEllipsis;
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
        adv_axes.push_back(axis++);
        adv_arrays.push_back(NDArray::scalar(static_cast<double>(it.index), DType::kInt64));
        adv_item_pos.push_back(static_cast<int>(k));
        break;
      case Kind::kArray:
        adv_axes.push_back(axis++);
        adv_arrays.push_back(it.array);
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
    auto idx = adv_arrays[k].broadcast_to(b).to_vector<int64_t>();
    for (int64_t& i : idx) {
      if (i < -n || i >= n)
        index_error("index ", i, " is out of bounds for axis ", ax, " with size ", n);
      if (i < 0) i += n;
    }
    p.indices.push_back(std::move(idx));
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
    f(b, NDArray(v.storage(), offset, rest_shape, rest_strides, v.dtype()));
  }
}

}  // namespace

namespace {
// Advanced indexing of GPU arrays runs on host copies for now (correct, not fast).
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
}  // namespace

NDArray getitem(const NDArray& a, const std::vector<IndexItem>& key) {
  if (needs_host(a, key)) return getitem(a.to(cpu()), host_key(key)).to(a.device());
  std::vector<IndexItem> k = expand_masks(a, key);
  if (!has_arrays(k)) return basic(a, k);
  AdvancedPlan p = plan_advanced(a, k);
  Shape out_shape = p.bshape;
  for (int i = p.num_advanced; i < p.view.ndim(); ++i) out_shape.push_back(p.view.shape()[i]);
  NDArray out(out_shape, a.dtype(), a.device());
  int64_t block = 1;
  for (int i = p.num_advanced; i < p.view.ndim(); ++i) block *= p.view.shape()[i];
  if (out.size() > 0) {
    NDArray flat = out.reshape({p.bshape.size(), block});
    for_each_block(
        p, [&](int64_t b, const NDArray& src) { flat[b].reshape(src.shape()).assign(src); });
  }
  return out.transpose(result_perm(p, out.ndim()));
}

void setitem(const NDArray& a, const std::vector<IndexItem>& key, const NDArray& value) {
  if (needs_host(a, key)) {
    NDArray host = a.to(cpu());
    if (host.shares_storage_with(a)) host = a.copy();  // a itself is on the host
    setitem(host, host_key(key), value.to(cpu()));
    a.assign(host);
    return;
  }
  std::vector<IndexItem> k = expand_masks(a, key);
  if (!has_arrays(k)) {
    basic(a, k).assign(value);
    return;
  }
  AdvancedPlan p = plan_advanced(a, k);
  Shape numpy_shape;  // the indexed shape in NumPy's order
  Shape ordered = p.bshape;
  for (int i = p.num_advanced; i < p.view.ndim(); ++i) ordered.push_back(p.view.shape()[i]);
  auto perm = result_perm(p, ordered.ndim());
  for (int64_t ax : perm) numpy_shape.push_back(ordered[static_cast<int>(ax)]);
  // Value in NumPy's order, broadcast, then back to (bshape + rest) order.
  NDArray vals = value.broadcast_to(numpy_shape);
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  vals = vals.transpose(inverse).astype(a.dtype());  // a copy: reads finish before any write
  int64_t block = 1;
  for (int i = p.num_advanced; i < p.view.ndim(); ++i) block *= p.view.shape()[i];
  if (vals.size() == 0) return;
  NDArray flat = vals.reshape({p.bshape.size(), block});
  for_each_block(p,
                 [&](int64_t b, const NDArray& dst) { dst.assign(flat[b].reshape(dst.shape())); });
}

}  // namespace ndx
