// The PackedFunc registry through C++ and through the C ABI (c_api.h) only.
#include "ndx/c_api.h"

#include <string>

#include "ndx/build_info.h"
#include "ndx/ffi.h"
#include "ndx/version.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_error;

NDX_REGISTER_API("_test.scale_add")
    .describe("scale_add(x, alpha, ys): x * alpha + sum(ys)")
    .set_body_typed([](NDArray x, double alpha, std::vector<NDArray> ys) {
      NDArray out = x * alpha;
      for (const auto& y : ys) out = out + y;
      return out;
    });

NDX_REGISTER_API("_test.describe").set_body([](const ffi::Args& args, ffi::Ret* ret) {
  ret->set(Value(int64_t{args.size()}));
});

TEST(Ffi, TypedBodiesUnpackArguments) {
  std::vector<ffi::Arg> args(3);
  args[0].kind = ffi::Arg::Kind::kArray;
  args[0].array = NDArray::from_vector<float>({1, 2}, {2});
  args[1].value = Value(3.0);
  args[2].kind = ffi::Arg::Kind::kArrayList;
  args[2].arrays = {np::ones({2}), np::ones({2})};
  ffi::Ret r = ffi::call("_test.scale_add", args);
  ASSERT_EQ(r.kind, ffi::Ret::Kind::kArray);
  EXPECT_EQ(r.array.to_vector<float>(), (std::vector<float>{5, 8}));
  EXPECT_EQ(ffi::call("_test.describe", args).value.i, 3);
  expect_error(
      ErrorKind::kTypeError,
      [&] {
        ffi::call("_test.scale_add", {args[1], args[1], args[2]});
      },
      "expected an ndarray");
  expect_error(
      ErrorKind::kTypeError, [&] { ffi::call("_test.scale_add", {args[0]}); },
      "expected 3 arguments");
  expect_error(
      ErrorKind::kValueError, [] { ffi::call("_test.nope", {}); }, "no function named");
  auto names = ffi::FuncRegistry::global().list_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "_npi.zeros"), names.end());
}

TEST(CApi, CallsRegisteredFunctionsWithPlainStructs) {
  EXPECT_EQ(NDXGetABIVersion(), NDX_C_API_VERSION);
  NDXFuncHandle zeros = nullptr;
  ASSERT_EQ(NDXFuncGet("_npi.zeros", &zeros), 0);
  int64_t dims[2] = {2, 3};
  NDXValue args[3] = {};
  args[0].type_code = kNDXShape;
  args[0].v_dims = dims;
  args[0].size = 2;
  args[1].type_code = kNDXDType;
  args[1].v_str = "int32";
  args[2].type_code = kNDXNone;
  NDXValue ret;
  ASSERT_EQ(NDXFuncCall(zeros, args, 3, &ret), 0) << NDXGetLastError();
  ASSERT_EQ(ret.type_code, kNDXArray);
  int ndim = 0;
  const int64_t* shape = nullptr;
  ASSERT_EQ(NDXArrayGetShape(ret.v_array, &ndim, &shape), 0);
  EXPECT_EQ(ndim, 2);
  EXPECT_EQ(shape[1], 3);
  const char* dtype = nullptr;
  NDXArrayGetDType(ret.v_array, &dtype);
  EXPECT_STREQ(dtype, "int32");
  int32_t host[6] = {1, 1, 1, 1, 1, 1};
  ASSERT_EQ(NDXArrayCopyTo(ret.v_array, host, sizeof host), 0);
  for (int v : host) EXPECT_EQ(v, 0);
  EXPECT_EQ(NDXArrayFree(ret.v_array), 0);

  // Arrays in, array out, through a user-registered function.
  float data[2] = {1, 2};
  int64_t n = 2;
  NDXArrayHandle x = nullptr, y = nullptr;
  ASSERT_EQ(NDXArrayFromData(data, &n, 1, "float32", &x), 0);
  ASSERT_EQ(NDXArrayFromData(data, &n, 1, "float32", &y), 0);
  NDXFuncHandle f = nullptr;
  ASSERT_EQ(NDXFuncGet("_test.scale_add", &f), 0);
  NDXValue call[3] = {};
  call[0].type_code = kNDXArray;
  call[0].v_array = x;
  call[1].type_code = kNDXFloat;
  call[1].v_float = 10;
  call[2].type_code = kNDXArrayList;
  call[2].v_arrays = &y;
  call[2].size = 1;
  ASSERT_EQ(NDXFuncCall(f, call, 3, &ret), 0) << NDXGetLastError();
  float out[2];
  ASSERT_EQ(NDXArrayCopyTo(ret.v_array, out, sizeof out), 0);
  EXPECT_EQ(out[0], 11);
  EXPECT_EQ(out[1], 22);
  NDXArrayFree(ret.v_array);

  // Errors come back as codes with a message and a kind, never as exceptions.
  args[0].v_dims = dims;
  dims[0] = -1;
  EXPECT_EQ(NDXFuncCall(zeros, args, 3, &ret), -1);
  EXPECT_NE(std::string(NDXGetLastError()).find("negative dimensions"), std::string::npos);
  EXPECT_EQ(NDXGetLastErrorKind(), static_cast<int>(ErrorKind::kValueError));
  EXPECT_EQ(NDXFuncGet("_no.such", &f), -1);
  EXPECT_EQ(NDXArrayCopyTo(x, out, 3), -1);
  EXPECT_EQ(NDXFuncCall(nullptr, args, 0, &ret), -1);
  NDXArrayFree(x);
  NDXArrayFree(y);
}

// Counts and pointers from C callers are checked before use: a bad one is a ValueError with
// the error code, never a read of wild memory.
TEST(CApi, HostileCountsAndNullPointersAreErrors) {
  NDXFuncHandle zeros = nullptr;
  ASSERT_EQ(NDXFuncGet("_npi.zeros", &zeros), 0);
  auto fails_with_value_error = [](int rc) {
    EXPECT_EQ(rc, -1);
    EXPECT_EQ(NDXGetLastErrorKind(), static_cast<int>(ErrorKind::kValueError)) << NDXGetLastError();
  };
  NDXValue args[3] = {};
  args[0].type_code = kNDXShape;
  args[0].v_dims = nullptr;
  args[0].size = -1;
  args[1].type_code = kNDXDType;
  args[1].v_str = "float32";
  args[2].type_code = kNDXNone;
  NDXValue ret;
  fails_with_value_error(NDXFuncCall(zeros, args, 3, &ret));
  args[0].size = 2;  // a null pointer with a count
  fails_with_value_error(NDXFuncCall(zeros, args, 3, &ret));
  int64_t dims[1] = {2};
  args[0].v_dims = dims;
  args[0].size = 65;  // more dims than any shape may have
  fails_with_value_error(NDXFuncCall(zeros, args, 3, &ret));
  fails_with_value_error(NDXFuncCall(zeros, args, -1, &ret));
  fails_with_value_error(NDXFuncCall(zeros, nullptr, 3, &ret));
  NDXValue list = {};
  list.type_code = kNDXArrayList;
  list.size = 3;  // with no handles
  fails_with_value_error(NDXFuncCall(zeros, &list, 1, &ret));
  NDXArrayHandle h = nullptr;
  int64_t huge[2] = {int64_t{1} << 40, int64_t{1} << 40};
  float one = 1;
  fails_with_value_error(NDXArrayFromData(&one, huge, 2, "float32", &h));
  fails_with_value_error(NDXArrayFromData(nullptr, dims, 1, "float32", &h));
  fails_with_value_error(NDXArrayFromData(&one, nullptr, 1, "float32", &h));
  fails_with_value_error(NDXArrayFromData(&one, dims, -3, "float32", &h));
  EXPECT_EQ(h, nullptr);
}

}  // namespace
}  // namespace ndx

// The generated ndx/version.h and the library agree, and the string spells the numbers.
TEST(CApi, VersionMacrosMatchTheLibrary) {
  EXPECT_EQ(NDXGetVersion(), NDX_VERSION);
  EXPECT_EQ(NDX_VERSION, NDX_VERSION_MAJOR * 10000 + NDX_VERSION_MINOR * 100 + NDX_VERSION_PATCH);
  const std::string spelled = std::to_string(NDX_VERSION_MAJOR) + "." +
                              std::to_string(NDX_VERSION_MINOR) + "." +
                              std::to_string(NDX_VERSION_PATCH);
  EXPECT_EQ(spelled, NDX_VERSION_STRING);
  EXPECT_STREQ(ndx::version_string(), NDX_VERSION_STRING);
}
