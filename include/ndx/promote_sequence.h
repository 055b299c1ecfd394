// NumPy's promotion of several dtypes at once (np.result_type, concatenate, stack), which is
// not a left fold of promote_types: integer promotion is not associative, and NumPy makes
// result_type('u2', 'i2', 'f4') float32 where the fold gives float64. Kept out of ndx/dtype.h,
// which nearly every file includes.
#pragma once
#include <cstddef>

#include "ndx/dtype.h"

namespace ndx {

// The common dtype of types[0, n) (n >= 1, none unknown): with an inexact one among them,
// every dtype is promoted with the first of the highest kind (complex above float) and those
// results promote together; otherwise the pairwise promotion from the left. Matches NumPy
// 2.4 on every sequence of 2 to 4 of its numeric dtypes.
DType promote_sequence(const DType* types, size_t n);

}  // namespace ndx
