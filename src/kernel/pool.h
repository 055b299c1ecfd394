// Pooling kernels written on Highway (kernel/pool.cc, compiled once per SIMD target).
#pragma once
#include <cstdint>

#include "ndx/dtype.h"

namespace ndx::kernel {

// Max pooling's gradient for 2x2 windows of stride 2 without padding (MaxPool2D's default),
// over `planes` planes of h x w data and oh x ow outputs (2 oh <= h, 2 ow <= w). Each output's
// gradient goes to its window's first element equal to the forward's output (row by row), or
// to its first nan when the output is nan; a window where none matches (an output not of this
// data) goes to its first maximum. Input elements outside every window get zero (or keep
// their value when `add`). float32 or float64, every array contiguous and of that dtype.
struct MaxPool2x2Grad {
  const void* dy;  // planes x oh x ow
  const void* x;   // planes x h x w
  const void* y;   // planes x oh x ow, the forward's output
  void* dx;        // planes x h x w
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  bool add = false;  // kAddTo: dx += the gradient
  DType dtype = DType::kFloat32;
};

void max_pool2x2_grad(const MaxPool2x2Grad& a);

// Max pooling's forward for the same windows: y = each window's first maximum, or its first
// nan (what the reference loops' window_argmax picks, sign of zero and nan payload included).
// float32, float64, and int8 / uint8 (the quantized pooling).
struct MaxPool2x2Forward {
  const void* x;  // planes x h x w
  void* y;        // planes x oh x ow, written
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  DType dtype = DType::kFloat32;
};

void max_pool2x2_forward(const MaxPool2x2Forward& a);

}  // namespace ndx::kernel
