#include "ndx/profiler.h"

#include <pthread.h>

#include <chrono>
#include <mutex>

namespace ndx::profiler {

std::atomic<bool> g_recording{false};

namespace {
std::mutex g_mu;
std::vector<Event> g_events;
// Caps the buffer so a profiler left on cannot take all memory: about 200 MB of events.
constexpr size_t kMaxEvents = size_t{1} << 21;
}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void record(std::string name, const char* category, int64_t start_ns, int64_t end_ns,
            int64_t bytes) {
  const uint64_t thread = static_cast<uint64_t>(pthread_self());
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_events.size() >= kMaxEvents) return;
  g_events.push_back(Event{std::move(name), category, start_ns, end_ns, bytes, thread});
}

void set_recording(bool on) { g_recording.store(on, std::memory_order_relaxed); }

std::vector<Event> events(bool clear) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!clear) return g_events;
  std::vector<Event> out;
  out.swap(g_events);
  return out;
}

}  // namespace ndx::profiler
