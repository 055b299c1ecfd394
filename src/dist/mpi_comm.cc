// Collectives between processes for ndx.distributed and the dist kvstore (issue 17), on Open
// MPI (bench/dist/README.md has the measurement behind the choice).
//
// One communication thread owns MPI: it calls MPI_Init_thread, every collective and
// MPI_Finalize, so MPI needs only MPI_THREAD_FUNNELED and no Python thread ever blocks inside
// MPI. Callers queue jobs (tickets complete in the order they were queued, which every rank
// keeps the same) and wait for them with a deadline, the interpreter lock released. MPI has no
// timeout of its own: a peer that died or hangs would block a collective forever, so the wait
// is where a hang turns into an error. After a timeout or an MPI error the communicator is
// broken: the thread may still be stuck inside MPI, so it is never joined and MPI_Finalize is
// not called; the process exits with the error and the launcher stops the others.
//
// Allreduce fuses arrays into buckets: consecutive arrays of one dtype are copied into a
// staging buffer of up to bucket_bytes and reduced with one MPI call (a network of small
// gradients costs one latency per bucket, not per array); an array of bucket_bytes or more is
// reduced in place, with no copy.
//
// This file is its own library (libndx_dist_mpi.so) so that libndx does not depend on MPI:
// ndx.distributed loads it when a process is started by the launcher. Its functions are FFI
// functions named "_dist.*".
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernel/parallel.h"
#include "ndx/dtype.h"
#include "ndx/error.h"
#include "ndx/ffi.h"
#include "ndx/ndarray.h"

namespace ndx::dist {
namespace {

// What a wait reports to Python (ndx/distributed/__init__.py raises the matching error).
enum Status : int64_t { kDone = 0, kTimedOut = 1, kFailed = 2 };

struct Job {
  enum class Kind { kInit, kAllreduce, kBroadcast, kBarrier, kFinalize };
  Kind kind = Kind::kBarrier;
  std::vector<NDArray> arrays;  // contiguous, on the CPU
  int root = 0;
  int64_t ticket = 0;
};

const char* job_name(Job::Kind k) {
  switch (k) {
    case Job::Kind::kInit:
      return "MPI_Init";
    case Job::Kind::kAllreduce:
      return "allreduce";
    case Job::Kind::kBroadcast:
      return "broadcast";
    case Job::Kind::kBarrier:
      return "barrier";
    case Job::Kind::kFinalize:
      return "MPI_Finalize";
  }
  return "?";
}

// MPI counts are ints: larger arrays go in pieces of this many elements.
constexpr int64_t kMaxCount = INT_MAX / 16;

// Sum of 16-bit floats: each pair added in float and rounded back, as NumPy adds them.
template <typename Half>
void half_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const Half* a = static_cast<const Half*>(in);
  Half* b = static_cast<Half*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = Half(float(a[i]) + float(b[i]));
}

class MpiError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw MpiError(std::string(what) + " failed: " + std::string(text, len));
}

class Communicator {
 public:
  // Leaked on purpose: a thread stuck in MPI after a timeout must not be joined at exit.
  static Communicator& get() {
    static auto* c = new Communicator;
    return *c;
  }

  // Starts the communication thread, which initializes MPI; returns once it has (or the
  // deadline passed, or it failed).
  Status start(double timeout_s, int64_t bucket_bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (started_) return broken_ ? kFailed : kDone;
      started_ = true;
      bucket_bytes_ = std::max<int64_t>(bucket_bytes, 1);
      thread_ = std::thread([this] { run(); });
      thread_.detach();
    }
    return wait(submit({Job::Kind::kInit}), timeout_s);
  }

  int64_t submit(Job job) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_ && job.kind != Job::Kind::kInit)
      value_error("[ndx.distributed] MPI is not initialized: call ndx.distributed.init() first");
    job.ticket = next_ticket_++;
    const int64_t t = job.ticket;
    if (!broken_) queue_.push_back(std::move(job));
    // Notified with the lock held, unlike run()'s notify: the woken thread blocks on the lock
    // until this caller has gone to sleep in wait(), so MPI's busy polling then has the core
    // to itself. Notified after unlocking, a lockstep allreduce of 150 KB took twice as long
    // (2 processes on 2 cores): the caller stayed runnable beside the polling thread.
    work_cv_.notify_one();
    return t;
  }

  // Waits (the interpreter lock released) until `ticket` is done, or the deadline passes.
  Status wait(int64_t ticket, double timeout_s) {
    kernel::AllowThreads allow;
    std::unique_lock<std::mutex> lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    const bool done =
        done_cv_.wait_until(lock, deadline, [&] { return broken_ || done_ticket_ >= ticket; });
    if (broken_) return failed_by_timeout_ ? kTimedOut : kFailed;
    if (done) return kDone;
    broken_ = failed_by_timeout_ = true;
    error_ = "rank " + std::to_string(rank_) + ": " + running_ + " did not complete within " +
             format_seconds(timeout_s) +
             ": another worker died, hangs, or is far behind (NDX_DIST_TIMEOUT sets the limit)";
    return kTimedOut;
  }

  std::string error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool usable() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_ && !broken_ && !finalized_;
  }

 private:
  static std::string format_seconds(double s) {
    std::string t = std::to_string(s);
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t + " s";
  }

  void run() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return !queue_.empty(); });
        job = std::move(queue_.front());
        queue_.pop_front();
        running_ = describe(job);
      }
      try {
        execute(job);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!broken_) error_ = "rank " + std::to_string(rank_) + ": " + e.what();
        broken_ = true;
        done_cv_.notify_all();
        return;  // MPI is in an unknown state: nothing more is run
      }
      const bool last = job.kind == Job::Kind::kFinalize;
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_ticket_ = job.ticket;
        finalized_ = last;
      }
      done_cv_.notify_all();  // after unlocking: the woken caller need not wait for the lock
      if (last) return;
    }
  }

  static std::string describe(const Job& job) {
    int64_t bytes = 0;
    for (const auto& a : job.arrays) bytes += a.nbytes();
    std::string s = job_name(job.kind);
    if (job.kind == Job::Kind::kAllreduce || job.kind == Job::Kind::kBroadcast)
      s += " of " + std::to_string(job.arrays.size()) + " arrays (" + std::to_string(bytes) +
           " bytes)";
    return s;
  }

  void execute(Job& job) {
    switch (job.kind) {
      case Job::Kind::kInit:
        return init_mpi();
      case Job::Kind::kAllreduce:
        return allreduce(job.arrays);
      case Job::Kind::kBroadcast:
        return broadcast(job.arrays, job.root);
      case Job::Kind::kBarrier:
        return check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      case Job::Kind::kFinalize:
        return check(MPI_Finalize(), "MPI_Finalize");
    }
  }

  void init_mpi() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    check(MPI_Type_contiguous(2, MPI_BYTE, &half_type_), "MPI_Type_contiguous");
    check(MPI_Type_commit(&half_type_), "MPI_Type_commit");
    check(MPI_Op_create(&half_sum<float16>, 1, &float16_sum_), "MPI_Op_create");
    check(MPI_Op_create(&half_sum<bfloat16>, 1, &bfloat16_sum_), "MPI_Op_create");
  }

  // The MPI type and sum of a dtype (bool: logical or, which is NumPy's add for bools).
  std::pair<MPI_Datatype, MPI_Op> reduction(DType t) const {
    switch (t) {
      case DType::kBool:
        return {MPI_UINT8_T, MPI_BOR};
      case DType::kInt8:
        return {MPI_INT8_T, MPI_SUM};
      case DType::kInt16:
        return {MPI_INT16_T, MPI_SUM};
      case DType::kInt32:
        return {MPI_INT32_T, MPI_SUM};
      case DType::kInt64:
        return {MPI_INT64_T, MPI_SUM};
      case DType::kUInt8:
        return {MPI_UINT8_T, MPI_SUM};
      case DType::kUInt16:
        return {MPI_UINT16_T, MPI_SUM};
      case DType::kUInt32:
        return {MPI_UINT32_T, MPI_SUM};
      case DType::kUInt64:
        return {MPI_UINT64_T, MPI_SUM};
      case DType::kFloat16:
        return {half_type_, float16_sum_};
      case DType::kBFloat16:
        return {half_type_, bfloat16_sum_};
      case DType::kFloat32:
        return {MPI_FLOAT, MPI_SUM};
      case DType::kFloat64:
        return {MPI_DOUBLE, MPI_SUM};
      case DType::kComplex64:
        return {MPI_C_FLOAT_COMPLEX, MPI_SUM};
      case DType::kComplex128:
        return {MPI_C_DOUBLE_COMPLEX, MPI_SUM};
      default:
        break;
    }
    throw MpiError("allreduce: dtype " + std::string(dtype_name(t)) + " has no MPI sum");
  }

  void reduce_in_place(void* data, int64_t count, DType t) {
    auto [type, op] = reduction(t);
    char* p = static_cast<char*>(data);
    const int64_t item = dtype_size(t);
    for (int64_t done = 0; done < count;) {
      const int64_t n = std::min(count - done, kMaxCount);
      check(MPI_Allreduce(MPI_IN_PLACE, p + done * item, static_cast<int>(n), type, op,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
      done += n;
    }
  }

  // Consecutive arrays of one dtype share a bucket while they fit in bucket_bytes_.
  void allreduce(std::vector<NDArray>& arrays) {
    std::vector<NDArray*> bucket;
    int64_t bucket_bytes = 0;
    auto flush = [&] {
      if (bucket.empty()) return;
      if (bucket.size() == 1) {
        reduce_in_place(bucket[0]->raw_data(), bucket[0]->size(), bucket[0]->dtype());
      } else {
        if (static_cast<int64_t>(staging_.size()) < bucket_bytes) staging_.resize(bucket_bytes);
        char* p = staging_.data();
        for (NDArray* a : bucket)
          p = static_cast<char*>(std::memcpy(p, a->raw_data(), a->nbytes())) + a->nbytes();
        reduce_in_place(staging_.data(), bucket_bytes / bucket[0]->itemsize(), bucket[0]->dtype());
        p = staging_.data();
        for (NDArray* a : bucket) {
          std::memcpy(a->raw_data(), p, a->nbytes());
          p += a->nbytes();
        }
      }
      bucket.clear();
      bucket_bytes = 0;
    };
    for (NDArray& a : arrays) {
      if (a.size() == 0) continue;  // every rank has the same shapes, so all skip it
      const bool fits = !bucket.empty() && bucket[0]->dtype() == a.dtype() &&
                        bucket_bytes + a.nbytes() <= bucket_bytes_;
      if (!fits) flush();
      bucket.push_back(&a);
      bucket_bytes += a.nbytes();
    }
    flush();
  }

  // Root's bytes to every rank, packed into buckets like allreduce's (any dtypes together).
  void broadcast(std::vector<NDArray>& arrays, int root) {
    auto bcast = [&](void* data, int64_t bytes) {
      char* p = static_cast<char*>(data);
      for (int64_t done = 0; done < bytes;) {
        const int64_t n = std::min(bytes - done, kMaxCount);
        check(MPI_Bcast(p + done, static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD),
              "MPI_Bcast");
        done += n;
      }
    };
    size_t i = 0;
    while (i < arrays.size()) {
      if (arrays[i].nbytes() >= bucket_bytes_) {
        bcast(arrays[i].raw_data(), arrays[i].nbytes());
        ++i;
        continue;
      }
      size_t j = i;
      int64_t bytes = 0;
      while (j < arrays.size() && bytes + arrays[j].nbytes() <= bucket_bytes_)
        bytes += arrays[j++].nbytes();
      if (static_cast<int64_t>(staging_.size()) < bytes) staging_.resize(bytes);
      char* p = staging_.data();
      if (rank_ == root)
        for (size_t k = i; k < j; p += arrays[k].nbytes(), ++k)
          std::memcpy(p, arrays[k].raw_data(), arrays[k].nbytes());
      if (bytes > 0) bcast(staging_.data(), bytes);
      p = staging_.data();
      if (rank_ != root)
        for (size_t k = i; k < j; p += arrays[k].nbytes(), ++k)
          std::memcpy(arrays[k].raw_data(), p, arrays[k].nbytes());
      i = j;
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Job> queue_;
  int64_t next_ticket_ = 1, done_ticket_ = 0;
  bool started_ = false, broken_ = false, failed_by_timeout_ = false, finalized_ = false;
  std::string error_, running_;
  std::thread thread_;
  int64_t bucket_bytes_ = 4 << 20;
  int rank_ = -1, size_ = 0;
  std::vector<char> staging_;
  MPI_Datatype half_type_ = MPI_DATATYPE_NULL;
  MPI_Op float16_sum_ = MPI_OP_NULL, bfloat16_sum_ = MPI_OP_NULL;
};

// The arrays a collective works on: CPU arrays, as they are when contiguous; otherwise a
// contiguous copy, which the caller copies back (ndx.distributed does).
std::vector<NDArray> checked_arrays(const char* who, const std::vector<NDArray>& arrays) {
  for (size_t i = 0; i < arrays.size(); ++i) {
    const NDArray& a = arrays[i];
    if (!a.defined()) value_error("[", who, "] array ", i, " is undefined");
    if (!a.device().is_cpu())
      raise(ErrorKind::kNotImplementedError, "[", who, "] array ", i, " is on ", a.device().str(),
            "; the MPI backend reduces CPU arrays (NCCL's is issue 16's work)");
    if (!a.is_contiguous())
      value_error("[", who, "] array ", i, " is not contiguous (pass a contiguous copy)");
  }
  return arrays;
}

double checked_timeout(const char* who, double timeout_s) {
  if (!(timeout_s > 0) || timeout_s > 1e9)
    value_error("[", who, "] timeout must be a number of seconds > 0, got ", timeout_s);
  return timeout_s;
}

}  // namespace

NDX_REGISTER_API("_dist.init")
    .describe("Initializes MPI on the communication thread; returns a wait status.")
    .set_body_typed([](double timeout_s, int64_t bucket_bytes) {
      if (bucket_bytes < 1)
        value_error("[_dist.init] bucket_bytes must be >= 1, got ", bucket_bytes);
      return static_cast<int64_t>(
          Communicator::get().start(checked_timeout("_dist.init", timeout_s), bucket_bytes));
    });

NDX_REGISTER_API("_dist.rank").set_body_typed([]() {
  return static_cast<int64_t>(Communicator::get().rank());
});

NDX_REGISTER_API("_dist.size").set_body_typed([]() {
  return static_cast<int64_t>(Communicator::get().size());
});

NDX_REGISTER_API("_dist.allreduce")
    .describe("Queues an in-place sum of each array over the ranks; returns a ticket.")
    .set_body_typed([](std::vector<NDArray> arrays) {
      Job job{Job::Kind::kAllreduce, checked_arrays("allreduce", arrays)};
      return Communicator::get().submit(std::move(job));
    });

NDX_REGISTER_API("_dist.allreduce_now")
    .describe(
        "Sums contiguous CPU arrays over the ranks in place and waits: a wait status, or -1 "
        "(nothing queued) when an array is not a contiguous CPU array.")
    .set_body_typed([](std::vector<NDArray> arrays, double timeout_s) -> int64_t {
      // ndx.distributed.allreduce's path for a training step's gradients: one call, no
      // ticket through Python. Other arrays take the checked path (copies, NCCL).
      for (const NDArray& a : arrays)
        if (!a.defined() || !a.device().is_cpu() || !a.is_contiguous()) return -1;
      timeout_s = checked_timeout("_dist.allreduce_now", timeout_s);
      Communicator& c = Communicator::get();
      return c.wait(c.submit({Job::Kind::kAllreduce, std::move(arrays)}), timeout_s);
    });

NDX_REGISTER_API("_dist.broadcast")
    .describe("Queues a copy of root's arrays into every rank's; returns a ticket.")
    .set_body_typed([](std::vector<NDArray> arrays, int64_t root) {
      Communicator& c = Communicator::get();
      if (root < 0 || root >= c.size())
        index_error("[broadcast] root must be a rank in [0, ", c.size(), "), got ", root);
      Job job{Job::Kind::kBroadcast, checked_arrays("broadcast", arrays), static_cast<int>(root)};
      return c.submit(std::move(job));
    });

NDX_REGISTER_API("_dist.barrier").set_body_typed([]() {
  return Communicator::get().submit({Job::Kind::kBarrier});
});

NDX_REGISTER_API("_dist.finalize").set_body_typed([]() {
  return Communicator::get().submit({Job::Kind::kFinalize});
});

NDX_REGISTER_API("_dist.wait")
    .describe("Waits for a ticket: 0 done, 1 timed out, 2 failed (_dist.error says why).")
    .set_body_typed([](int64_t ticket, double timeout_s) {
      return static_cast<int64_t>(
          Communicator::get().wait(ticket, checked_timeout("_dist.wait", timeout_s)));
    });

NDX_REGISTER_API("_dist.error").set_body_typed([]() {
  static thread_local std::string last;  // the returned view must outlive the call
  last = Communicator::get().error();
  return Value(std::string_view(last));
});

NDX_REGISTER_API("_dist.usable").set_body_typed([]() { return Communicator::get().usable(); });

}  // namespace ndx::dist
