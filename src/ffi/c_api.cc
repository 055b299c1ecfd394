// The C ABI over the function registry and arrays (include/ndx/c_api.h).
#include "ndx/c_api.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "ndx/build_info.h"
#include "ndx/ffi.h"
#include "ndx/op.h"

namespace {
thread_local std::string g_last_error;
thread_local int g_last_kind = 0;

template <typename F>
int guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const ndx::Error& e) {
    g_last_error = e.what();
    g_last_kind = static_cast<int>(e.kind());
  } catch (const std::bad_alloc&) {
    g_last_error = "[c_api] out of memory";
    g_last_kind = static_cast<int>(ndx::ErrorKind::kMemoryError);
  } catch (const std::exception& e) {
    g_last_error = e.what();
    g_last_kind = static_cast<int>(ndx::ErrorKind::kRuntimeError);
  } catch (...) {  // nothing may cross the C boundary
    g_last_error = "[c_api] unknown exception";
    g_last_kind = static_cast<int>(ndx::ErrorKind::kRuntimeError);
  }
  return -1;
}

// A (pointer, count) pair from a caller: a negative count, or a null pointer with a positive
// count, is a ValueError rather than a read of wild memory.
void check_span(const void* p, int64_t size, int64_t max, const char* what) {
  if (size < 0 || size > max)
    ndx::value_error("[c_api] ", what, " count must be in [0, ", max, "], got ", size);
  if (size > 0 && !p) ndx::value_error("[c_api] ", what, " pointer is null with count ", size);
}

ndx::NDArray& array_of(NDXArrayHandle h) {
  if (!h) ndx::value_error("[c_api] null array handle");
  return *static_cast<ndx::NDArray*>(h);
}

ndx::ffi::Arg to_arg(const NDXValue& v) {
  using ndx::Value;
  ndx::ffi::Arg a;
  switch (v.type_code) {
    case kNDXNone:
      break;
    case kNDXInt:
      a.value = Value(v.v_int);
      break;
    case kNDXFloat:
      a.value = Value(v.v_float);
      break;
    case kNDXBool:
      a.value = Value(v.v_int != 0);
      break;
    case kNDXStr:
      a.value = Value(std::string_view(v.v_str ? v.v_str : ""));
      break;
    case kNDXDType:
      a.value = Value(ndx::dtype_from_name(v.v_str ? v.v_str : ""));
      break;
    case kNDXShape:
      check_span(v.v_dims, v.size, ndx::Shape::kMaxDims, "shape dims");
      a.value = Value(ndx::Shape(v.v_dims, v.v_dims + v.size));
      break;
    case kNDXArray:
      a.kind = ndx::ffi::Arg::Kind::kArray;
      a.array = array_of(v.v_array);
      break;
    case kNDXArrayList:
      a.kind = ndx::ffi::Arg::Kind::kArrayList;
      check_span(v.v_arrays, v.size, ndx::Op::kMaxArity, "array list");
      for (int64_t i = 0; i < v.size; ++i) a.arrays.push_back(array_of(v.v_arrays[i]));
      break;
    default:
      ndx::type_error("[c_api] unknown type code ", v.type_code);
  }
  return a;
}
}  // namespace

extern "C" {

int NDXGetVersion(void) { return ndx::version_number(); }
int NDXGetABIVersion(void) { return NDX_C_API_VERSION; }
const char* NDXGetLastError(void) { return g_last_error.c_str(); }
int NDXGetLastErrorKind(void) { return g_last_kind; }

int NDXFuncGet(const char* name, NDXFuncHandle* out) {
  return guarded([&] {
    const auto* f = ndx::ffi::FuncRegistry::global().find(name ? name : "");
    if (!f) ndx::value_error("[c_api] no function named '", name ? name : "", "' is registered");
    if (!out) ndx::value_error("[c_api] NDXFuncGet: null output slot");
    *out = f;
  });
}

int NDXFuncCall(NDXFuncHandle f, const NDXValue* args, int num_args, NDXValue* ret) {
  return guarded([&] {
    if (!f) ndx::value_error("[c_api] null function handle");
    check_span(args, num_args, ndx::Op::kMaxArity, "argument");
    if (!ret) ndx::value_error("[c_api] null return slot");
    const auto* entry = static_cast<const ndx::ffi::FuncEntry*>(f);
    std::vector<ndx::ffi::Arg> converted;
    converted.reserve(static_cast<size_t>(num_args));
    for (int i = 0; i < num_args; ++i) converted.push_back(to_arg(args[i]));
    ndx::ffi::Ret r;
    entry->body(ndx::ffi::Args(converted.data(), num_args, entry->name), &r);
    std::memset(ret, 0, sizeof(*ret));
    switch (r.kind) {
      case ndx::ffi::Ret::Kind::kNone:
        ret->type_code = kNDXNone;
        break;
      case ndx::ffi::Ret::Kind::kArray:
        ret->type_code = kNDXArray;
        ret->v_array = new ndx::NDArray(std::move(r.array));
        break;
      case ndx::ffi::Ret::Kind::kArrayList: {
        ret->type_code = kNDXArrayList;
        ret->size = static_cast<int64_t>(r.arrays.size());
        auto* handles = new NDXArrayHandle[r.arrays.size()];
        for (size_t i = 0; i < r.arrays.size(); ++i) handles[i] = new ndx::NDArray(r.arrays[i]);
        ret->v_arrays = handles;
        break;
      }
      case ndx::ffi::Ret::Kind::kValue:
        switch (r.value.kind) {
          case ndx::Value::Kind::kInt:
            ret->type_code = kNDXInt, ret->v_int = r.value.i;
            break;
          case ndx::Value::Kind::kFloat:
            ret->type_code = kNDXFloat, ret->v_float = r.value.f;
            break;
          case ndx::Value::Kind::kBool:
            ret->type_code = kNDXBool, ret->v_int = r.value.b;
            break;
          default:
            ndx::not_implemented("[c_api] returning a ", r.value.kind_name(), " value");
        }
    }
  });
}

int NDXArrayFromData(const void* data, const int64_t* shape, int ndim, const char* dtype,
                     NDXArrayHandle* out) {
  return guarded([&] {
    if (!out) ndx::value_error("[c_api] NDXArrayFromData: null output slot");
    ndx::DType t = ndx::dtype_from_name(dtype ? dtype : "");
    check_span(shape, ndim, ndx::Shape::kMaxDims, "NDXArrayFromData: shape dims");
    ndx::Shape s(shape, shape + ndim);
    auto a = std::make_unique<ndx::NDArray>(s, t);  // validates dims and the size first
    if (a->nbytes() > 0) {
      if (!data)
        ndx::value_error("[c_api] NDXArrayFromData: null data for ", a->nbytes(), " bytes");
      std::memcpy(a->raw_data(), data, static_cast<size_t>(a->nbytes()));
    }
    *out = a.release();
  });
}

int NDXArrayGetShape(NDXArrayHandle a, int* ndim, const int64_t** shape) {
  return guarded([&] {
    const ndx::NDArray& arr = array_of(a);
    if (!ndim || !shape) ndx::value_error("[c_api] NDXArrayGetShape: null output slot");
    *ndim = arr.ndim();
    *shape = arr.shape().data();
  });
}

int NDXArrayGetDType(NDXArrayHandle a, const char** dtype) {
  return guarded([&] {
    const ndx::NDArray& arr = array_of(a);
    if (!dtype) ndx::value_error("[c_api] NDXArrayGetDType: null output slot");
    *dtype = ndx::dtype_name(arr.dtype()).data();
  });
}

int NDXArrayCopyTo(NDXArrayHandle a, void* out, int64_t nbytes) {
  return guarded([&] {
    const ndx::NDArray& arr = array_of(a);
    if (nbytes != arr.nbytes())
      ndx::value_error("[c_api] NDXArrayCopyTo: buffer has ", nbytes, " bytes, the array ",
                       arr.nbytes());
    ndx::NDArray c = arr.contiguous();
    if (nbytes > 0 && !out) ndx::value_error("[c_api] NDXArrayCopyTo: null buffer");
    if (nbytes > 0) std::memcpy(out, c.raw_data(), static_cast<size_t>(nbytes));
  });
}

int NDXArrayFree(NDXArrayHandle a) {
  return guarded([&] { delete static_cast<ndx::NDArray*>(a); });
}

int NDXArrayListFree(NDXValue* list) {
  return guarded([&] {
    if (!list || list->type_code != kNDXArrayList) ndx::value_error("[c_api] not an array list");
    check_span(list->v_arrays, list->size, INT64_MAX, "array list");
    for (int64_t i = 0; i < list->size; ++i) delete static_cast<ndx::NDArray*>(list->v_arrays[i]);
    delete[] list->v_arrays;
    list->v_arrays = nullptr;
    list->size = 0;
  });
}

}  // extern "C"
