// Shape: int64 dims with inline storage for up to kInlineDims (no heap for common ranks).
// ndim 0 (a scalar) and zero-size dims are ordinary values; "unknown" is a separate state.
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace ndx {

class Shape {
 public:
  static constexpr int kInlineDims = 6;
  static constexpr int kMaxDims = 64;  // NumPy 2's limit

  Shape() = default;  // ndim 0: a scalar
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  explicit Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }
  template <typename It>
  Shape(It first, It last) {
    assign(first, last);
  }
  // ndim dims, each `value`.
  static Shape filled(int ndim, int64_t value);
  static Shape unknown() {
    Shape s;
    s.ndim_ = -1;
    return s;
  }

  // Copies of shapes that fit inline move a fixed 48 bytes (no call, no loop).
  Shape(const Shape& o) { copy_from(o); }
  Shape(Shape&& o) noexcept { *this = std::move(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this == &o) return *this;
    heap_ = std::move(o.heap_);
    std::copy(o.inline_, o.inline_ + kInlineDims, inline_);
    ndim_ = o.ndim_;
    capacity_ = o.capacity_;
    o.ndim_ = 0;
    o.capacity_ = kInlineDims;
    return *this;
  }

  bool is_known() const { return ndim_ >= 0; }
  int ndim() const { return ndim_; }
  // Number of elements (1 for a scalar, 0 when any dim is 0).
  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < ndim_; ++i) n *= data()[i];
    return n;
  }
  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  int64_t& operator[](int i) { return data()[i]; }
  int64_t operator[](int i) const { return data()[i]; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + std::max(ndim_, 0); }
  int64_t back() const { return data()[ndim_ - 1]; }

  void push_back(int64_t v) {
    if (ndim_ < 0) ndim_ = 0;
    reserve(ndim_ + 1);
    data()[ndim_++] = v;
  }
  void resize(int ndim, int64_t fill = 0) {
    reserve(ndim);
    for (int i = std::max(ndim_, 0); i < ndim; ++i) data()[i] = fill;
    ndim_ = ndim;
  }
  std::vector<int64_t> to_vector() const { return std::vector<int64_t>(begin(), end()); }

  bool operator==(const Shape& o) const {
    return ndim_ == o.ndim_ && std::equal(begin(), end(), o.begin());
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;  // "(2, 3)", "()", "(5,)", "<unknown>"

 private:
  void copy_from(const Shape& o) {
    if (!o.heap_ && !heap_) {
      for (int i = 0; i < kInlineDims; ++i) inline_[i] = o.inline_[i];
      ndim_ = o.ndim_;
      return;
    }
    assign(o.begin(), o.end());
    ndim_ = o.ndim_;
  }
  template <typename It>
  void assign(It first, It last) {
    int n = static_cast<int>(std::distance(first, last));
    reserve(n);
    std::copy(first, last, data());
    ndim_ = n;
  }
  void reserve(int n) {
    if (n <= capacity_) return;
    auto grown = std::make_unique<int64_t[]>(n);
    std::copy(data(), data() + std::max(ndim_, 0), grown.get());
    heap_ = std::move(grown);
    capacity_ = n;
  }

  int64_t inline_[kInlineDims] = {};
  std::unique_ptr<int64_t[]> heap_;
  int ndim_ = 0;
  int capacity_ = kInlineDims;
};

std::ostream& operator<<(std::ostream& os, const Shape& s);

// Row-major strides in elements.
Shape contiguous_strides(const Shape& shape);
// The number of elements of `shape` with `itemsize`-byte elements, checked: ValueError (NumPy's
// "array is too big") when the element count or the byte size would pass 2**62, so no size
// computation downstream can overflow. Negative dims are a ValueError too.
int64_t checked_size(const Shape& shape, int64_t itemsize, const char* op);
// NumPy broadcasting of two shapes; throws ValueError naming `op`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Normalizes a possibly negative axis against ndim; throws AxisError naming `op`.
int normalize_axis(int64_t axis, int ndim, const char* op);

}  // namespace ndx
