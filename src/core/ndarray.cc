#include "ndx/ndarray.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "gpu/runtime.h"
#include "kernel/blob.h"
#include "kernel/cast.h"
#include "kernel/iterator.h"

namespace ndx {

Shape broadcast_strides(const Shape& src, const Shape& src_strides, const Shape& out) {
  Shape st = Shape::filled(out.ndim(), 0);
  int lead = out.ndim() - src.ndim();
  for (int i = 0; i < src.ndim(); ++i) st[lead + i] = src[i] == 1 ? 0 : src_strides[i];
  return st;
}

namespace {
void check_shape_valid(const Shape& shape, const char* op) {
  if (!shape.is_known()) value_error("[", op, "] shape is unknown");
  if (shape.ndim() > Shape::kMaxDims)
    value_error("[", op, "] at most ", Shape::kMaxDims, " dimensions are supported, got ",
                shape.ndim());
  for (int64_t d : shape)
    if (d < 0)
      value_error("[", op, "] negative dimensions are not allowed; got shape ", shape.str());
}
}  // namespace

NDArray::NDArray(Shape shape, DType dtype, Device device) {
  check_shape_valid(shape, "NDArray");
  const int64_t n = checked_size(shape, dtype_size(dtype), "NDArray");  // validates the dtype too
  storage_ = Storage::allocate(static_cast<std::size_t>(n * dtype_size(dtype)), device);
  strides_ = contiguous_strides(shape);
  shape_ = std::move(shape);
  dtype_ = dtype;
  flags_ = kOwnsData;
}

NDArray::NDArray(std::shared_ptr<Storage> storage, int64_t byte_offset, Shape shape, Shape strides,
                 DType dtype)
    : storage_(std::move(storage)),
      byte_offset_(byte_offset),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      dtype_(dtype) {}

NDArray NDArray::view(int64_t byte_offset, Shape shape, Shape strides, DType dtype) const {
  NDArray v(storage_, byte_offset, std::move(shape), std::move(strides), dtype);
  if (flags_ & kReadOnly)
    v.flags_ = kReadOnly | (flags_ & (kOwnsData | kWriteLocked) ? kWriteLocked : 0);
  return v;
}

void NDArray::adopt_layout(const NDArray& other) {
  if (!shares_storage_with(other))
    value_error("[adopt_layout] the new layout must view the same memory");
  byte_offset_ = other.byte_offset_;
  shape_ = other.shape_;
  strides_ = other.strides_;
  dtype_ = other.dtype_;
}

void NDArray::set_writeable(bool on, bool lock) {
  if (on && (flags_ & kWriteLocked))
    value_error(
        "[setflags] cannot set WRITEABLE flag to True of this array: the memory it views is "
        "read-only");
  const uint8_t keep = flags_ & (kOwnsData | kWriteLocked);
  flags_ = on ? (flags_ & kOwnsData)
              : static_cast<uint8_t>(kReadOnly | keep | (lock ? kWriteLocked : 0));
}

void NDArray::raise_read_only(const char* op, const char* what) {
  value_error("[", op, "] ", what, " is read-only");
}

NDArray NDArray::scalar(double value, DType dtype, Device device) {
  NDArray a(Shape{}, dtype, device);
  a.fill(value);
  return a;
}

void NDArray::check_dtype(DType t) const {
  if (t != dtype_) type_error("[NDArray.data] array has dtype ", dtype_, ", accessed as ", t);
}

bool NDArray::is_contiguous() const {
  int64_t expect = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (shape_[i] == 0) return true;
    if (strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

namespace {

// reshape's target shape: checked against the size, its one -1 inferred.
Shape reshape_target(const Shape& new_shape, int64_t size) {
  Shape target = new_shape;
  Shape probe = new_shape;  // the -1 as 1: no product below may overflow
  for (int i = 0; i < probe.ndim(); ++i)
    if (probe[i] == -1) probe[i] = 1;
  checked_size(probe, 1, "reshape");
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < target.ndim(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) value_error("[reshape] can only specify one unknown dimension");
      infer = i;
    } else if (target[i] < 0) {
      value_error("[reshape] invalid dimension ", target[i], " in shape ", new_shape.str());
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || size % known != 0)
      value_error("[reshape] cannot reshape array of size ", size, " into shape ", new_shape.str());
    target[infer] = size / known;
  }
  if (target.size() != size)
    value_error("[reshape] cannot reshape array of size ", size, " into shape ", new_shape.str());
  return target;
}

// The strides of a view of (shape, strides) in shape `target` (same size > 0), or nullopt when
// the layout needs a copy: each group of old axes that merges into or splits from a group of
// new axes must be C-contiguous within itself (NumPy's no-copy reshape rule). Axes of length
// 1 carry no layout and are skipped.
std::optional<Shape> view_strides(const Shape& shape, const Shape& strides, const Shape& target) {
  std::vector<int64_t> dims, steps;
  for (int i = 0; i < shape.ndim(); ++i)
    if (shape[i] != 1) dims.push_back(shape[i]), steps.push_back(strides[i]);
  Shape out = contiguous_strides(target);
  const int old_nd = static_cast<int>(dims.size()), new_nd = target.ndim();
  int oi = 0, ni = 0;
  while (oi < old_nd && ni < new_nd) {
    if (target[ni] == 1) {  // any stride serves a length-1 axis
      ++ni;
      continue;
    }
    int oj = oi + 1, nj = ni + 1;
    int64_t old_len = dims[oi], new_len = target[ni];
    while (old_len != new_len) {
      if (old_len < new_len)
        old_len *= dims[oj++];
      else
        new_len *= target[nj++];
    }
    for (int k = oi; k + 1 < oj; ++k)
      if (steps[k] != steps[k + 1] * dims[k + 1]) return std::nullopt;
    int64_t step = steps[oj - 1];  // the group's innermost stride, then outward
    for (int k = nj - 1; k >= ni; --k) {
      out[k] = step;
      step *= target[k];
    }
    oi = oj, ni = nj;
  }
  return out;
}

}  // namespace

NDArray NDArray::reshape(const Shape& new_shape) const {
  const Shape target = reshape_target(new_shape, size());
  NDArray src = contiguous();
  return src.view(src.byte_offset_, target, contiguous_strides(target), dtype_);
}

NDArray NDArray::reshape_view(const Shape& new_shape) const {
  const Shape target = reshape_target(new_shape, size());
  if (size() > 0 && !is_contiguous())
    if (auto st = view_strides(shape_, strides_, target))
      return view(byte_offset_, target, *st, dtype_);
  return reshape(target);
}

NDArray NDArray::transpose(const std::vector<int64_t>& axes) const {
  int n = ndim();
  if (axes.empty()) {  // .T: the dims reversed
    Shape shape = shape_, strides = strides_;
    for (int i = 0; i < n; ++i) shape[i] = shape_[n - 1 - i], strides[i] = strides_[n - 1 - i];
    return view(byte_offset_, std::move(shape), std::move(strides), dtype_);
  }
  std::vector<int> perm(n);
  if (axes.empty()) {
    for (int i = 0; i < n; ++i) perm[i] = n - 1 - i;
  } else {
    if (static_cast<int>(axes.size()) != n)
      value_error("[transpose] axes don't match array: expected ", n, " axes, got ", axes.size());
    std::vector<bool> seen(n, false);
    for (int i = 0; i < n; ++i) {
      perm[i] = normalize_axis(axes[i], n, "transpose");
      if (seen[perm[i]]) value_error("[transpose] repeated axis in transpose: ", axes[i]);
      seen[perm[i]] = true;
    }
  }
  Shape shape = Shape::filled(n, 0), strides = Shape::filled(n, 0);
  for (int i = 0; i < n; ++i) shape[i] = shape_[perm[i]], strides[i] = strides_[perm[i]];
  return view(byte_offset_, shape, strides, dtype_);
}

NDArray NDArray::swapaxes(int64_t axis1, int64_t axis2) const {
  int a = normalize_axis(axis1, ndim(), "swapaxes"), b = normalize_axis(axis2, ndim(), "swapaxes");
  std::vector<int64_t> axes(ndim());
  std::iota(axes.begin(), axes.end(), 0);
  std::swap(axes[a], axes[b]);
  return transpose(axes);
}

NDArray NDArray::slice(int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
                       int64_t step) const {
  int ax = normalize_axis(axis, ndim(), "slice");
  if (step == 0) value_error("[slice] slice step cannot be zero");
  step = std::max(step, -std::numeric_limits<int64_t>::max());  // as Python: -step must exist
  const int64_t n = shape_[ax];
  // Python's slice.indices().
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  int64_t b = clamp(start, step > 0 ? 0 : n - 1);
  int64_t e = clamp(stop, step > 0 ? n : -1);
  // Written so that no step, however large, overflows: (distance - 1) / |step| + 1.
  int64_t len =
      step > 0 ? (e > b ? (e - b - 1) / step + 1 : 0) : (b > e ? (b - e - 1) / (-step) + 1 : 0);
  Shape shape = shape_, strides = strides_;
  shape[ax] = len;
  // With two or more elements |step| < n, so the product fits; otherwise the stride is unused.
  strides[ax] = len > 1 ? strides_[ax] * step : strides_[ax];
  int64_t offset = len > 0 ? byte_offset_ + b * strides_[ax] * itemsize() : byte_offset_;
  return view(offset, shape, strides, dtype_);
}

NDArray NDArray::operator[](int64_t index) const {
  if (ndim() == 0) index_error("[getitem] too many indices for array: array is 0-dimensional");
  int64_t n = shape_[0];
  if (index < -n || index >= n)
    index_error("[getitem] index ", index, " is out of bounds for axis 0 with size ", n);
  if (index < 0) index += n;
  Shape shape(shape_.begin() + 1, shape_.end()), strides(strides_.begin() + 1, strides_.end());
  return view(byte_offset_ + index * strides_[0] * itemsize(), shape, strides, dtype_);
}

NDArray NDArray::broadcast_to(const Shape& target) const {
  if (target.ndim() < ndim())
    value_error("[broadcast_to] input operand has more dimensions than allowed by the axis ",
                "remapping: cannot broadcast ", shape_.str(), " to ", target.str());
  for (int64_t d : target)
    if (d < 0) value_error("[broadcast_to] all elements of broadcast shape must be non-negative");
  checked_size(target, itemsize(), "broadcast_to");
  int lead = target.ndim() - ndim();
  for (int i = 0; i < ndim(); ++i)
    if (shape_[i] != 1 && shape_[i] != target[lead + i])
      value_error("[broadcast_to] operands could not be broadcast together with remapped shapes: ",
                  "cannot broadcast ", shape_.str(), " to ", target.str());
  return view(byte_offset_, target, broadcast_strides(shape_, strides_, target), dtype_);
}

NDArray NDArray::expand_dims(int64_t axis) const {
  int ax = normalize_axis(axis, ndim() + 1, "expand_dims");
  Shape shape, strides;
  for (int i = 0, j = 0; i <= ndim(); ++i) {
    if (i == ax) {
      shape.push_back(1);
      strides.push_back(0);
    } else {
      shape.push_back(shape_[j]);
      strides.push_back(strides_[j]);
      ++j;
    }
  }
  return view(byte_offset_, shape, strides, dtype_);
}

NDArray NDArray::copy() const {
  NDArray out(shape_, dtype_, device());
  copy_cast(*this, out);
  return out;
}

NDArray NDArray::contiguous() const { return is_contiguous() ? *this : copy(); }

NDArray NDArray::astype(DType dtype) const {
  NDArray out(shape_, dtype, device());
  copy_cast(*this, out);
  return out;
}

NDArray NDArray::to(Device device) const {
  if (device == this->device()) return *this;
  NDArray out(shape_, dtype_, device);  // raises for devices this build lacks
  copy_cast(*this, out);
  return out;
}

void NDArray::assign(const NDArray& src) const {
  if (defined()) check_writeable("setitem");
  copy_cast(src, *this);
}

void NDArray::fill(double value) const {
  if (!defined()) value_error("[fill] undefined array");
  check_writeable("fill");
  if (device().is_cpu()) cuda::wait_for_host_write(raw_data());  // pinned: copies out first
  if (device().is_gpu()) cuda::use_on_this_stream(storage()->data(), device().id);
  kernel::fill(kernel::to_blob(*this), value);
}

namespace {
// src (any device) -> dst on another: bytes move between contiguous buffers of dst's dtype;
// broadcasting, casts and strides are done on whichever side has them.
void copy_across_devices(const NDArray& src, const NDArray& dst) {
  NDArray b = src.broadcast_to(dst.shape());
  if (dst.size() == 0) return;
  const bool dense = b.shape() == dst.shape() && b.is_contiguous() && b.dtype() == dst.dtype();
  NDArray packed = dense ? b : NDArray(dst.shape(), dst.dtype(), src.device());
  if (!dense) copy_cast(b, packed);
  NDArray target = dst.is_contiguous() ? dst : NDArray(dst.shape(), dst.dtype(), dst.device());
  const auto bytes = static_cast<std::size_t>(dst.nbytes());
  if (dst.device().is_gpu() && src.device().is_gpu()) {
    cuda::check_device(src.device(), "copy");
    value_error("[copy] copies between two GPUs (", src.device().str(), " to ", dst.device().str(),
                ") are not supported yet; go through cpu");
  } else if (dst.device().is_gpu()) {
    cuda::copy_to_device(target.raw_data(), packed.raw_data(), bytes, dst.device().id);
  } else {
    cuda::copy_to_host(target.raw_data(), packed.raw_data(), bytes, src.device().id);
  }
  if (target.raw_data() != dst.raw_data()) copy_cast(target, dst);
}
}  // namespace

void copy_cast(const NDArray& src, const NDArray& dst) {
  if (!src.defined() || !dst.defined()) value_error("[copy] undefined array");
  dst.check_writeable("copyto");
  for (const NDArray* a : {&src, &dst})  // after another thread's stream's work on them
    if (a->device().is_gpu()) cuda::use_on_this_stream(a->storage()->data(), a->device().id);
  if (src.device() != dst.device() && !(src.device().is_cpu() && dst.device().is_cpu()))
    return copy_across_devices(src, dst);
  NDArray b = src.broadcast_to(dst.shape());
  if (dst.size() == 0) return;
  // Overlapping source and destination (a[1:] = a[:-1]) must read before writing.
  if (src.shares_storage_with(dst) &&
      !(src.byte_offset() == dst.byte_offset() && src.strides() == dst.strides() &&
        src.dtype() == dst.dtype())) {
    b = b.copy();
  }
  if (dst.device().is_cpu()) cuda::wait_for_host_write(dst.raw_data());  // pinned: copies first
  kernel::copy(kernel::to_blob(b), kernel::to_blob(dst));
}

std::ostream& operator<<(std::ostream& os, const NDArray& a) { return os << a.str(); }

}  // namespace ndx
