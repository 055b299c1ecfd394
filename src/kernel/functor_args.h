// Run-time scalars a functor is built from (a clip's bounds, a scale, ...): a functor with a
// constructor taking FunctorArgs gets them, others are default-constructed. Plain data, so
// the functor headers compile under nvcc too.
#pragma once

namespace ndx::kernel {
struct FunctorArgs {
  double a = 0, b = 0, c = 0, d = 0, e = 0;
};
}  // namespace ndx::kernel
