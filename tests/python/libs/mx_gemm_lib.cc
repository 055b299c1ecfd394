// An operator library written against Apache MXNet 2.0's lib_api.h (as MXNet documents it),
// built unchanged against ndx's include/mxnet/lib_api.h:
//   mx_gemm   C = A @ B for 2-D float32/float64 matrices, with backward (dA = dC B^T,
//             dB = A^T dC, transposes in OpResource::alloc_cpu workspace)
//   mx_scale  y = x * scalar + offset, scalar and offset parsed from the attributes; no
//             inferType (every output takes the input's dtype)
//   mx_split  (x, bias) -> (max(x + bias, 0), min(x + bias, 0)): two outputs, a storage-type
//             function that keeps them dense
//   mx_sparse_out   an op whose inferSType asks for a csr output (ndx refuses it)
//   mx_add_to  (x, y) -> x + y, written into x as well (setMutateInputs: input 0)
#include <cstdlib>
#include <string>

#include "lib_api.h"

using namespace mxnet::ext;

namespace {

template <typename T>
void matmul(const T* a, const T* b, T* c, int64_t n, int64_t k, int64_t m) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      T s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * m + j];
      c[i * m + j] = s;
    }
}

// at (cols x rows) = a (rows x cols) transposed
template <typename T>
void transpose(const T* a, T* at, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) at[j * rows + i] = a[i * cols + j];
}

template <typename T>
MXReturnValue gemm_forward_t(std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs) {
  MXTensor& a = inputs->at(0);
  MXTensor& b = inputs->at(1);
  matmul(a.data<T>(), b.data<T>(), outputs->at(0).data<T>(), a.shape[0], a.shape[1], b.shape[1]);
  return MX_SUCCESS;
}

template <typename T>
MXReturnValue gemm_backward_t(std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                              const OpResource& res) {
  // inputs: dC, A, B, C; outputs: dA, dB
  MXTensor& dc = inputs->at(0);
  MXTensor& a = inputs->at(1);
  MXTensor& b = inputs->at(2);
  int64_t n = a.shape[0], k = a.shape[1], m = b.shape[1];
  T* work = static_cast<T*>(res.alloc_cpu(static_cast<int>((k * n + m * k) * sizeof(T))));
  T* at = work;          // k x n
  T* bt = work + k * n;  // m x k
  transpose(a.data<T>(), at, n, k);
  transpose(b.data<T>(), bt, k, m);
  matmul(dc.data<T>(), bt, outputs->at(0).data<T>(), n, m, k);
  matmul(at, dc.data<T>(), outputs->at(1).data<T>(), k, n, m);
  return MX_SUCCESS;
}

MXReturnValue gemm_forward(const std::unordered_map<std::string, std::string>& attrs,
                           std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                           const OpResource& res) {
  if (inputs->at(0).dtype == kFloat32) return gemm_forward_t<float>(inputs, outputs);
  if (inputs->at(0).dtype == kFloat64) return gemm_forward_t<double>(inputs, outputs);
  MX_ERROR_MSG << "mx_gemm: unsupported dtype " << inputs->at(0).dtype;
  return MX_FAIL;
}

MXReturnValue gemm_backward(const std::unordered_map<std::string, std::string>& attrs,
                            std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                            const OpResource& res) {
  if (inputs->at(0).dtype == kFloat32) return gemm_backward_t<float>(inputs, outputs, res);
  if (inputs->at(0).dtype == kFloat64) return gemm_backward_t<double>(inputs, outputs, res);
  MX_ERROR_MSG << "mx_gemm: unsupported dtype " << inputs->at(0).dtype;
  return MX_FAIL;
}

MXReturnValue gemm_parse(const std::unordered_map<std::string, std::string>& attrs, int* num_in,
                         int* num_out) {
  *num_in = 2;
  *num_out = 1;
  return MX_SUCCESS;
}

MXReturnValue gemm_type(const std::unordered_map<std::string, std::string>& attrs,
                        std::vector<int>* in_types, std::vector<int>* out_types) {
  for (size_t i = 0; i < in_types->size(); ++i)
    if (in_types->at(i) != kFloat32 && in_types->at(i) != kFloat64) {
      MX_ERROR_MSG << "mx_gemm: input " << i << " must be float32 or float64 (MXNet dtype "
                   << kFloat32 << " or " << kFloat64 << "), got dtype " << in_types->at(i);
      return MX_FAIL;
    }
  if (in_types->at(0) != in_types->at(1)) {
    MX_ERROR_MSG << "mx_gemm: both inputs must have the same dtype";
    return MX_FAIL;
  }
  out_types->at(0) = in_types->at(0);
  return MX_SUCCESS;
}

MXReturnValue gemm_shape(const std::unordered_map<std::string, std::string>& attrs,
                         std::vector<std::vector<unsigned int> >* in_shapes,
                         std::vector<std::vector<unsigned int> >* out_shapes) {
  const std::vector<unsigned int>& a = in_shapes->at(0);
  const std::vector<unsigned int>& b = in_shapes->at(1);
  if (a.size() != 2 || b.size() != 2) {
    MX_ERROR_MSG << "mx_gemm: expected 2-D matrices, got " << a.size() << "-D and " << b.size()
                 << "-D inputs";
    return MX_FAIL;
  }
  if (a[1] != b[0]) {
    MX_ERROR_MSG << "mx_gemm: inner dimensions differ: " << a[1] << " vs " << b[0];
    return MX_FAIL;
  }
  out_shapes->at(0) = {a[0], b[1]};
  return MX_SUCCESS;
}

// ---- mx_scale: y = x * scalar + offset ----

bool read_float(const std::unordered_map<std::string, std::string>& attrs, const char* key,
                float fallback, float* value) {
  auto it = attrs.find(key);
  if (it == attrs.end()) {
    *value = fallback;
    return true;
  }
  char* end = nullptr;
  *value = std::strtof(it->second.c_str(), &end);
  return end && *end == '\0' && !it->second.empty();
}

MXReturnValue scale_parse(const std::unordered_map<std::string, std::string>& attrs, int* num_in,
                          int* num_out) {
  float v;
  if (attrs.count("scalar") == 0) {
    MX_ERROR_MSG << "mx_scale: the attribute 'scalar' is required";
    return MX_FAIL;
  }
  if (!read_float(attrs, "scalar", 1.f, &v) || !read_float(attrs, "offset", 0.f, &v)) {
    MX_ERROR_MSG << "mx_scale: 'scalar' and 'offset' must be numbers";
    return MX_FAIL;
  }
  *num_in = 1;
  *num_out = 1;
  return MX_SUCCESS;
}

MXReturnValue same_shape(const std::unordered_map<std::string, std::string>& attrs,
                         std::vector<std::vector<unsigned int> >* in_shapes,
                         std::vector<std::vector<unsigned int> >* out_shapes) {
  for (size_t j = 0; j < out_shapes->size(); ++j) out_shapes->at(j) = in_shapes->at(0);
  return MX_SUCCESS;
}

template <typename T>
void scale_into(const MXTensor& x, MXTensor* y, float scalar, float offset) {
  const T* in = x.data<T>();
  T* out = y->data<T>();
  for (int64_t i = 0; i < x.size(); ++i) out[i] = static_cast<T>(in[i] * scalar + offset);
}

MXReturnValue scale_forward(const std::unordered_map<std::string, std::string>& attrs,
                            std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                            const OpResource& res) {
  float scalar, offset;
  read_float(attrs, "scalar", 1.f, &scalar);
  read_float(attrs, "offset", 0.f, &offset);
  switch (inputs->at(0).dtype) {
    case kFloat32:
      scale_into<float>(inputs->at(0), &outputs->at(0), scalar, offset);
      break;
    case kFloat64:
      scale_into<double>(inputs->at(0), &outputs->at(0), scalar, offset);
      break;
    default:
      MX_ERROR_MSG << "mx_scale: float32 or float64 only, got MXNet dtype " << inputs->at(0).dtype;
      return MX_FAIL;
  }
  return MX_SUCCESS;
}

// inputs: dy, x, y; outputs: dx = dy * scalar
MXReturnValue scale_backward(const std::unordered_map<std::string, std::string>& attrs,
                             std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                             const OpResource& res) {
  float scalar;
  read_float(attrs, "scalar", 1.f, &scalar);
  switch (inputs->at(0).dtype) {
    case kFloat32:
      scale_into<float>(inputs->at(0), &outputs->at(0), scalar, 0.f);
      break;
    case kFloat64:
      scale_into<double>(inputs->at(0), &outputs->at(0), scalar, 0.f);
      break;
    default:
      MX_ERROR_MSG << "mx_scale: float32 or float64 only";
      return MX_FAIL;
  }
  return MX_SUCCESS;
}

// ---- mx_split: (x, bias) -> (relu(x + bias), min(x + bias, 0)) ----

MXReturnValue split_parse(const std::unordered_map<std::string, std::string>& attrs, int* num_in,
                          int* num_out) {
  *num_in = 2;
  *num_out = 2;
  return MX_SUCCESS;
}

MXReturnValue split_type(const std::unordered_map<std::string, std::string>& attrs,
                         std::vector<int>* in_types, std::vector<int>* out_types) {
  if (in_types->at(0) != kFloat32 || in_types->at(1) != kFloat32) {
    MX_ERROR_MSG << "mx_split: float32 only";
    return MX_FAIL;
  }
  out_types->at(0) = kFloat32;
  out_types->at(1) = kFloat32;
  return MX_SUCCESS;
}

MXReturnValue split_shape(const std::unordered_map<std::string, std::string>& attrs,
                          std::vector<std::vector<unsigned int> >* in_shapes,
                          std::vector<std::vector<unsigned int> >* out_shapes) {
  if (in_shapes->at(1).size() != 1 || in_shapes->at(0).empty() ||
      in_shapes->at(1)[0] != in_shapes->at(0).back()) {
    MX_ERROR_MSG << "mx_split: bias must be 1-D, as long as the last axis of x";
    return MX_FAIL;
  }
  out_shapes->at(0) = in_shapes->at(0);
  out_shapes->at(1) = in_shapes->at(0);
  return MX_SUCCESS;
}

MXReturnValue dense_only(const std::unordered_map<std::string, std::string>& attrs,
                         std::vector<int>* in_stypes, std::vector<int>* out_stypes) {
  for (size_t j = 0; j < out_stypes->size(); ++j) out_stypes->at(j) = kDefaultStorage;
  return MX_SUCCESS;
}

MXReturnValue split_forward(const std::unordered_map<std::string, std::string>& attrs,
                            std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                            const OpResource& res) {
  const float* x = inputs->at(0).data<float>();
  const float* bias = inputs->at(1).data<float>();
  int64_t width = inputs->at(1).shape[0];
  float* pos = outputs->at(0).data<float>();
  float* neg = outputs->at(1).data<float>();
  for (int64_t i = 0; i < inputs->at(0).size(); ++i) {
    float v = x[i] + bias[i % width];
    pos[i] = v > 0 ? v : 0;
    neg[i] = v < 0 ? v : 0;
  }
  return MX_SUCCESS;
}

// inputs: dpos, dneg, x, bias, pos, neg; outputs: dx, dbias
MXReturnValue split_backward(const std::unordered_map<std::string, std::string>& attrs,
                             std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                             const OpResource& res) {
  const float* dpos = inputs->at(0).data<float>();
  const float* dneg = inputs->at(1).data<float>();
  const float* pos = inputs->at(4).data<float>();
  int64_t width = inputs->at(3).shape[0];
  float* dx = outputs->at(0).data<float>();
  float* dbias = outputs->at(1).data<float>();
  for (int64_t j = 0; j < width; ++j) dbias[j] = 0;
  for (int64_t i = 0; i < inputs->at(2).size(); ++i) {
    float g = pos[i] > 0 ? dpos[i] : dneg[i];
    dx[i] = g;
    dbias[i % width] += g;
  }
  return MX_SUCCESS;
}

MXReturnValue csr_stype(const std::unordered_map<std::string, std::string>& attrs,
                        std::vector<int>* in_stypes, std::vector<int>* out_stypes) {
  out_stypes->at(0) = kCSRStorage;
  return MX_SUCCESS;
}

// ---- mx_add_to: x += y in place, and y = the new x ----

MXReturnValue add_to_shape(const std::unordered_map<std::string, std::string>& attrs,
                           std::vector<std::vector<unsigned int> >* in_shapes,
                           std::vector<std::vector<unsigned int> >* out_shapes) {
  if (in_shapes->at(0) != in_shapes->at(1)) {
    MX_ERROR_MSG << "mx_add_to: x and y must have the same shape";
    return MX_FAIL;
  }
  out_shapes->at(0) = in_shapes->at(0);
  return MX_SUCCESS;
}

MXReturnValue add_to_mutate(const std::unordered_map<std::string, std::string>& attrs,
                            std::vector<int>* input_indices) {
  input_indices->push_back(0);
  return MX_SUCCESS;
}

MXReturnValue add_to_forward(const std::unordered_map<std::string, std::string>& attrs,
                             std::vector<MXTensor>* inputs, std::vector<MXTensor>* outputs,
                             const OpResource& res) {
  if (inputs->at(0).dtype != kFloat32 || inputs->at(1).dtype != kFloat32) {
    MX_ERROR_MSG << "mx_add_to: float32 only";
    return MX_FAIL;
  }
  float* x = inputs->at(0).data<float>();
  const float* y = inputs->at(1).data<float>();
  float* out = outputs->at(0).data<float>();
  for (int64_t i = 0; i < inputs->at(0).size(); ++i) {
    x[i] += y[i];
    out[i] = x[i];
  }
  return MX_SUCCESS;
}

}  // namespace

REGISTER_OP(mx_gemm)
    .setForward(gemm_forward, "cpu")
    .setBackward(gemm_backward, "cpu")
    .setParseAttrs(gemm_parse)
    .setInferType(gemm_type)
    .setInferShape(gemm_shape);

REGISTER_OP(mx_scale)
    .setForward(scale_forward, "cpu")
    .setBackward(scale_backward, "cpu")
    .setParseAttrs(scale_parse)
    .setInferShape(same_shape);

REGISTER_OP(mx_split)
    .setForward(split_forward, "cpu")
    .setBackward(split_backward, "cpu")
    .setParseAttrs(split_parse)
    .setInferType(split_type)
    .setInferSType(dense_only)
    .setInferShape(split_shape);

REGISTER_OP(mx_sparse_out)
    .setForward(scale_forward, "cpu")
    .setInferSType(csr_stype)
    .setInferShape(same_shape);

REGISTER_OP(mx_add_to)
    .setForward(add_to_forward, "cpu")
    .setParseAttrs(gemm_parse)
    .setInferShape(add_to_shape)
    .setMutateInputs(add_to_mutate);

MXReturnValue initialize(int version) {
  if (version >= 20000) return MX_SUCCESS;
  MX_ERROR_MSG << "mx_gemm_lib needs MXNet 2.0 or later, got version " << version;
  return MX_FAIL;
}
