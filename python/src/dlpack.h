// The DLPack ABI (https://dmlc.github.io/dlpack/latest/), version 1.1, written from the
// specification: the structs a producer hands to a consumer inside a PyCapsule. Only the
// parts ndx exchanges are here; the layouts and enum values are the specification's and
// must not change (they cross library boundaries).
#pragma once
#include <cstdint>

namespace ndx::dlpack {

inline constexpr uint32_t kMajorVersion = 1;
inline constexpr uint32_t kMinorVersion = 1;

// Capsule names: a producer's capsule carries the first; the consumer that takes ownership
// renames it to the second, so the capsule's destructor knows not to free the tensor.
inline constexpr const char* kLegacyName = "dltensor";
inline constexpr const char* kLegacyUsedName = "used_dltensor";
inline constexpr const char* kVersionedName = "dltensor_versioned";
inline constexpr const char* kVersionedUsedName = "used_dltensor_versioned";

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // pinned host memory, readable as CPU memory
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,  // unified memory: readable from the host
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
};

struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};

enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;  // the element at index 0 is at data + byte_offset
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null means compact row-major (legacy producers)
  uint64_t byte_offset;
};

// The legacy (pre-1.0) managed tensor, in capsules named "dltensor".
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

inline constexpr uint64_t kFlagReadOnly = 1ULL << 0;
inline constexpr uint64_t kFlagIsCopied = 1ULL << 1;
inline constexpr uint64_t kFlagIsSubbytePadded = 1ULL << 2;

// The versioned managed tensor (DLPack >= 1.0), in capsules named "dltensor_versioned".
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

}  // namespace ndx::dlpack
