// The one N-d iterator of ndx: walks a shape with N operands, each with its own element strides
// (0 for a broadcast dim), after dropping size-1 dims and merging dims that are contiguous for
// every operand. The body gets runs of the innermost dim so it can vectorize when strides are 1.
#pragma once
#include <array>
#include <cstdint>

#include "ndx/shape.h"

namespace ndx {

template <int N>
struct StridedRun {
  int64_t length;                 // elements in this run
  std::array<int64_t, N> offset;  // element offset of the run's start, per operand
  std::array<int64_t, N> stride;  // element stride inside the run, per operand
};

// Strides of `src_strides` (for an operand of shape `src`) as seen against `out`, broadcasting
// size-1 and missing leading dims to stride 0.
Shape broadcast_strides(const Shape& src, const Shape& src_strides, const Shape& out);

template <int N, typename Body>
void for_each_run(const Shape& shape, const std::array<const Shape*, N>& strides, Body&& body) {
  if (shape.size() == 0) return;
  int64_t dims[Shape::kMaxDims];
  int64_t st[N][Shape::kMaxDims];
  int nd = 0;
  for (int i = 0; i < shape.ndim(); ++i) {
    if (shape[i] == 1) continue;
    bool merge = nd > 0;
    for (int k = 0; k < N && merge; ++k) merge = st[k][nd - 1] == (*strides[k])[i] * shape[i];
    if (merge) {
      dims[nd - 1] *= shape[i];
      for (int k = 0; k < N; ++k) st[k][nd - 1] = (*strides[k])[i];
      continue;
    }
    dims[nd] = shape[i];
    for (int k = 0; k < N; ++k) st[k][nd] = (*strides[k])[i];
    ++nd;
  }
  StridedRun<N> run;
  if (nd == 0) {  // a single element
    run.length = 1;
    run.offset.fill(0);
    run.stride.fill(0);
    body(run);
    return;
  }
  const int inner = nd - 1;
  run.length = dims[inner];
  for (int k = 0; k < N; ++k) run.stride[k] = st[k][inner], run.offset[k] = 0;
  int64_t counter[Shape::kMaxDims] = {};
  while (true) {
    body(run);
    int d = inner - 1;
    for (; d >= 0; --d) {
      for (int k = 0; k < N; ++k) run.offset[k] += st[k][d];
      if (++counter[d] < dims[d]) break;
      for (int k = 0; k < N; ++k) run.offset[k] -= st[k][d] * dims[d];
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace ndx
