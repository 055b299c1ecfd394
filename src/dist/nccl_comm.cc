// NCCL for GPU arrays: the 'nccl' kvstore and ndx.distributed's collectives on GPU arrays,
// one GPU per worker process (issue 17). Built into libndx_dist_mpi when ndx is built with
// CUDA; NCCL itself (libnccl.so.2, in the CUDA toolkit) is opened at first use, as cuBLAS and
// cuDNN are, so the library loads on a machine without it.
//
// Bootstrap: rank 0 makes NCCL's unique id, ndx.distributed broadcasts it over MPI, and every
// rank joins the communicator with it. A collective is queued on the calling thread's stream
// (the stream ndx's kernels on that thread use, so it is ordered after the kernels that made
// the gradients); several arrays go in one NCCL group, which NCCL fuses. The wait polls the
// stream and NCCL's asynchronous error until a deadline; past it the communicator is aborted
// (ncclCommAbort: NCCL's way out of a collective whose peer died or hangs) and the caller
// raises DistributedTimeoutError.
#include <dlfcn.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu/runtime.h"
#include "ndx/dtype.h"
#include "ndx/error.h"
#include "ndx/ffi.h"
#include "ndx/ndarray.h"

namespace ndx::dist {
namespace {

struct Nccl {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) init_rank = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclCommGetAsyncError) async_error = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  std::string error;
};

template <class F>
void bind(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
}

const Nccl& nccl() {
  static const Nccl n = [] {
    Nccl r;
    std::vector<std::string> names = {"libnccl.so.2", "libnccl.so"};
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* root = std::getenv(env))
        names.push_back(std::string(root) + "/lib/libnccl.so.2");
    names.push_back("/usr/local/cuda/lib/libnccl.so.2");
    void* lib = nullptr;
    for (const std::string& name : names)
      if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      r.error = std::string("NCCL (libnccl.so.2) could not be loaded: ") + dlerror();
      return r;
    }
    bind(lib, "ncclGetUniqueId", &r.get_unique_id);
    bind(lib, "ncclCommInitRank", &r.init_rank);
    bind(lib, "ncclAllReduce", &r.all_reduce);
    bind(lib, "ncclBroadcast", &r.broadcast);
    bind(lib, "ncclGroupStart", &r.group_start);
    bind(lib, "ncclGroupEnd", &r.group_end);
    bind(lib, "ncclCommAbort", &r.abort);
    bind(lib, "ncclCommGetAsyncError", &r.async_error);
    bind(lib, "ncclGetErrorString", &r.error_string);
    if (!r.get_unique_id || !r.init_rank || !r.all_reduce || !r.broadcast || !r.group_start ||
        !r.group_end || !r.abort || !r.async_error || !r.error_string)
      r.error = "NCCL lacks a function ndx needs";
    return r;
  }();
  if (!n.error.empty()) raise(ErrorKind::kRuntimeError, "[nccl] ", n.error);
  return n;
}

// NCCL's type and reduction for a dtype; the element count is scaled for complex types,
// whose sums are the sums of their float parts. Bool: max of 0/1 bytes, a logical or.
struct NcclReduction {
  ncclDataType_t type;
  ncclRedOp_t op;
  int64_t scale;
};
NcclReduction nccl_reduction(DType t) {
  switch (t) {
    case DType::kBool:
      return {ncclUint8, ncclMax, 1};
    case DType::kInt8:
      return {ncclInt8, ncclSum, 1};
    case DType::kUInt8:
      return {ncclUint8, ncclSum, 1};
    case DType::kInt32:
      return {ncclInt32, ncclSum, 1};
    case DType::kUInt32:
      return {ncclUint32, ncclSum, 1};
    case DType::kInt64:
      return {ncclInt64, ncclSum, 1};
    case DType::kUInt64:
      return {ncclUint64, ncclSum, 1};
    case DType::kFloat16:
      return {ncclFloat16, ncclSum, 1};
    case DType::kBFloat16:
      return {ncclBfloat16, ncclSum, 1};
    case DType::kFloat32:
      return {ncclFloat32, ncclSum, 1};
    case DType::kFloat64:
      return {ncclFloat64, ncclSum, 1};
    case DType::kComplex64:
      return {ncclFloat32, ncclSum, 2};
    case DType::kComplex128:
      return {ncclFloat64, ncclSum, 2};
    default:
      break;
  }
  raise(ErrorKind::kNotImplementedError, "[nccl allreduce] dtype ", dtype_name(t),
        " has no NCCL sum (int16 and uint16 do not)");
}

enum Status : int64_t { kDone = 0, kTimedOut = 1, kFailed = 2 };

class NcclComm {
 public:
  static NcclComm& get() {
    static auto* c = new NcclComm;  // leaked: an aborted communicator is never destroyed
    return *c;
  }

  void init(const ncclUniqueId& id, int rank, int size, int device) {
    if (comm_) value_error("[nccl] the communicator is already initialized");
    cuda::check_device(gpu(device), "nccl");
    cuda::DeviceGuard guard(device);
    check(nccl().init_rank(&comm_, size, id, rank), "ncclCommInitRank");
    device_ = device, rank_ = rank, size_ = size;
  }

  Status allreduce(const std::vector<NDArray>& arrays, double timeout_s) {
    return run(arrays, timeout_s, [&](const NDArray& a, cudaStream_t stream) {
      const NcclReduction r = nccl_reduction(a.dtype());
      return nccl().all_reduce(a.raw_data(), a.raw_data(), a.size() * r.scale, r.type, r.op, comm_,
                               stream);
    });
  }

  Status broadcast(const std::vector<NDArray>& arrays, int root, double timeout_s) {
    if (root < 0 || root >= size_)
      index_error("[nccl broadcast] root must be a rank in [0, ", size_, "), got ", root);
    return run(arrays, timeout_s, [&](const NDArray& a, cudaStream_t stream) {
      return nccl().broadcast(a.raw_data(), a.raw_data(), a.nbytes(), ncclUint8, root, comm_,
                              stream);
    });
  }

  const std::string& error() const { return error_; }

 private:
  static void check(ncclResult_t r, const char* what) {
    if (r != ncclSuccess)
      raise(ErrorKind::kRuntimeError, "[nccl] ", what, " failed: ", nccl().error_string(r));
  }

  template <typename Launch>
  Status run(const std::vector<NDArray>& arrays, double timeout_s, Launch launch) {
    if (!comm_) value_error("[nccl] the communicator is not initialized");
    if (broken_) return kFailed;
    for (size_t i = 0; i < arrays.size(); ++i) {
      const NDArray& a = arrays[i];
      if (!a.device().is_gpu() || a.device().id != device_)
        value_error("[nccl] array ", i, " is on ", a.device().str(), ", expected gpu(", device_,
                    ")");
      if (!a.is_contiguous()) value_error("[nccl] array ", i, " is not contiguous");
      if (a.size() > 0) nccl_reduction(a.dtype());  // a typed error before anything is queued
    }
    cuda::DeviceGuard guard(device_);
    auto stream = static_cast<cudaStream_t>(cuda::current_stream());
    check(nccl().group_start(), "ncclGroupStart");
    ncclResult_t launched = ncclSuccess;
    for (const NDArray& a : arrays)
      if (a.size() > 0 && launched == ncclSuccess) launched = launch(a, stream);
    const ncclResult_t grouped = nccl().group_end();
    if (launched != ncclSuccess || grouped != ncclSuccess) {
      fail(std::string("rank ") + std::to_string(rank_) +
           ": NCCL failed: " + nccl().error_string(launched != ncclSuccess ? launched : grouped));
      return kFailed;
    }
    return wait(stream, timeout_s);
  }

  // Polls until the stream is done, NCCL reports an error, or the deadline passes.
  Status wait(cudaStream_t stream, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    for (;;) {
      if (cuda::stream_done(stream)) return kDone;
      ncclResult_t async = ncclSuccess;
      nccl().async_error(comm_, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        fail(std::string("rank ") + std::to_string(rank_) +
             ": NCCL failed: " + nccl().error_string(async));
        return kFailed;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        fail(std::string("rank ") + std::to_string(rank_) +
             ": an NCCL collective did not complete within " + std::to_string(timeout_s) +
             " s: another worker died, hangs, or is far behind (NDX_DIST_TIMEOUT sets the "
             "limit)");
        return kTimedOut;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void fail(std::string why) {
    error_ = std::move(why);
    broken_ = true;
    nccl().abort(comm_);  // frees the stuck kernels; the communicator is unusable after
  }

  ncclComm_t comm_ = nullptr;
  int device_ = 0, rank_ = 0, size_ = 1;
  bool broken_ = false;
  std::string error_;
};

}  // namespace

NDX_REGISTER_API("_dist.nccl_unique_id")
    .describe("A new NCCL unique id, as a uint8 array (rank 0 makes it; all ranks join with it).")
    .set_body_typed([]() {
      ncclUniqueId id;
      const ncclResult_t r = nccl().get_unique_id(&id);
      if (r != ncclSuccess)
        raise(ErrorKind::kRuntimeError, "[nccl] ncclGetUniqueId failed: ", nccl().error_string(r));
      NDArray out(Shape{static_cast<int64_t>(sizeof(id.internal))}, DType::kUInt8, cpu());
      std::memcpy(out.raw_data(), id.internal, sizeof(id.internal));
      return out;
    });

NDX_REGISTER_API("_dist.nccl_init")
    .set_body_typed([](NDArray id_bytes, int64_t rank, int64_t size, int64_t device) {
      ncclUniqueId id;
      if (id_bytes.dtype() != DType::kUInt8 || id_bytes.nbytes() != sizeof(id.internal) ||
          !id_bytes.device().is_cpu() || !id_bytes.is_contiguous())
        value_error("[nccl] the unique id must be ", sizeof(id.internal), " uint8 CPU bytes");
      if (size < 1 || rank < 0 || rank >= size)
        value_error("[nccl] rank ", rank, " is not in a world of size ", size);
      std::memcpy(id.internal, id_bytes.raw_data(), sizeof(id.internal));
      NcclComm::get().init(id, static_cast<int>(rank), static_cast<int>(size),
                           static_cast<int>(device));
    });

NDX_REGISTER_API("_dist.nccl_allreduce")
    .set_body_typed([](std::vector<NDArray> arrays, double timeout_s) {
      return static_cast<int64_t>(NcclComm::get().allreduce(arrays, timeout_s));
    });

NDX_REGISTER_API("_dist.nccl_broadcast")
    .set_body_typed([](std::vector<NDArray> arrays, int64_t root, double timeout_s) {
      return static_cast<int64_t>(
          NcclComm::get().broadcast(arrays, static_cast<int>(root), timeout_s));
    });

NDX_REGISTER_API("_dist.nccl_error").set_body_typed([]() {
  static thread_local std::string last;
  last = NcclComm::get().error();
  return Value(std::string_view(last));
});

}  // namespace ndx::dist
