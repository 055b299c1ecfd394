/* The stable C ABI of ndx's function registry: plain structs and integer codes, so code in
 * any language (or a library built against another release) can call registered functions.
 * Every function returns 0 on success and -1 on error; NDXGetLastError() then describes it. */
#ifndef NDX_C_API_H_
#define NDX_C_API_H_
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NDX_C_API_VERSION 1

typedef void* NDXArrayHandle;      /* an owned reference to an ndarray */
typedef const void* NDXFuncHandle; /* a registered function; valid for the process lifetime */

enum NDXTypeCode {
  kNDXNone = 0,
  kNDXInt = 1,
  kNDXFloat = 2,
  kNDXBool = 3,
  kNDXStr = 4,
  kNDXDType = 5,
  kNDXShape = 6,
  kNDXArray = 7,
  kNDXArrayList = 8
};

typedef struct {
  int32_t type_code; /* NDXTypeCode */
  union {
    int64_t v_int;
    double v_float;
    const char* v_str;              /* kNDXStr, and dtype names for kNDXDType */
    NDXArrayHandle v_array;         /* kNDXArray (borrowed) */
    const int64_t* v_dims;          /* kNDXShape: `size` ints */
    const NDXArrayHandle* v_arrays; /* kNDXArrayList: `size` borrowed arrays */
  };
  int64_t size;
} NDXValue;

/* The library's version as MAJOR * 10000 + MINOR * 100 + PATCH (NDX_VERSION in
 * ndx/version.h, as MXGetVersion counts), and the version of this C ABI (NDX_C_API_VERSION),
 * which changes only when these declarations do. */
int NDXGetVersion(void);
int NDXGetABIVersion(void);
const char* NDXGetLastError(void);
/* The kind of the last error: 1 ValueError, 2 TypeError, 3 IndexError, 4 NotImplementedError,
 * 5 RuntimeError, 6 AxisError, 7 OverflowError, 8 ZeroDivisionError. */
int NDXGetLastErrorKind(void);

int NDXFuncGet(const char* name, NDXFuncHandle* out);
/* Calls f. On success *ret holds kNDXNone, a scalar, or kNDXArray with an owned handle
 * (release it with NDXArrayFree); a list result is returned as kNDXArrayList whose handles
 * array must be released with NDXArrayListFree. */
int NDXFuncCall(NDXFuncHandle f, const NDXValue* args, int num_args, NDXValue* ret);

int NDXArrayFromData(const void* data, const int64_t* shape, int ndim, const char* dtype,
                     NDXArrayHandle* out);
int NDXArrayGetShape(NDXArrayHandle a, int* ndim, const int64_t** shape);
int NDXArrayGetDType(NDXArrayHandle a, const char** dtype);
/* Copies the elements, row-major, into `out` (nbytes must be the array's size in bytes). */
int NDXArrayCopyTo(NDXArrayHandle a, void* out, int64_t nbytes);
int NDXArrayFree(NDXArrayHandle a);
int NDXArrayListFree(NDXValue* list);

#ifdef __cplusplus
}
#endif
#endif /* NDX_C_API_H_ */
