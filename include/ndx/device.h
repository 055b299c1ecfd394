#pragma once
#include <cstdint>
#include <ostream>
#include <string>

namespace ndx {

enum class DeviceType : int8_t { kCPU = 1, kGPU = 2 };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int32_t id = 0;

  bool is_cpu() const { return type == DeviceType::kCPU; }
  bool is_gpu() const { return type == DeviceType::kGPU; }
  bool operator==(const Device&) const = default;
  std::string str() const;  // "cpu(0)", "gpu(1)"
};

inline Device cpu(int id = 0) { return Device{DeviceType::kCPU, id}; }
inline Device gpu(int id = 0) { return Device{DeviceType::kGPU, id}; }

std::ostream& operator<<(std::ostream& os, const Device& d);

}  // namespace ndx
