// NDArray: shared storage + byte offset + shape + strides (in elements) + dtype + device.
// reshape of contiguous data, transpose, basic slicing and broadcast_to are views.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ndx/device.h"
#include "ndx/dtype.h"
#include "ndx/shape.h"
#include "ndx/storage.h"

namespace ndx {

namespace autograd {
struct Entry;
}

class NDArray {
 public:
  NDArray() = default;  // an undefined handle
  // Uninitialized array.
  NDArray(Shape shape, DType dtype = DType::kFloat32, Device device = cpu());
  // A view onto existing storage.
  NDArray(std::shared_ptr<Storage> storage, int64_t byte_offset, Shape shape, Shape strides,
          DType dtype);
  // A 0-d array holding `value`, cast to dtype.
  static NDArray scalar(double value, DType dtype = DType::kFloat32, Device device = cpu());
  // An array with a copy of `values` in the given shape (size must match).
  template <typename T>
  static NDArray from_vector(const std::vector<T>& values, Shape shape);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }  // in elements; may be 0 or negative
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : cpu(); }
  int ndim() const { return shape_.ndim(); }
  int64_t size() const { return shape_.size(); }
  int64_t itemsize() const { return dtype_size(dtype_); }
  int64_t nbytes() const { return size() * itemsize(); }
  int64_t byte_offset() const { return byte_offset_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  void* raw_data() const { return static_cast<char*>(storage_->data()) + byte_offset_; }
  template <typename T>
  T* data() const {
    check_dtype(dtype_of<T>);
    return static_cast<T*>(raw_data());
  }
  bool is_contiguous() const;
  bool shares_storage_with(const NDArray& other) const { return storage_ == other.storage_; }

  // ---- NumPy's WRITEABLE and OWNDATA flags ----
  // A read-only array refuses writes (setitem, out=, in-place operators, fill) with
  // ValueError. Views of a read-only array are read-only; they cannot be made writeable when
  // the memory's owner is read-only (NumPy's rule: a view of a read-only owner, or of a view
  // that is locked so), while a read-only view of a writeable owner (broadcast_to, diagonal,
  // setflags on a view) can. An array owns its data when it allocated it (not a view, not
  // memory another library wrapped).
  bool writeable() const { return !(flags_ & kReadOnly); }
  bool write_locked() const { return flags_ & kWriteLocked; }
  bool owns_data() const { return flags_ & kOwnsData; }
  // Clears (or sets) the flag; making a write-locked array writeable raises ValueError.
  void set_writeable(bool on, bool lock = false);
  // Raises ValueError "[op] <what> is read-only" unless writeable().
  void check_writeable(const char* op, const char* what = "assignment destination") const {
    if (flags_ & kReadOnly) raise_read_only(op, what);
  }
  // A view of this array's memory (it owns nothing): read-only when this array is, locked when
  // this array owns the memory or is locked.
  NDArray view(int64_t byte_offset, Shape shape, Shape strides, DType dtype) const;
  // This array takes the layout (offset, shape, strides, dtype) of `other`, a view of the same
  // memory, and keeps its own flags: NumPy's `a.shape = ...` and `a.dtype = ...` change the
  // array itself rather than make a view of it.
  void adopt_layout(const NDArray& other);

  // ---- views (no copy) ----
  // -1 in one position is inferred. A view when contiguous, else a contiguous copy (so the
  // result is always contiguous, which kernels reading raw_data() rely on).
  NDArray reshape(const Shape& new_shape) const;
  // NumPy's ndarray.reshape: a view whenever the strides allow one (a transposed or sliced
  // array often can be), else a contiguous copy. The view need not be contiguous.
  NDArray reshape_view(const Shape& new_shape) const;
  // Empty axes reverses them, as NumPy does.
  NDArray transpose(const std::vector<int64_t>& axes = {}) const;
  NDArray swapaxes(int64_t axis1, int64_t axis2) const;
  // Python slice semantics along one axis (negative and out-of-range bounds as in Python).
  NDArray slice(int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
                int64_t step = 1) const;
  // a[i] along axis 0, dropping that axis (negative i counts from the end).
  NDArray operator[](int64_t index) const;
  NDArray broadcast_to(const Shape& target) const;
  NDArray expand_dims(int64_t axis) const;

  // ---- copies ----
  NDArray copy() const;        // a contiguous copy
  NDArray contiguous() const;  // this, if already contiguous
  NDArray astype(DType dtype) const;
  NDArray to(Device device) const;
  // Writes `src` into this (a view is fine), broadcasting and casting as NumPy's a[...] = src.
  // (const: they write the elements, not the handle, as writing through a shared pointer.)
  void assign(const NDArray& src) const;
  void fill(double value) const;

  // ---- element access ----
  template <typename T>
  T item() const;  // the single element of a size-1 array, cast to T
  template <typename T>
  T at(const std::vector<int64_t>& index) const;
  template <typename T>
  std::vector<T> to_vector() const;  // row-major order, cast to T

  // Autograd's record of this array (null when not part of a recorded computation). Copies of
  // the handle share it; views and copies made by the methods above start without one.
  const std::shared_ptr<autograd::Entry>& autograd_entry() const { return autograd_; }
  void set_autograd_entry(std::shared_ptr<autograd::Entry> e) { autograd_ = std::move(e); }

  std::string str() const;   // like NumPy's str(a): [[1. 2.]\n [3. 4.]]
  std::string repr() const;  // like NumPy's repr(a): array([...], dtype=float32)

 private:
  void check_dtype(DType t) const;
  [[noreturn]] static void raise_read_only(const char* op, const char* what);
  double element_as_double(int64_t flat_offset_elems) const;
  static constexpr uint8_t kReadOnly = 1, kWriteLocked = 2, kOwnsData = 4;
  std::shared_ptr<Storage> storage_;
  int64_t byte_offset_ = 0;
  Shape shape_;
  Shape strides_;
  DType dtype_ = DType::kFloat32;
  uint8_t flags_ = 0;  // kReadOnly | kWriteLocked | kOwnsData
  std::shared_ptr<autograd::Entry> autograd_;
};

std::ostream& operator<<(std::ostream& os, const NDArray& a);

// Copies src into dst elementwise with casting and broadcasting of src to dst's shape;
// both may be strided views on the same device.
void copy_cast(const NDArray& src, const NDArray& dst);

template <typename T>
NDArray NDArray::from_vector(const std::vector<T>& values, Shape shape) {
  if (static_cast<int64_t>(values.size()) != shape.size())
    value_error("[NDArray.from_vector] got ", values.size(), " values for shape ", shape.str(),
                " of size ", shape.size());
  NDArray src(shape, dtype_of<T>);
  std::copy(values.begin(), values.end(), src.data<T>());
  return src;
}

template <typename T>
std::vector<T> NDArray::to_vector() const {
  // astype always copies into a fresh contiguous array (on the host for a GPU array)
  NDArray c = (device().is_gpu() ? to(cpu()) : *this).astype(dtype_of<T>);
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.size());
}

template <typename T>
T NDArray::item() const {
  if (size() != 1)
    value_error("[item] can only convert an array of size 1 to a scalar; got shape ", shape_.str());
  return to_vector<T>()[0];
}

template <typename T>
T NDArray::at(const std::vector<int64_t>& index) const {
  if (static_cast<int>(index.size()) != ndim())
    index_error("[at] expected ", ndim(), " indices, got ", index.size());
  NDArray v = *this;
  for (int64_t i : index) v = v[i];
  return v.item<T>();
}

}  // namespace ndx
