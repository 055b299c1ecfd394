// oneDNN (Debian's libdnnl, 2.x API) behind the plain interface of dnnl_ops.h. The only
// translation unit that includes oneDNN's headers.
//
// Each problem gets a Plan, built once per thread and per problem (the key is every number
// of the spec) and kept: the primitive, and for each argument whose layout oneDNN wants
// blocked (nChw16c, OIhw16i16o, ...) an internal buffer plus the reorders to and from the
// caller's plain layout. A call then only points the user memories at the caller's buffers
// and runs reorder, primitive, reorder. oneDNN runs on its OpenMP team, sized to ndx's
// thread count before each call, with the GIL released for calls of real size.
#include "operator/dnnl_ops.h"

#include "ndx/runtime.h"

#include <cstdlib>
#include <cstring>

#ifdef NDX_HAVE_DNNL
#include <omp.h>

#include <algorithm>
#include <array>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kernel/parallel.h"
#endif

namespace ndx::dnnl {

#ifndef NDX_HAVE_DNNL

bool enabled() { return false; }
bool conv_forward(const ConvSpec&, const float*, const float*, const float*, float*, bool,
                  const ConvEpilogue*) {
  return false;
}
bool conv_backward_data(const ConvSpec&, const float*, const float*, float*) { return false; }
bool conv_backward_both(const ConvSpec&, const float*, const float*, const float*, float*, float*,
                        float*) {
  return false;
}
bool conv_backward_weights(const ConvSpec&, const float*, const float*, float*, float*) {
  return false;
}
bool pool_forward(const PoolSpec&, const float*, float*) { return false; }
bool pool_backward(const PoolSpec&, const float*, const float*, float*) { return false; }
bool conv_int8_forward(const ConvSpec&, const Int8Spec&, const void*, const int8_t*, const float*,
                       const float*, void*) {
  return false;
}
bool inner_product_int8(int64_t, int64_t, int64_t, const Int8Spec&, const void*, const int8_t*,
                        const float*, const float*, void*) {
  return false;
}
bool pool_int8_forward(const PoolSpec&, bool, const void*, void*) { return false; }

#else

namespace {

using ::dnnl::algorithm;
using ::dnnl::engine;
using ::dnnl::memory;
using ::dnnl::prop_kind;
using ::dnnl::stream;
using Tag = memory::format_tag;
using Dims = memory::dims;
constexpr auto kF32 = memory::data_type::f32;

bool env_enabled() {
  const char* v = std::getenv("NDX_DNNL");
  return !(v && std::strcmp(v, "0") == 0);
}

engine& cpu_engine() {
  static engine e(engine::kind::cpu, 0);
  return e;
}

stream& cpu_stream() {  // oneDNN's CPU streams are cheap; one per thread avoids sharing one
  thread_local stream s(cpu_engine());
  return s;
}

// The plain layout of an (N, C, spatial...) activation and of (O, I, spatial...) weights
// (with a leading G when grouped).
Tag data_tag(int nsp) { return nsp == 1 ? Tag::ncw : nsp == 2 ? Tag::nchw : Tag::ncdhw; }
Tag weight_tag(int nsp, bool grouped) {
  if (grouped) return nsp == 1 ? Tag::goiw : nsp == 2 ? Tag::goihw : Tag::goidhw;
  return nsp == 1 ? Tag::oiw : nsp == 2 ? Tag::oihw : Tag::oidhw;
}

// Channels in blocks of the widest vector oneDNN's JIT kernels use on this processor.
Tag blocked_tag(int nsp) {
  const bool wide = ::dnnl::get_effective_cpu_isa() >= ::dnnl::cpu_isa::avx512_core;
  if (nsp == 1) return wide ? Tag::nCw16c : Tag::nCw8c;
  if (nsp == 2) return wide ? Tag::nChw16c : Tag::nChw8c;
  return wide ? Tag::nCdhw16c : Tag::nCdhw8c;
}

Dims spatial(const int64_t* v, int nsp, int64_t minus = 0) {
  Dims d;
  for (int i = 0; i < nsp; ++i) d.push_back(v[i] - minus);
  return d;
}

Dims cat(Dims a, const Dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// One argument of a primitive: the caller's plain memory and, when the primitive wants
// another layout, an internal buffer with the reorder between the two.
struct Slot {
  memory user;
  memory inner;
  ::dnnl::reorder reorder;  // user -> inner for inputs, inner -> user for outputs
  bool blocked = false;

  void init(const memory::desc& plain, const memory::desc& wanted, bool input) {
    user = memory(plain, cpu_engine(), DNNL_MEMORY_NONE);
    blocked = plain != wanted;
    if (!blocked) return;
    inner = memory(wanted, cpu_engine());
    reorder = input ? ::dnnl::reorder(user, inner) : ::dnnl::reorder(inner, user);
  }
  // The memory the primitive reads: the caller's buffer, reordered first when blocked.
  const memory& in(const void* p) {
    user.set_data_handle(const_cast<void*>(p));
    if (blocked) reorder.execute(cpu_stream(), user, inner);
    return blocked ? inner : user;
  }
  // The memory the primitive writes; `flush` moves it to the caller's buffer afterwards.
  const memory& out(void* p) {
    user.set_data_handle(p);
    return blocked ? inner : user;
  }
  void flush() {
    if (blocked) reorder.execute(cpu_stream(), inner, user);
  }
};

// Reorders of the weights one plan has seen: layers of one shape share a plan, so a network
// passes it several weight arrays in turn. Each keeps a copy of the caller's bytes (to see a
// change, memcmp) and its own blocked buffer; a few per plan, the least recently used
// replaced. The extra memory, two copies of an inference network's weights, buys the
// reorders (14% of a float resnet18_v1 forward, half of a quantized one).
struct WeightCache {
  struct Entry {
    const void* ptr = nullptr;
    std::vector<char> seen;
    std::vector<float> scale;   // the per-channel factors folded in (none: empty)
    std::vector<float> folded;  // the folded weights, when the primitive reads them plain
    memory inner;
    uint64_t used = 0;
  };
  std::vector<Entry> entries;
  uint64_t clock = 0;
};
constexpr size_t kWeightsPerPlan = 8;

// Float32 weights with the block of each of their f output channels (the leading dim, for
// grouped weights too) multiplied by scale[o]: a batch_norm folded into the convolution.
void fold_scale(const float* w, const float* scale, int64_t f, size_t count,
                std::vector<float>* out) {
  out->resize(count);
  const size_t block = count / static_cast<size_t>(f);
  for (size_t o = 0; o < static_cast<size_t>(f); ++o)
    for (size_t i = 0; i < block; ++i) (*out)[o * block + i] = w[o * block + i] * scale[o];
}

// The primitive's weights: slot's reorder of w (with scale folded in when not null, one per
// output channel), reused while w and scale are unchanged.
const memory& reused_weights(Slot& slot, WeightCache& cache, const void* w,
                             const float* scale = nullptr, int64_t f = 0) {
  if (!slot.blocked && !scale) return slot.in(w);
  const size_t bytes = slot.user.get_desc().get_size();
  const char* raw = static_cast<const char*>(w);
  const auto same_scale = [&](const std::vector<float>& seen) {
    return scale ? seen.size() == static_cast<size_t>(f) &&
                       std::memcmp(seen.data(), scale, seen.size() * sizeof(float)) == 0
                 : seen.empty();
  };
  WeightCache::Entry* hit = nullptr;
  for (auto& e : cache.entries)
    if (e.ptr == w) hit = &e;
  if (hit && hit->seen.size() == bytes && std::memcmp(hit->seen.data(), raw, bytes) == 0 &&
      same_scale(hit->scale)) {
    hit->used = ++cache.clock;
    return slot.blocked ? hit->inner : slot.in(hit->folded.data());
  }
  if (!hit) {
    if (cache.entries.size() < kWeightsPerPlan) {
      hit = &cache.entries.emplace_back();
      if (slot.blocked) hit->inner = memory(slot.inner.get_desc(), cpu_engine());
    } else {
      hit = &*std::min_element(cache.entries.begin(), cache.entries.end(),
                               [](const auto& a, const auto& b) { return a.used < b.used; });
    }
    hit->ptr = w;
  }
  const void* source = w;
  hit->scale.clear();
  hit->folded.clear();
  if (scale) {
    fold_scale(static_cast<const float*>(w), scale, f, bytes / sizeof(float), &hit->folded);
    hit->scale.assign(scale, scale + f);
    source = hit->folded.data();
  }
  hit->seen.assign(raw, raw + bytes);
  hit->used = ++cache.clock;
  if (!slot.blocked) return slot.in(source);
  slot.user.set_data_handle(const_cast<void*>(source));
  slot.reorder.execute(cpu_stream(), slot.user, hit->inner);
  if (scale) hit->folded = {};  // (the blocked copy is the one kept)
  return hit->inner;
}

// Runs f with oneDNN's team sized to ndx's thread count and the GIL released when the
// problem is large enough to be worth it.
template <class F>
void run(int64_t work, F&& f) {
  const int threads = kernel::num_threads();
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
  if (threads > 1) kernel::park_workers();
  kernel::AllowThreads unlocked(work >= kernel::kReleaseGil);
  f();
  cpu_stream().wait();
}

// A per-thread cache of plans keyed by the numbers that define a problem.
using Key = std::array<int64_t, 32>;
struct KeyHash {
  size_t operator()(const Key& k) const noexcept {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

// The cached plan of a problem, made on first use; null when oneDNN has no primitive for it
// (remembered, so the refusal costs one lookup after the first). A returned plan stays valid
// through the caller's next lookup too (conv_backward_both holds two plans): a full cache is
// retired whole and freed only when the next one fills.
template <class Plan>
using PlanCache = std::unordered_map<Key, std::unique_ptr<Plan>, KeyHash>;

// The thread's cache of Plans (one per Plan type, whoever makes them), and the retired one.
template <class Plan>
std::pair<PlanCache<Plan>*, PlanCache<Plan>*> plan_caches() {
  thread_local PlanCache<Plan> cache, retired;
  return {&cache, &retired};
}

// make(key) builds a plan (a function, or a lambda holding what the key only hashes).
template <class Plan, class Make>
Plan* plan_for(Key key, Make&& make) {
  using Cache = PlanCache<Plan>;
  auto [cache_ptr, retired_ptr] = plan_caches<Plan>();
  Cache &cache = *cache_ptr, &retired = *retired_ptr;
  // oneDNN splits the work of a primitive among the threads it sees when it is created, so a
  // plan is per thread count too (the last slot of every key is free for it).
  omp_set_num_threads(kernel::num_threads());
  key.back() = kernel::num_threads();
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() > 256) {  // bounded: shapes of a long-running server
      retired = std::move(cache);
      cache = Cache();
    }
    std::unique_ptr<Plan> plan;
    try {
      plan = std::make_unique<Plan>(make(key));
    } catch (const ::dnnl::error&) {
      // no primitive for this problem: the op's own kernel runs it
    }
    it = cache.emplace(key, std::move(plan)).first;
  }
  return it->second.get();
}

bool all_positive(std::initializer_list<int64_t> dims, const int64_t* a, const int64_t* b,
                  int nsp) {
  for (int64_t d : dims)
    if (d <= 0) return false;
  for (int i = 0; i < nsp; ++i)
    if (a[i] <= 0 || b[i] <= 0) return false;
  return true;
}

// ---------------------------------------------------------------- convolution

enum class ConvPass : int64_t {
  kForward,
  kForwardBias,
  kBackwardData,
  kBackwardWeights,
  kBackwardWeightsBias
};

Key conv_key(const ConvSpec& s, ConvPass pass) {
  Key k{};
  int i = 0;
  k[i++] = static_cast<int64_t>(pass);
  k[i++] = s.nsp, k[i++] = s.transposed, k[i++] = s.n, k[i++] = s.c, k[i++] = s.f,
  k[i++] = s.groups;
  for (int d = 0; d < 3; ++d) {
    k[i++] = s.in[d], k[i++] = s.k[d], k[i++] = s.stride[d], k[i++] = s.dilate[d];
    k[i++] = s.pad_l[d], k[i++] = s.pad_r[d], k[i++] = s.out[d];
  }
  return k;
}

ConvSpec spec_of(const Key& k) {
  ConvSpec s;
  int i = 1;
  s.nsp = static_cast<int>(k[i++]), s.transposed = k[i++] != 0, s.n = k[i++], s.c = k[i++],
  s.f = k[i++], s.groups = k[i++];
  for (int d = 0; d < 3; ++d) {
    s.in[d] = k[i++], s.k[d] = k[i++], s.stride[d] = k[i++], s.dilate[d] = k[i++];
    s.pad_l[d] = k[i++], s.pad_r[d] = k[i++], s.out[d] = k[i++];
  }
  return s;
}

// The memory descriptors of one convolution: plain (the caller's) and "any" (oneDNN picks).
struct ConvDescs {
  memory::desc src, wei, bias, dst, src_any, wei_any, dst_any;
  Dims strides, dilates, pad_l, pad_r;
};

ConvDescs conv_descs(const ConvSpec& s) {
  ConvDescs d;
  const int nsp = s.nsp;
  const bool grouped = s.groups > 1;
  const Dims src_dims = cat({s.n, s.c}, spatial(s.in, nsp));
  const Dims dst_dims = cat({s.n, s.f}, spatial(s.out, nsp));
  // oneDNN's weights are (G, O/G, I/G, k...) with O = f and I = c for both directions.
  Dims wei_dims = grouped ? Dims{s.groups, s.f / s.groups, s.c / s.groups} : Dims{s.f, s.c};
  wei_dims = cat(wei_dims, spatial(s.k, nsp));
  d.wei = memory::desc(wei_dims, kF32, weight_tag(nsp, grouped));
  if (s.transposed) {  // ndx's (c, f/g, k...) weights: i before o in memory
    int64_t kk = 1;
    for (int i = 0; i < nsp; ++i) kk *= s.k[i];
    const int64_t og = s.f / s.groups, ig = s.c / s.groups;
    Dims strides = grouped ? Dims{ig * og * kk, kk, og * kk} : Dims{kk, og * kk};
    int64_t inner = kk;
    for (int i = 0; i < nsp; ++i) strides.push_back(inner /= s.k[i]);
    d.wei = memory::desc(wei_dims, kF32, strides);
  }
  d.src = memory::desc(src_dims, kF32, data_tag(nsp));
  d.dst = memory::desc(dst_dims, kF32, data_tag(nsp));
  d.bias = memory::desc({s.f}, kF32, Tag::x);
  d.src_any = memory::desc(src_dims, kF32, Tag::any);
  d.dst_any = memory::desc(dst_dims, kF32, Tag::any);
  d.wei_any = memory::desc(wei_dims, kF32, Tag::any);
  d.strides = spatial(s.stride, nsp);
  d.dilates = spatial(s.dilate, nsp, 1);
  d.pad_l = spatial(s.pad_l, nsp);
  d.pad_r = spatial(s.pad_r, nsp);
  return d;
}

// The forward primitive descriptor (also the hint the backward passes need).
template <class Fwd>
typename Fwd::primitive_desc forward_pd(const ConvSpec& s, const ConvDescs& d, bool bias,
                                        const ::dnnl::primitive_attr& attr = {}) {
  const algorithm alg =
      s.transposed ? algorithm::deconvolution_direct : algorithm::convolution_direct;
  auto desc = bias ? typename Fwd::desc(prop_kind::forward_training, alg, d.src_any, d.wei_any,
                                        d.bias, d.dst_any, d.strides, d.dilates, d.pad_l, d.pad_r)
                   : typename Fwd::desc(prop_kind::forward_training, alg, d.src_any, d.wei_any,
                                        d.dst_any, d.strides, d.dilates, d.pad_l, d.pad_r);
  return typename Fwd::primitive_desc(desc, attr, cpu_engine());
}

// A forward's post-ops as the key's slot kEpilogueSlot holds them: 1 the sum. (An epilogue's
// affine map is folded into the weights and the bias instead: oneDNN 2's JIT convolutions take
// binary post-ops, but not with a sum, which must come first, and a ref:any convolution with
// them took 100 times as long.)
constexpr int kEpilogueSlot = 28;
constexpr int64_t kSum = 1;

int64_t post_ops_code(const ConvEpilogue* e) { return e && e->sum ? kSum : 0; }

// The post-ops oneDNN applies to the accumulator (bias included) before it stores it.
::dnnl::primitive_attr epilogue_attr(int64_t code) {
  ::dnnl::primitive_attr attr;
  if (!code) return attr;
  ::dnnl::post_ops ops;
  if (code & kSum) ops.append_sum(1.f);
  attr.set_post_ops(ops);
  return attr;
}

struct ConvPlan {
  ::dnnl::primitive prim;
  Slot a, b, c;         // forward: src, wei, dst; backward data: diff_dst, wei, diff_src;
                        // backward weights: src, diff_dst, diff_wei
  memory bias;          // user memory of the bias or its gradient (plain, never blocked)
  WeightCache weights;  // inference forwards: b's reorders, reused while unchanged
  // A forward's sum: the residual and its reorder into c's blocked buffer (the sum adds what
  // the destination holds).
  memory sum_user;
  ::dnnl::reorder sum_reorder;
};

template <class Fwd, class BwdData, class BwdWeights>
ConvPlan make_conv_plan_t(const Key& key) {
  const auto pass = static_cast<ConvPass>(key[0]);
  const ConvSpec s = spec_of(key);
  const ConvDescs d = conv_descs(s);
  const algorithm alg =
      s.transposed ? algorithm::deconvolution_direct : algorithm::convolution_direct;
  ConvPlan p;
  switch (pass) {
    case ConvPass::kForward:
    case ConvPass::kForwardBias: {
      const bool bias = pass == ConvPass::kForwardBias;
      const int64_t epilogue = key[kEpilogueSlot];
      auto pd = forward_pd<Fwd>(s, d, bias, epilogue_attr(epilogue));
      p.prim = Fwd(pd);
      p.a.init(d.src, pd.src_desc(), true);
      p.b.init(d.wei, pd.weights_desc(), true);
      p.c.init(d.dst, pd.dst_desc(), false);
      if (bias) p.bias = memory(d.bias, cpu_engine(), DNNL_MEMORY_NONE);
      if ((epilogue & kSum) && p.c.blocked) {
        p.sum_user = memory(d.dst, cpu_engine(), DNNL_MEMORY_NONE);
        p.sum_reorder = ::dnnl::reorder(p.sum_user, p.c.inner);
      }
      break;
    }
    case ConvPass::kBackwardData: {
      auto hint = forward_pd<Fwd>(s, d, false);
      typename BwdData::desc desc(alg, d.src_any, d.wei_any, d.dst_any, d.strides, d.dilates,
                                  d.pad_l, d.pad_r);
      typename BwdData::primitive_desc pd(desc, cpu_engine(), hint);
      p.prim = BwdData(pd);
      p.a.init(d.dst, pd.diff_dst_desc(), true);
      p.b.init(d.wei, pd.weights_desc(), true);
      p.c.init(d.src, pd.diff_src_desc(), false);
      break;
    }
    case ConvPass::kBackwardWeights:
    case ConvPass::kBackwardWeightsBias: {
      const bool bias = pass == ConvPass::kBackwardWeightsBias;
      auto hint = forward_pd<Fwd>(s, d, bias);
      auto desc = bias ? typename BwdWeights::desc(alg, d.src_any, d.wei_any, d.bias, d.dst_any,
                                                   d.strides, d.dilates, d.pad_l, d.pad_r)
                       : typename BwdWeights::desc(alg, d.src_any, d.wei_any, d.dst_any, d.strides,
                                                   d.dilates, d.pad_l, d.pad_r);
      typename BwdWeights::primitive_desc pd(desc, cpu_engine(), hint);
      p.prim = BwdWeights(pd);
      p.a.init(d.src, pd.src_desc(), true);
      p.b.init(d.dst, pd.diff_dst_desc(), true);
      p.c.init(d.wei, pd.diff_weights_desc(), false);
      if (bias) p.bias = memory(d.bias, cpu_engine(), DNNL_MEMORY_NONE);
      break;
    }
  }
  return p;
}

ConvPlan make_conv_plan(const Key& key) {
  if (key[2])
    return make_conv_plan_t< ::dnnl::deconvolution_forward, ::dnnl::deconvolution_backward_data,
                             ::dnnl::deconvolution_backward_weights>(key);
  return make_conv_plan_t< ::dnnl::convolution_forward, ::dnnl::convolution_backward_data,
                           ::dnnl::convolution_backward_weights>(key);
}

int64_t conv_work(const ConvSpec& s) {
  int64_t w = s.n * s.c * s.f / s.groups;
  for (int i = 0; i < s.nsp; ++i) w *= s.out[i] * s.k[i];
  return w;
}

// ---------------------------------------------------------------- pooling

enum class PoolPass : int64_t { kForward, kBackward };

Key pool_key(const PoolSpec& s, PoolPass pass) {
  Key k{};
  int i = 0;
  k[i++] = static_cast<int64_t>(pass);
  k[i++] = s.nsp, k[i++] = s.max, k[i++] = s.include_pad, k[i++] = s.n, k[i++] = s.c;
  for (int d = 0; d < 3; ++d) {
    k[i++] = s.in[d], k[i++] = s.out[d], k[i++] = s.k[d], k[i++] = s.stride[d];
    k[i++] = s.pad_l[d], k[i++] = s.pad_r[d];
  }
  return k;
}

PoolSpec pool_spec_of(const Key& k) {
  PoolSpec s;
  int i = 1;
  s.nsp = static_cast<int>(k[i++]), s.max = k[i++] != 0, s.include_pad = k[i++] != 0, s.n = k[i++],
  s.c = k[i++];
  for (int d = 0; d < 3; ++d) {
    s.in[d] = k[i++], s.out[d] = k[i++], s.k[d] = k[i++], s.stride[d] = k[i++];
    s.pad_l[d] = k[i++], s.pad_r[d] = k[i++];
  }
  return s;
}

struct PoolPlan {
  ::dnnl::primitive fwd, bwd;
  Slot src, dst, diff_dst, diff_src;
  memory workspace, dst_scratch;  // backward of max: the forward's argmax and output
};

PoolPlan make_pool_plan(const Key& key) {
  const auto pass = static_cast<PoolPass>(key[0]);
  const PoolSpec s = pool_spec_of(key);
  const int nsp = s.nsp;
  const Dims src_dims = cat({s.n, s.c}, spatial(s.in, nsp));
  const Dims dst_dims = cat({s.n, s.c}, spatial(s.out, nsp));
  const memory::desc src(src_dims, kF32, data_tag(nsp)), dst(dst_dims, kF32, data_tag(nsp));
  const memory::desc src_any(src_dims, kF32, Tag::any), dst_any(dst_dims, kF32, Tag::any);
  // oneDNN's pooling takes no `any` source, and on plain NCHW it runs a scalar loop
  // (simple_nchw): its JIT kernels want channel blocks of the vector width.
  const memory::desc src_blocked(src_dims, kF32, blocked_tag(nsp));
  const algorithm alg = s.max           ? algorithm::pooling_max
                        : s.include_pad ? algorithm::pooling_avg_include_padding
                                        : algorithm::pooling_avg_exclude_padding;
  const Dims strides = spatial(s.stride, nsp), kernel = spatial(s.k, nsp);
  const Dims pl = spatial(s.pad_l, nsp), pr = spatial(s.pad_r, nsp);
  const bool training = pass == PoolPass::kBackward;
  ::dnnl::pooling_forward::desc fd(
      training ? prop_kind::forward_training : prop_kind::forward_inference, alg, src_blocked,
      dst_any, strides, kernel, pl, pr);
  ::dnnl::pooling_forward::primitive_desc fpd(fd, cpu_engine());
  PoolPlan p;
  p.fwd = ::dnnl::pooling_forward(fpd);
  p.src.init(src, fpd.src_desc(), true);
  p.dst.init(dst, fpd.dst_desc(), false);
  if (!training) return p;
  ::dnnl::pooling_backward::desc bd(alg, src_blocked, dst_any, strides, kernel, pl, pr);
  ::dnnl::pooling_backward::primitive_desc bpd(bd, cpu_engine(), fpd);
  p.bwd = ::dnnl::pooling_backward(bpd);
  p.diff_dst.init(dst, bpd.diff_dst_desc(), true);
  p.diff_src.init(src, bpd.diff_src_desc(), false);
  if (s.max) {
    p.workspace = memory(fpd.workspace_desc(), cpu_engine());
    p.dst_scratch = memory(fpd.dst_desc(), cpu_engine());
  }
  return p;
}

int64_t pool_work(const PoolSpec& s) {
  int64_t w = s.n * s.c;
  for (int i = 0; i < s.nsp; ++i) w *= s.out[i] * s.k[i];
  return w;
}

// ---------------------------------------------------------------- INT8 inference

// Key slots past a ConvSpec's (28 used): the INT8 variant. Inner products use their own layout.
constexpr int kInt8Slot = 28;
constexpr int64_t kInnerProductTag = 1000;  // key[0] of an inner product (ConvPass: 0-4)

int64_t int8_code(const Int8Spec& q, bool bias) {
  return 1 + q.src_unsigned + 2 * static_cast<int64_t>(q.dst) + 8 * q.relu + 16 * bias;
}

Int8Spec int8_spec_of(int64_t code, bool* bias) {
  code -= 1;
  Int8Spec q;
  q.src_unsigned = code & 1;
  q.dst = static_cast<Int8Dst>((code >> 1) & 3);
  q.relu = (code >> 3) & 1;
  *bias = (code >> 4) & 1;
  return q;
}

memory::data_type dst_type(Int8Dst d) {
  return d == Int8Dst::kS32  ? memory::data_type::s32
         : d == Int8Dst::kS8 ? memory::data_type::s8
                             : memory::data_type::u8;
}

// Per-output-channel scales and the relu as a post-op: oneDNN applies
// relu(scale * (acc + bias)), then rounds and saturates. Inner products take the scales at
// run time (scales null: one plan serves every calibration); oneDNN 2's convolutions take
// them only when the primitive is made, so a convolution's plan is keyed by a hash of its
// scales and made with them.
::dnnl::primitive_attr int8_attr(const Int8Spec& q, int64_t channels, const float* scales) {
  ::dnnl::primitive_attr attr;
  if (!scales)
    attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
  else
    attr.set_output_scales(1 << 1, std::vector<float>(scales, scales + channels));
  if (q.relu) {
    ::dnnl::post_ops ops;
    ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);
  }
  return attr;
}

// Two 64-bit hashes of the scales' bits (the key's slots 29 and 30).
std::pair<int64_t, int64_t> scales_hash(const float* v, int64_t n) {
  uint64_t a = 1469598103934665603ull, b = 0x9e3779b97f4a7c15ull;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, v + i, sizeof bits);
    a = (a ^ bits) * 1099511628211ull;
    b = (b ^ (bits + 0x7f4a7c15u + (b << 6) + (b >> 2))) * 0xff51afd7ed558ccdull;
  }
  return {static_cast<int64_t>(a), static_cast<int64_t>(b)};
}

struct Int8Plan {
  ::dnnl::primitive prim;
  Slot src, wei, dst;
  memory bias, scale;
  WeightCache weights;  // wei's reorders (with s8 compensation), reused while unchanged
};

// scales: a convolution's output scales (null for an inner product's run-time ones).
Int8Plan make_int8_plan(const Key& key, const float* scales) {
  bool has_bias = false;
  const Int8Spec q = int8_spec_of(key[kInt8Slot], &has_bias);
  const auto src_t = q.src_unsigned ? memory::data_type::u8 : memory::data_type::s8;
  const auto wei_t = memory::data_type::s8, out_t = dst_type(q.dst);
  Int8Plan p;
  if (key[0] == kInnerProductTag) {
    const int64_t n = key[1], k = key[2], f = key[3];
    const auto attr = int8_attr(q, f, nullptr);
    const memory::desc src({n, k}, src_t, Tag::nc), wei({f, k}, wei_t, Tag::oi);
    const memory::desc dst({n, f}, out_t, Tag::nc), bias({f}, kF32, Tag::x);
    const memory::desc wei_any({f, k}, wei_t, Tag::any);
    auto desc = has_bias ? ::dnnl::inner_product_forward::desc(prop_kind::forward_inference, src,
                                                               wei_any, bias, dst)
                         : ::dnnl::inner_product_forward::desc(prop_kind::forward_inference, src,
                                                               wei_any, dst);
    ::dnnl::inner_product_forward::primitive_desc pd(desc, attr, cpu_engine());
    p.prim = ::dnnl::inner_product_forward(pd);
    p.src.init(src, pd.src_desc(), true);
    p.wei.init(wei, pd.weights_desc(), true);
    p.dst.init(dst, pd.dst_desc(), false);
    p.bias = memory(bias, cpu_engine(), DNNL_MEMORY_NONE);
    p.scale = memory(memory::desc({f}, kF32, Tag::x), cpu_engine(), DNNL_MEMORY_NONE);
    return p;
  }
  const ConvSpec s = spec_of(key);
  const ConvDescs d = conv_descs(s);
  const auto attr = int8_attr(q, s.f, scales);
  const int nsp = s.nsp;
  const bool grouped = s.groups > 1;
  const Dims src_dims = cat({s.n, s.c}, spatial(s.in, nsp));
  const Dims dst_dims = cat({s.n, s.f}, spatial(s.out, nsp));
  const Dims wei_dims = d.wei.dims();
  const memory::desc src(src_dims, src_t, data_tag(nsp)), dst(dst_dims, out_t, data_tag(nsp));
  const memory::desc wei(wei_dims, wei_t, weight_tag(nsp, grouped));
  const memory::desc src_any(src_dims, src_t, Tag::any), dst_any(dst_dims, out_t, Tag::any);
  const memory::desc wei_any(wei_dims, wei_t, Tag::any);
  auto desc = has_bias ? ::dnnl::convolution_forward::desc(
                             prop_kind::forward_inference, algorithm::convolution_direct, src_any,
                             wei_any, d.bias, dst_any, d.strides, d.dilates, d.pad_l, d.pad_r)
                       : ::dnnl::convolution_forward::desc(
                             prop_kind::forward_inference, algorithm::convolution_direct, src_any,
                             wei_any, dst_any, d.strides, d.dilates, d.pad_l, d.pad_r);
  ::dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu_engine());
  p.prim = ::dnnl::convolution_forward(pd);
  p.src.init(src, pd.src_desc(), true);
  p.wei.init(wei, pd.weights_desc(), true);
  p.dst.init(dst, pd.dst_desc(), false);
  p.bias = memory(d.bias, cpu_engine(), DNNL_MEMORY_NONE);
  return p;
}

// Pooling of 8-bit data: oneDNN's JIT kernels want it channels-last (nhwc), so the plain
// NCHW data is reordered in and out.
struct Int8PoolPlan {
  ::dnnl::primitive fwd;
  Slot src, dst;
};

Int8PoolPlan make_int8_pool_plan(const Key& key) {
  const PoolSpec s = pool_spec_of(key);
  const auto t = key[kInt8Slot] ? memory::data_type::u8 : memory::data_type::s8;
  const int nsp = s.nsp;
  const Tag last = nsp == 1 ? Tag::nwc : nsp == 2 ? Tag::nhwc : Tag::ndhwc;
  const Dims src_dims = cat({s.n, s.c}, spatial(s.in, nsp));
  const Dims dst_dims = cat({s.n, s.c}, spatial(s.out, nsp));
  const memory::desc src(src_dims, t, data_tag(nsp)), dst(dst_dims, t, data_tag(nsp));
  const algorithm alg = s.max           ? algorithm::pooling_max
                        : s.include_pad ? algorithm::pooling_avg_include_padding
                                        : algorithm::pooling_avg_exclude_padding;
  ::dnnl::pooling_forward::desc fd(prop_kind::forward_inference, alg,
                                   memory::desc(src_dims, t, last), memory::desc(dst_dims, t, last),
                                   spatial(s.stride, nsp), spatial(s.k, nsp), spatial(s.pad_l, nsp),
                                   spatial(s.pad_r, nsp));
  ::dnnl::pooling_forward::primitive_desc pd(fd, cpu_engine());
  Int8PoolPlan p;
  p.fwd = ::dnnl::pooling_forward(pd);
  p.src.init(src, pd.src_desc(), true);
  p.dst.init(dst, pd.dst_desc(), false);
  return p;
}

void run_int8(Int8Plan& p, int64_t work, const void* x, const int8_t* w, const float* bias,
              const float* scale, void* y) {
  run(work, [&] {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, p.src.in(x)},
                                         {DNNL_ARG_WEIGHTS, reused_weights(p.wei, p.weights, w)},
                                         {DNNL_ARG_DST, p.dst.out(y)}};
    if (bias) {
      p.bias.set_data_handle(const_cast<float*>(bias));
      args.emplace(DNNL_ARG_BIAS, p.bias);
    }
    if (p.scale) {  // (run-time scales: inner products)
      p.scale.set_data_handle(const_cast<float*>(scale));
      args.emplace(DNNL_ARG_ATTR_OUTPUT_SCALES, p.scale);
    }
    p.prim.execute(cpu_stream(), args);
    p.dst.flush();
  });
}

// Puts the residual of a sum where the primitive will add it: the destination it writes (c's
// blocked buffer, or y itself).
void place_residual(ConvPlan& p, const ConvEpilogue& e, float* y) {
  if (!e.sum) return;
  if (p.c.blocked) {
    p.sum_user.set_data_handle(const_cast<float*>(e.sum));
    p.sum_reorder.execute(cpu_stream(), p.sum_user, p.c.inner);
  } else if (e.sum != y) {
    std::memcpy(y, e.sum, p.c.user.get_desc().get_size());
  }
}

bool conv_takes(const ConvSpec& s) { return all_positive({s.n, s.c, s.f}, s.in, s.out, s.nsp); }
bool pool_takes(const PoolSpec& s) { return all_positive({s.n, s.c}, s.in, s.out, s.nsp); }

}  // namespace

bool enabled() {
  static const bool on = env_enabled();
  return on;
}

bool conv_forward(const ConvSpec& s, const float* x, const float* w, const float* b, float* y,
                  bool weights_repeat, const ConvEpilogue* epilogue) {
  const float* scale = epilogue ? epilogue->scale : nullptr;
  if (epilogue && (s.transposed || !epilogue->scale != !epilogue->shift)) return false;
  // An affine map folded in: weights w * scale[o], bias b * scale + shift.
  thread_local std::vector<float> folded_bias, folded_w;
  if (scale) {
    folded_bias.resize(static_cast<size_t>(s.f));
    for (int64_t o = 0; o < s.f; ++o)
      folded_bias[static_cast<size_t>(o)] = (b ? b[o] : 0.f) * scale[o] + epilogue->shift[o];
    b = folded_bias.data();
  }
  const ConvPass pass = b ? ConvPass::kForwardBias : ConvPass::kForward;
  Key key = conv_key(s, pass);
  key[kEpilogueSlot] = post_ops_code(epilogue);
  ConvPlan* plan = conv_takes(s) ? plan_for<ConvPlan>(key, make_conv_plan) : nullptr;
  if (!plan) return false;
  ConvPlan& p = *plan;
  run(conv_work(s), [&] {
    const float* wp = w;
    if (scale && !weights_repeat) {
      fold_scale(w, scale, s.f, p.b.user.get_desc().get_size() / sizeof(float), &folded_w);
      wp = folded_w.data();
    }
    const memory& wm = weights_repeat ? reused_weights(p.b, p.weights, w, scale, s.f) : p.b.in(wp);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, p.a.in(x)}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, p.c.out(y)}};
    if (b) {
      p.bias.set_data_handle(const_cast<float*>(b));
      args.emplace(DNNL_ARG_BIAS, p.bias);
    }
    if (epilogue) place_residual(p, *epilogue, y);
    p.prim.execute(cpu_stream(), args);
    p.c.flush();
  });
  return true;
}

bool conv_backward_data(const ConvSpec& s, const float* dy, const float* w, float* dx) {
  ConvPlan* plan = conv_takes(s)
                       ? plan_for<ConvPlan>(conv_key(s, ConvPass::kBackwardData), make_conv_plan)
                       : nullptr;
  if (!plan) return false;
  ConvPlan& p = *plan;
  run(conv_work(s), [&] {
    p.prim.execute(cpu_stream(), {{DNNL_ARG_DIFF_DST, p.a.in(dy)},
                                  {DNNL_ARG_WEIGHTS, p.b.in(w)},
                                  {DNNL_ARG_DIFF_SRC, p.c.out(dx)}});
    p.c.flush();
  });
  return true;
}

bool conv_backward_weights(const ConvSpec& s, const float* x, const float* dy, float* dw,
                           float* db) {
  const ConvPass pass = db ? ConvPass::kBackwardWeightsBias : ConvPass::kBackwardWeights;
  ConvPlan* plan = conv_takes(s) ? plan_for<ConvPlan>(conv_key(s, pass), make_conv_plan) : nullptr;
  if (!plan) return false;
  ConvPlan& p = *plan;
  run(conv_work(s), [&] {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, p.a.in(x)},
                                         {DNNL_ARG_DIFF_DST, p.b.in(dy)},
                                         {DNNL_ARG_DIFF_WEIGHTS, p.c.out(dw)}};
    if (db) {
      p.bias.set_data_handle(db);
      args.emplace(DNNL_ARG_DIFF_BIAS, p.bias);
    }
    p.prim.execute(cpu_stream(), args);
    p.c.flush();
  });
  return true;
}

bool conv_backward_both(const ConvSpec& s, const float* x, const float* dy, const float* w,
                        float* dx, float* dw, float* db) {
  if (!conv_takes(s)) return false;
  const ConvPass wpass = db ? ConvPass::kBackwardWeightsBias : ConvPass::kBackwardWeights;
  ConvPlan* data = plan_for<ConvPlan>(conv_key(s, ConvPass::kBackwardData), make_conv_plan);
  ConvPlan* weights = data ? plan_for<ConvPlan>(conv_key(s, wpass), make_conv_plan) : nullptr;
  if (!weights) return false;
  ConvPlan &pd = *data, &pw = *weights;
  run(2 * conv_work(s), [&] {
    const memory& ddy = pd.a.in(dy);
    pd.prim.execute(cpu_stream(), {{DNNL_ARG_DIFF_DST, ddy},
                                   {DNNL_ARG_WEIGHTS, pd.b.in(w)},
                                   {DNNL_ARG_DIFF_SRC, pd.c.out(dx)}});
    pd.c.flush();
    // The data pass's copy of diff_dst when the weights pass wants the same layout.
    const bool same = pd.a.blocked == pw.b.blocked &&
                      (!pd.a.blocked || pd.a.inner.get_desc() == pw.b.inner.get_desc());
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, pw.a.in(x)},
                                         {DNNL_ARG_DIFF_DST, same ? ddy : pw.b.in(dy)},
                                         {DNNL_ARG_DIFF_WEIGHTS, pw.c.out(dw)}};
    if (db) {
      pw.bias.set_data_handle(db);
      args.emplace(DNNL_ARG_DIFF_BIAS, pw.bias);
    }
    pw.prim.execute(cpu_stream(), args);
    pw.c.flush();
  });
  return true;
}

bool pool_forward(const PoolSpec& s, const float* x, float* y) {
  PoolPlan* plan =
      pool_takes(s) ? plan_for<PoolPlan>(pool_key(s, PoolPass::kForward), make_pool_plan) : nullptr;
  if (!plan) return false;
  PoolPlan& p = *plan;
  run(pool_work(s), [&] {
    p.fwd.execute(cpu_stream(), {{DNNL_ARG_SRC, p.src.in(x)}, {DNNL_ARG_DST, p.dst.out(y)}});
    p.dst.flush();
  });
  return true;
}

bool pool_backward(const PoolSpec& s, const float* x, const float* dy, float* dx) {
  PoolPlan* plan = pool_takes(s)
                       ? plan_for<PoolPlan>(pool_key(s, PoolPass::kBackward), make_pool_plan)
                       : nullptr;
  if (!plan) return false;
  PoolPlan& p = *plan;
  run(pool_work(s), [&] {
    if (s.max)  // the window maxima (workspace) come from a forward pass over x
      p.fwd.execute(cpu_stream(), {{DNNL_ARG_SRC, p.src.in(x)},
                                   {DNNL_ARG_DST, p.dst_scratch},
                                   {DNNL_ARG_WORKSPACE, p.workspace}});
    std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, p.diff_dst.in(dy)},
                                         {DNNL_ARG_DIFF_SRC, p.diff_src.out(dx)}};
    if (s.max) args.emplace(DNNL_ARG_WORKSPACE, p.workspace);
    p.bwd.execute(cpu_stream(), args);
    p.diff_src.flush();
  });
  return true;
}

bool conv_int8_forward(const ConvSpec& s, const Int8Spec& q, const void* x, const int8_t* w,
                       const float* bias, const float* scale, void* y) {
  if (s.transposed || !conv_takes(s)) return false;
  Key key = conv_key(s, ConvPass::kForward);
  key[kInt8Slot] = int8_code(q, bias != nullptr);
  std::tie(key[kInt8Slot + 1], key[kInt8Slot + 2]) = scales_hash(scale, s.f);
  Int8Plan* plan =
      plan_for<Int8Plan>(key, [scale](const Key& k) { return make_int8_plan(k, scale); });
  if (!plan) return false;
  run_int8(*plan, conv_work(s), x, w, bias, scale, y);
  return true;
}

bool inner_product_int8(int64_t n, int64_t k, int64_t f, const Int8Spec& q, const void* x,
                        const int8_t* w, const float* bias, const float* scale, void* y) {
  if (n <= 0 || k <= 0 || f <= 0) return false;
  Key key{};
  key[0] = kInnerProductTag, key[1] = n, key[2] = k, key[3] = f;
  key[kInt8Slot] = int8_code(q, bias != nullptr);
  Int8Plan* plan = plan_for<Int8Plan>(key, [](const Key& k) { return make_int8_plan(k, nullptr); });
  if (!plan) return false;
  run_int8(*plan, n * k * f, x, w, bias, scale, y);
  return true;
}

bool pool_int8_forward(const PoolSpec& s, bool src_unsigned, const void* x, void* y) {
  if (!pool_takes(s)) return false;
  Key key = pool_key(s, PoolPass::kForward);
  key[kInt8Slot] = src_unsigned;
  key[kInt8Slot + 1] = 1;  // (an INT8 plan)
  Int8PoolPlan* plan = plan_for<Int8PoolPlan>(key, make_int8_pool_plan);
  if (!plan) return false;
  run(pool_work(s), [&] {
    plan->fwd.execute(cpu_stream(),
                      {{DNNL_ARG_SRC, plan->src.in(x)}, {DNNL_ARG_DST, plan->dst.out(y)}});
    plan->dst.flush();
  });
  return true;
}

#endif  // NDX_HAVE_DNNL

}  // namespace ndx::dnnl

namespace ndx {
bool onednn_enabled() { return dnnl::enabled(); }
}  // namespace ndx
