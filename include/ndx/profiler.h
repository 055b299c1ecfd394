// The profiler (ndx.profiler in Python): spans around op kernels, executor runs and backward
// passes, and any that a library or a custom op adds with profiler::Span. Off, a span costs
// one relaxed atomic load; on, it reads the clock twice and appends an event under a mutex.
// GPU kernels run asynchronously: their spans time the launch, not the kernel.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace ndx::profiler {

struct Event {
  std::string name;
  const char* category;  // a string literal: "operator", "executor", "autograd", "data", ...
  int64_t start_ns, end_ns;
  int64_t bytes;  // bytes of the outputs an op wrote (0 when not an op)
  uint64_t thread;
};

extern std::atomic<bool> g_recording;
inline bool recording() { return g_recording.load(std::memory_order_relaxed); }

int64_t now_ns();
void record(std::string name, const char* category, int64_t start_ns, int64_t end_ns,
            int64_t bytes = 0);
void set_recording(bool on);
// The events so far, oldest first; `clear` empties the buffer.
std::vector<Event> events(bool clear);

// Records [construction, destruction) as one event when the profiler was on at construction.
class Span {
 public:
  Span(const std::string& name, const char* category)
      : name_(recording() ? &name : nullptr), category_(category), start_(name_ ? now_ns() : 0) {}
  ~Span() {
    if (name_) record(*name_, category_, start_, now_ns(), bytes_);
  }
  void set_bytes(int64_t bytes) { bytes_ = bytes; }
  bool active() const { return name_ != nullptr; }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  const std::string* name_;
  const char* category_;
  int64_t start_;
  int64_t bytes_ = 0;
};

}  // namespace ndx::profiler
