// The kernel engine itself: the N-operand iterator against a brute-force walk, results that do
// not depend on the thread count (bit for bit, sums included: their blocking is fixed), small
// arrays that start no thread, and the Philox generator against its published answers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernel/iterator.h"
#include "kernel/random.h"
#include "ndx/imperative.h"
#include "ndx/ndarray.h"
#include "ndx/op.h"
#include "ndx/runtime.h"

namespace {

using ndx::DType;
using ndx::NDArray;
using ndx::Shape;

// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = ndx::num_threads();
  ~ThreadsGuard() { ndx::set_num_threads(saved); }
};

TEST(KernelIterator, RunsCoverRangesExactlyAsABruteForceWalk) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int nd = 1 + static_cast<int>(rng() % 4);
    Shape shape;
    for (int d = 0; d < nd; ++d) shape.push_back(static_cast<int64_t>(rng() % 4) + 1);
    // Operand 0 contiguous, operand 1 with random (possibly 0 or negative) strides.
    Shape s0 = ndx::contiguous_strides(shape), s1;
    for (int d = 0; d < nd; ++d) s1.push_back(static_cast<int64_t>(rng() % 7) - 3);
    ndx::kernel::NdIter<2> it(shape, {s0.data(), s1.data()});
    const int64_t n = shape.size();
    ASSERT_EQ(it.size(), n);
    const int64_t b = n ? static_cast<int64_t>(rng() % n) : 0;
    const int64_t e = b + (n - b ? static_cast<int64_t>(rng() % (n - b)) + 1 : 0);
    std::vector<std::pair<int64_t, int64_t>> got;
    it.for_each_run(b, e, [&](const ndx::kernel::Run<2>& r) {
      for (int64_t i = 0; i < r.length; ++i)
        got.emplace_back(r.offset[0] + i * r.stride[0], r.offset[1] + i * r.stride[1]);
    });
    std::vector<std::pair<int64_t, int64_t>> want;
    for (int64_t flat = b; flat < e; ++flat) {
      int64_t rest = flat, o0 = 0, o1 = 0;
      for (int d = nd - 1; d >= 0; --d) {
        const int64_t i = rest % shape[d];
        rest /= shape[d];
        o0 += i * s0[d];
        o1 += i * s1[d];
      }
      want.emplace_back(o0, o1);
    }
    EXPECT_EQ(got, want) << "shape " << shape.str() << " strides " << s1.str() << " [" << b << ", "
                         << e << ")";
  }
}

NDArray random_array(Shape shape, DType t, uint64_t seed, double lo = -3, double hi = 3) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape.size()));
  for (double& x : v) x = u(rng);
  return NDArray::from_vector(v, shape).astype(t);
}

NDArray run(const char* op, std::vector<NDArray> in, std::map<std::string, std::string> p = {},
            int output = 0) {
  ndx::InvokeOptions o;
  o.all_outputs = true;
  o.is_train = true;
  return ndx::invoke(ndx::Op::get(op)->make_attrs(std::move(p)), in, o)[output];
}

bool bitwise_equal(const NDArray& a, const NDArray& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  NDArray ca = a.copy(), cb = b.copy();
  return std::memcmp(ca.raw_data(), cb.raw_data(), static_cast<size_t>(ca.nbytes())) == 0;
}

TEST(KernelThreads, ResultsDoNotDependOnTheThreadCount) {
  ThreadsGuard guard;
  // Large enough to be split (threads start above 32768 elements), odd sizes for ragged ends.
  NDArray x = random_array({613, 1031}, DType::kFloat32, 1);
  NDArray y = random_array({1031}, DType::kFloat32, 2, 0.5, 2);
  NDArray xh = x.astype(DType::kFloat16);
  NDArray xt = x.transpose();
  struct Case {
    const char* op;
    std::vector<NDArray> in;
    std::map<std::string, std::string> params;
  };
  const std::vector<Case> cases = {
      {"_np_exp", {x}, {}},
      {"_np_tanh", {xt}, {}},
      {"_np_add", {x, y}, {}},
      {"_np_true_divide", {xh, y}, {}},
      {"_np_sum", {x}, {}},
      {"_np_sum", {x}, {{"axis", "0"}}},
      {"_np_sum", {x}, {{"axis", "1"}}},
      {"_np_sum", {xt}, {{"axis", "1"}}},
      {"_np_mean", {xh}, {}},
      {"_np_max", {x}, {{"axis", "0"}}},
      {"_np_argmax", {x}, {}},
      {"_np_argmax", {x}, {{"axis", "0"}}},
      {"_np_argmin", {x}, {{"axis", "1"}}},
      {"_npx_softmax", {x}, {}},
      {"_npx_log_softmax", {x}, {{"axis", "0"}}},
      {"_npx_layer_norm", {x, y, y}, {}},
  };
  for (const Case& c : cases) {
    ndx::set_num_threads(1);
    const NDArray one = run(c.op, c.in, c.params);
    for (int threads : {2, 3, 4}) {
      ndx::set_num_threads(threads);
      EXPECT_TRUE(bitwise_equal(one, run(c.op, c.in, c.params)))
          << c.op << " differs between 1 and " << threads << " threads";
    }
  }
}

// argmax / argmin over long axes go through blocks merged in order: the first extremum and
// the first NaN must still win, as a single scan finds them.
TEST(KernelArgReduce, FirstOccurrenceAndNaNAcrossBlocks) {
  ThreadsGuard guard;
  const int64_t rows = 3000, cols = 70;  // 210000 elements: several blocks either way
  std::vector<float> v(static_cast<size_t>(rows * cols));
  std::mt19937_64 rng(5);
  for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 50));  // many ties
  v[static_cast<size_t>(2500 * cols + 3)] = 1000;                           // column 3's max...
  v[static_cast<size_t>(2900 * cols + 3)] = 1000;                           // ...tied later
  v[static_cast<size_t>(1234 * cols + 5)] = std::nanf("");                  // column 5: NaN...
  v[static_cast<size_t>(2999 * cols + 5)] = 2000;                           // ...beats a later max
  v[static_cast<size_t>(150000)] = -1000;  // the flat minimum, once
  NDArray x = NDArray::from_vector(v, Shape{rows, cols});
  auto ref_axis0 = [&](bool is_max) {
    std::vector<int64_t> out(cols);
    for (int64_t j = 0; j < cols; ++j) {
      int64_t best = 0;
      for (int64_t i = 1; i < rows; ++i) {
        const float a = v[static_cast<size_t>(best * cols + j)],
                    b = v[static_cast<size_t>(i * cols + j)];
        if (std::isnan(a)) break;
        if (std::isnan(b) || (is_max ? b > a : b < a)) best = i;
      }
      out[static_cast<size_t>(j)] = best;
    }
    return out;
  };
  for (int threads : {1, 2, 3}) {
    ndx::set_num_threads(threads);
    EXPECT_EQ(run("_np_argmax", {x}, {{"axis", "0"}}).to_vector<int64_t>(), ref_axis0(true));
    EXPECT_EQ(run("_np_argmin", {x}, {{"axis", "0"}}).to_vector<int64_t>(), ref_axis0(false));
    EXPECT_EQ(run("_np_argmax", {x}).item<int64_t>(), 1234 * cols + 5);  // the NaN
    EXPECT_EQ(run("_np_argmin", {x}).item<int64_t>(), 1234 * cols + 5);
    NDArray y = x.copy();
    y.reshape({-1}).slice(0, 1234 * cols + 5, 1234 * cols + 6).fill(0);  // no NaN now
    EXPECT_EQ(run("_np_argmin", {y}).item<int64_t>(), 150000);
    EXPECT_EQ(run("_np_argmax", {y}).item<int64_t>(), 2999 * cols + 5);
  }
}

// Transposing copies take the tiled path from 64 x 64 on: partial tiles, every element size.
TEST(KernelCopy, TransposedCopiesMatchElementByElement) {
  for (DType t : {DType::kInt8, DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
    for (Shape s : {Shape{600, 77}, Shape{1000, 530}, Shape{64, 64}, Shape{65, 700}}) {
      NDArray a = random_array(s, DType::kFloat64, 9, -100, 100).astype(t);
      NDArray c = a.transpose().copy();
      ASSERT_EQ(c.shape(), (Shape{s[1], s[0]}));
      std::vector<double> av = a.to_vector<double>(), cv = c.to_vector<double>();
      bool same = true;
      for (int64_t i = 0; i < s[0] && same; ++i)
        for (int64_t j = 0; j < s[1] && same; ++j)
          same = cv[static_cast<size_t>(j * s[0] + i)] == av[static_cast<size_t>(i * s[1] + j)];
      EXPECT_TRUE(same) << "transpose copy of " << s.str() << " as " << t;
    }
  }
}

TEST(KernelThreads, DropoutMasksDependOnTheSeedOnly) {
  ThreadsGuard guard;
  NDArray x = NDArray::from_vector(std::vector<float>(200000, 1.0f), Shape{200000});
  std::vector<NDArray> masks;
  for (int threads : {1, 2, 4}) {
    ndx::set_num_threads(threads);
    ndx::random_seed(123);
    masks.push_back(run("_npx_dropout", {x}, {{"p", "0.3"}}, 1));
  }
  EXPECT_TRUE(bitwise_equal(masks[0], masks[1]));
  EXPECT_TRUE(bitwise_equal(masks[0], masks[2]));
  // About 30% dropped, the rest scaled by 1 / 0.7.
  std::vector<float> m = masks[0].to_vector<float>();
  int64_t dropped = 0;
  for (float v : m) {
    if (v == 0)
      ++dropped;
    else
      EXPECT_FLOAT_EQ(v, 1.0f / 0.7f);
  }
  EXPECT_NEAR(static_cast<double>(dropped) / m.size(), 0.3, 0.005);
}

TEST(KernelThreads, ArraysUnder32KElementsStartNoThread) {
  ThreadsGuard guard;
  ndx::set_num_threads(4);
  NDArray x = random_array({32767}, DType::kFloat32, 3);
  const int64_t before = ndx::threads_started();
  for (int i = 0; i < 20; ++i) {
    run("_np_exp", {x});
    run("_np_add", {x, x});
    run("_np_sum", {x});
    run("_npx_softmax", {x});
    run("_np_argmax", {x});
    x.astype(DType::kFloat16);
  }
  EXPECT_EQ(ndx::threads_started(), before);
}

TEST(KernelThreads, SetNumThreadsRoundTrips) {
  ThreadsGuard guard;
  ndx::set_num_threads(3);
  EXPECT_EQ(ndx::num_threads(), 3);
  ndx::set_num_threads(0);
  EXPECT_EQ(ndx::num_threads(), ndx::default_num_threads());
}

// Known answers of Philox4x32-10 from the Random123 distribution (kat_vectors).
TEST(KernelRandom, Philox4x32MatchesPublishedAnswers) {
  using ndx::kernel::Philox4x32;
  auto gen = [](uint32_t k0, uint32_t k1) {
    return Philox4x32(static_cast<uint64_t>(k0) | (static_cast<uint64_t>(k1) << 32));
  };
  EXPECT_EQ(gen(0, 0)({0, 0, 0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(gen(0xffffffff, 0xffffffff)({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(gen(0xa4093822, 0x299f31d0)({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

}  // namespace
