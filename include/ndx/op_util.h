// Helpers for writing ops: the seeds' ElemwiseShape / ElemwiseType and friends.
#pragma once
#include <string>
#include <vector>

#include "ndx/op.h"

namespace ndx {

// Fills *dst from src when unknown, else checks they agree. Raises ValueError naming the op.
void assign_shape(const NodeAttrs& attrs, Shape* dst, const Shape& src, const char* what,
                  int index);
void assign_type(const NodeAttrs& attrs, DType* dst, DType src, const char* what, int index);
// The op's user-facing name for messages: "_np_add" -> "add", "_npi_concatenate" -> "concatenate".
const std::string& op_name(const NodeAttrs& attrs);
std::string public_op_name(std::string_view registered);

// All n_in inputs and n_out outputs share one shape.
template <int n_in, int n_out>
bool ElemwiseShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  Shape known = Shape::unknown();
  for (auto* v : {in, out})
    for (const Shape& s : *v)
      if (s.is_known()) {
        known = s;
        break;
      }
  if (!known.is_known()) return false;
  for (int i = 0; i < static_cast<int>(in->size()); ++i)
    assign_shape(attrs, &(*in)[i], known, "input", i);
  for (int i = 0; i < static_cast<int>(out->size()); ++i)
    assign_shape(attrs, &(*out)[i], known, "output", i);
  return true;
}

// All n_in inputs and n_out outputs share one dtype.
template <int n_in, int n_out>
bool ElemwiseType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  DType known = DType::kUnknown;
  for (auto* v : {in, out})
    for (DType t : *v)
      if (t != DType::kUnknown) {
        known = t;
        break;
      }
  if (known == DType::kUnknown) return false;
  for (int i = 0; i < static_cast<int>(in->size()); ++i)
    assign_type(attrs, &(*in)[i], known, "input", i);
  for (int i = 0; i < static_cast<int>(out->size()); ++i)
    assign_type(attrs, &(*out)[i], known, "output", i);
  return true;
}

// Output 0 takes input 0's dtype (backward ops: the gradient has ograd's dtype; ops whose
// other inputs are indices or shapes).
inline bool FirstInputType(const NodeAttrs&, DTypeVector* in, DTypeVector* out) {
  (*out)[0] = (*in)[0];
  return (*in)[0] != DType::kUnknown;
}

// In-place pairs (i, i) for i < n.
inline FInplaceOption InplaceIdentity(int n = 1) {
  return [n](const NodeAttrs&) {
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < n; ++i) pairs.emplace_back(i, i);
    return pairs;
  };
}

}  // namespace ndx
