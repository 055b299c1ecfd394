// Many threads at once through the shared parts of the core: the op registry and attribute
// parsing, the storage pool, autograd's per-thread recording state, the FFI and its C ABI,
// and the kernel engine's thread pool. Each thread checks its own results against values
// computed by hand; `make tsan` runs these tests under ThreadSanitizer to find races the
// results cannot show.
#include <atomic>
#include <mutex>
#include <thread>

#include "ndx/autograd.h"
#include "ndx/c_api.h"
#include "ndx/ffi.h"
#include "ndx/runtime.h"
#include "test_util.h"

namespace ndx {
namespace {

constexpr int kThreads = 8;

// Runs body(t) on kThreads threads at once; the first failure (an exception) is rethrown.
void on_threads(const std::function<void(int)>& body) {
  std::atomic<int> ready{0};
  std::exception_ptr failure;
  std::mutex failure_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      try {
        body(t);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mu);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& th : threads) th.join();
  if (failure) std::rethrow_exception(failure);
}

TEST(Threads, RegistryLookupsAndAttributeParsing) {
  std::atomic<int> wrong{0};
  on_threads([&](int t) {
    for (int i = 0; i < 200; ++i) {
      NodeAttrs zeros = Op::get("_npi_zeros")
                            ->make_attrs({{"shape", Value(Shape{t + 1, i % 5})},
                                          {"dtype", Value(std::string_view("int32"))}});
      NDArray z = invoke(zeros, {})[0];
      if (z.shape() != Shape({t + 1, i % 5}) || z.dtype() != DType::kInt32) ++wrong;
      NodeAttrs sum = Op::get("_np_sum")->make_attrs({{"axis", Value(Shape{1})}});
      NDArray s = invoke(sum, {np::ones({2, t + 1})})[0];
      if (s.to_vector<double>() != std::vector<double>(2, t + 1.0)) ++wrong;
      if (Op::get("_np_add")->name != "_np_add") ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Threads, StoragePoolServesEveryThread) {
  std::atomic<int> wrong{0};
  on_threads([&](int t) {
    for (int i = 0; i < 300; ++i) {
      // Sizes that land in the same pool buckets across threads, freed at once and reused.
      int64_t n = 1 + (i * 37 + t) % 4096;
      NDArray a = np::full({n}, static_cast<double>(t), DType::kFloat64);
      NDArray b = np::full({n}, 1.0, DType::kFloat64);
      std::vector<double> s = (a + b).to_vector<double>();
      for (double v : s)
        if (v != t + 1) {
          ++wrong;
          break;
        }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Threads, ArraysOutliveTheThreadsThatMadeThemAndDieOnOthers) {
  // Each thread makes arrays, hands half to the next thread to drop and keeps the rest past
  // its own end: Storage blocks cross threads both ways and thread-exit caches empty while
  // arrays made there live on.
  std::vector<std::vector<NDArray>> handed(kThreads), kept(kThreads);
  std::mutex mu;
  on_threads([&](int t) {
    for (int i = 0; i < 200; ++i) {
      NDArray a = np::full({1 + i % 7}, static_cast<double>(t * 1000 + i), DType::kFloat64);
      std::lock_guard<std::mutex> lock(mu);
      (i % 2 ? handed[(t + 1) % kThreads] : kept[t]).push_back(a);
    }
    std::vector<NDArray> mine;
    {
      std::lock_guard<std::mutex> lock(mu);
      mine.swap(handed[t]);
    }
    mine.clear();  // dropped here, made by the previous thread
  });
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(kept[t].size(), 100u);
    for (int k = 0; k < 100; ++k) {
      const int i = 2 * k;
      EXPECT_EQ(kept[t][k].to_vector<double>(), std::vector<double>(1 + i % 7, t * 1000 + i));
    }
  }
  handed.clear();
  kept.clear();  // dropped on the main thread after their threads ended
}

TEST(Threads, AutogradStateIsPerThread) {
  std::atomic<int> wrong{0};
  on_threads([&](int t) {
    for (int i = 0; i < 50; ++i) {
      NDArray x = NDArray::from_vector<double>({1.0 + t, 2.0}, {2});
      autograd::attach_grad(x);
      NDArray y;
      {
        // Half the threads record; the others must not see recording switched on.
        autograd::RecordScope record(t % 2 == 0);
        if (autograd::is_recording() != (t % 2 == 0)) ++wrong;
        y = np::sum(x * x * 3.0);  // dy/dx = 6x
      }
      if (t % 2 == 0) {
        autograd::backward({y});
        std::vector<double> g = autograd::grad_of(x).to_vector<double>();
        if (g != std::vector<double>{6.0 * (1 + t), 12.0}) ++wrong;
      } else if (autograd::requires_grad(y)) {
        ++wrong;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Threads, FfiAndCApiCalls) {
  std::atomic<int> wrong{0};
  on_threads([&](int t) {
    NDXFuncHandle zeros = nullptr;
    if (NDXFuncGet("_npi.zeros", &zeros) != 0) ++wrong;
    for (int i = 0; i < 100; ++i) {
      int64_t dims[1] = {t + i % 3};
      NDXValue args[3] = {};
      args[0].type_code = kNDXShape;
      args[0].v_dims = dims;
      args[0].size = 1;
      args[1].type_code = kNDXDType;
      args[1].v_str = "float32";
      args[2].type_code = kNDXNone;
      NDXValue ret;
      if (NDXFuncCall(zeros, args, 3, &ret) != 0) {
        ++wrong;
        continue;
      }
      int ndim = 0;
      const int64_t* shape = nullptr;
      NDXArrayGetShape(ret.v_array, &ndim, &shape);
      if (ndim != 1 || shape[0] != dims[0]) ++wrong;
      NDXArrayFree(ret.v_array);
      // An error on one thread is that thread's last error only.
      args[0].v_dims = nullptr;
      args[0].size = -1;
      if (NDXFuncCall(zeros, args, 3, &ret) == 0) ++wrong;
      if (std::string(NDXGetLastError()).empty()) ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Threads, KernelPoolSharedByCallingThreads) {
  int saved = num_threads();
  set_num_threads(3);
  std::atomic<int> wrong{0};
  on_threads([&](int t) {
    for (int i = 0; i < 4; ++i) {
      // Above the 32768-element threshold, so the pool splits each call.
      NDArray a = np::full({100000}, 0.5 * t, DType::kFloat64);
      double s = np::sum(np::exp(a) * 2.0).to_vector<double>()[0];
      double want = 100000 * 2.0 * std::exp(0.5 * t);
      if (std::abs(s - want) > 1e-9 * want) ++wrong;
    }
  });
  set_num_threads(saved);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace ndx
