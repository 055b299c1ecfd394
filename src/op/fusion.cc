// Elementwise fusion for planned graphs. A group of connected pointwise ops (ops whose
// registration sets TElementwise: an output element depends only on the same element of the
// broadcast inputs, so their FCompute may run on any block of the output) becomes one
// `_FusedElementwise` node. Its kernel walks the output in blocks of a few thousand elements
// and runs every op of the group on the block, keeping intermediate results in small
// per-thread buffers: one pass over memory instead of one per op, and one invoke instead of
// one per op.
//
// Each op runs its own FCompute on its own dtypes, in the graph's order, so results are
// bit-identical to the unfused graph: the elementwise engine's SIMD tail runs through the
// same vector code, so values never depend on where a block ends.
#include "op/fusion.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "kernel/blob.h"
#include "kernel/parallel.h"
#include "kernel/pointwise.h"
#include "ndx/autograd.h"
#include "ndx/imperative.h"
#include "ndx/runtime.h"
#include "op/gpu_dispatch.h"
#include "operator/conv_epilogue.h"

namespace ndx {

namespace {

std::atomic<int64_t> g_vector_runs{0}, g_block_runs{0}, g_whole_runs{0};
std::atomic<int64_t> g_conv_onednn_runs{0}, g_conv_whole_runs{0};

std::atomic<bool>& fusion_flag() {
  static std::atomic<bool> on = [] {
    const char* v = std::getenv("NDX_FUSION");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

// Ops in one fused node at most: their intermediate blocks stay in a few hundred KiB.
constexpr size_t kMaxGroup = 32;
// Output elements per block: under the engine's grain, so each op's kernel runs on the
// calling thread without an iterator (its direct path). Measured with bench/fusion.py-style
// chains on the 2-core dev machine: 512 to 2048 pay for the per-block calls, 4096 and 8192
// were equal within noise.
constexpr int64_t kFuseBlock = 8192;

struct FusedProgram {
  struct Instr {
    NodeAttrs attrs;
    std::vector<int> operands;  // k >= 0: the fused node's input k; ~t: intermediate t
  };
  std::vector<Instr> instrs;  // in graph order; the last one writes the output
  uint32_t num_inputs = 0;
  // A fused convolution (`_FusedConvolution`): instrs[0] is the convolution (reading fused
  // inputs only), then an inference batch_norm (instr `bn`), an add of the fused input
  // `residual`, a relu (`relu`), each optional.
  int bn = -1;
  int residual = -1;
  bool relu = false;
  // The intermediates' dtypes for each signature of input dtypes seen so far.
  mutable std::mutex mu;
  mutable std::vector<std::pair<DTypeVector, DTypeVector>> types;
};
using ProgramPtr = std::shared_ptr<const FusedProgram>;

const FusedProgram& program_of(const NodeAttrs& attrs) {
  const auto* p = std::any_cast<ProgramPtr>(&attrs.parsed);
  if (!p || !*p)
    not_implemented("[", attrs.op ? attrs.op->name : "_FusedElementwise",
                    "] is made by the graph executor's fusion pass; it cannot be called directly");
  return **p;
}

// Each instr's first output (the one its readers take; batch_norm has two more) inferred
// from the fused node's inputs.
template <class V, class Infer>
V run_inference(const FusedProgram& p, const V& in, const typename V::value_type& unknown,
                Infer infer) {
  V temps(p.instrs.size()), args, out;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const NodeAttrs& a = p.instrs[i].attrs;
    args.clear();
    for (int k : p.instrs[i].operands)
      args.push_back(k >= 0 ? in[static_cast<size_t>(k)] : temps[static_cast<size_t>(~k)]);
    out.assign(a.op->outputs_for(a), unknown);
    infer(a, &args, &out);
    temps[i] = out[0];
  }
  return temps;
}

ShapeVector instr_shapes(const FusedProgram& p, const ShapeVector& in) {
  return run_inference(
      p, in, Shape::unknown(),
      [](const NodeAttrs& a, ShapeVector* i, ShapeVector* o) { infer_shapes(a, i, o); });
}

DTypeVector instr_types(const FusedProgram& p, const DTypeVector& in) {
  std::lock_guard<std::mutex> lock(p.mu);
  for (const auto& [key, value] : p.types)
    if (key == in) return value;
  DTypeVector t = run_inference(
      p, in, DType::kUnknown,
      [](const NodeAttrs& a, DTypeVector* i, DTypeVector* o) { infer_types(a, i, o); });
  if (p.types.size() < 8) p.types.emplace_back(in, t);
  return t;
}

const FCompute& cpu_compute_of(const NodeAttrs& attrs) {
  static const auto& cpu_map = Op::attr<FCompute>("FCompute<cpu>");
  if (!cpu_map.count(attrs.op)) not_implemented("[", attrs.op->name, "] has no cpu kernel");
  return cpu_map[attrs.op];
}

// An op's outputs past its first (batch_norm's statistics), which no reader of a fused node's
// ops takes: allocated so the op may write them.
void add_extra_outputs(const NodeAttrs& a, const std::vector<TBlob>& args, const Device& device,
                       std::vector<NDArray>* keep, std::vector<TBlob>* result,
                       std::vector<OpReqType>* reqs) {
  const uint32_t n = a.op->outputs_for(a);
  if (n < 2) return;
  ShapeVector in_s, out_s(n, Shape::unknown());
  DTypeVector in_t, out_t(n, DType::kUnknown);
  for (const TBlob& b : args) in_s.push_back(b.shape), in_t.push_back(b.dtype);
  infer_shapes(a, &in_s, &out_s);
  infer_types(a, &in_t, &out_t);
  for (uint32_t j = 1; j < n; ++j) {
    keep->emplace_back(out_s[j], out_t[j], device);
    result->push_back(kernel::to_blob(keep->back()));
    reqs->push_back(kWriteTo);
  }
}

// Every op on whole arrays, intermediates allocated (GPU arrays, strided outputs).
void run_whole(const FusedProgram& p, const OpContext& ctx, const std::vector<TBlob>& in,
               OpReqType req, const TBlob& out, const DTypeVector& types) {
  ShapeVector in_shapes;
  for (const TBlob& b : in) in_shapes.push_back(b.shape);
  const ShapeVector shapes = instr_shapes(p, in_shapes);
  std::vector<NDArray> temps(p.instrs.size()), extras;
  std::vector<TBlob> args;
  const bool gpu = out.device.is_gpu();
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    args.clear();
    for (int k : p.instrs[i].operands)
      args.push_back(k >= 0 ? in[static_cast<size_t>(k)]
                            : kernel::to_blob(temps[static_cast<size_t>(~k)]));
    const bool last = i + 1 == p.instrs.size();
    if (!last) temps[i] = NDArray(shapes[i], types[i], out.device);
    std::vector<TBlob> result{last ? out : kernel::to_blob(temps[i])};
    std::vector<OpReqType> reqs{last ? req : kWriteTo};
    add_extra_outputs(p.instrs[i].attrs, args, out.device, &extras, &result, &reqs);
    if (gpu)
      compute_on_gpu(p.instrs[i].attrs, ctx, args, reqs, result);
    else
      cpu_compute_of(p.instrs[i].attrs)(p.instrs[i].attrs, ctx, args, reqs, result);
  }
}

// How the output is cut into blocks: dims before `split` are iterated one index at a time,
// dim `split` in ranges of `len`, the dims after it whole (together at most kFuseBlock).
struct Blocking {
  int split = 0;
  int64_t len = 1, inner = 1, ranges = 1, count = 1;
};

Blocking blocking_of(const Shape& s) {
  Blocking b;
  const int nd = s.ndim();
  if (nd == 0) return b;
  int64_t inner = 1;
  b.split = nd - 1;
  for (int d = nd - 1; d >= 0; --d) {  // the outermost dim whose trailing dims fit a block
    if (inner > kFuseBlock) break;
    b.split = d;
    b.inner = inner;
    inner *= s[d];
  }
  b.len = std::min(s[b.split], std::max<int64_t>(1, kFuseBlock / b.inner));
  b.ranges = (s[b.split] + b.len - 1) / b.len;
  b.count = b.ranges;
  for (int d = 0; d < b.split; ++d) b.count *= s[d];
  return b;
}

// One op of the program as a block runner calls it: its operands and output (updated per
// block), and either its kernel with the compute dtype and request fixed, or its FCompute.
struct BlockCall {
  std::vector<TBlob> operands, outputs{TBlob{}};
  std::vector<OpReqType> req;
  kernel::ElementwiseArgs args;
  kernel::ElementwiseEntry entry = nullptr;  // null: call the op's FCompute
};

std::vector<BlockCall> block_calls(const FusedProgram& p, const std::vector<TBlob>& in,
                                   OpReqType req, const TBlob& out, const DTypeVector& types) {
  static const auto& kernels = Op::attr<kernel::PointwiseKernel>("FPointwiseKernel");
  std::vector<BlockCall> calls(p.instrs.size());
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const auto& ins = p.instrs[i];
    BlockCall& c = calls[i];
    const bool last = i + 1 == p.instrs.size();
    for (int k : ins.operands) {
      TBlob t = k >= 0 ? in[static_cast<size_t>(k)] : out;
      if (k < 0) t.dtype = types[static_cast<size_t>(~k)];
      c.operands.push_back(t);
    }
    c.outputs[0] = out;
    c.outputs[0].dtype = types[i];
    c.req.assign(1, last ? req : kWriteTo);
    const kernel::PointwiseKernel* pk =
        kernels.count(ins.attrs.op) ? &kernels[ins.attrs.op] : nullptr;
    if (pk && pk->fn) {  // the compute dtype depends on dtypes only: fix it for every block
      c.args.nin = static_cast<int>(c.operands.size());
      c.args.req = c.req[0];
      c.args.compute =
          kernel::pointwise_compute_type(pk->compute_of, ins.attrs, c.operands, c.outputs[0]);
      c.entry = pk->fn.cpu_for(c.args.compute);
      // A large output is streamed past the cache, as the unfused kernel would write it.
      c.args.stream = last && out.size() * dtype_size(out.dtype) >= kernel::kStreamBytes;
    }
  }
  return calls;
}

// The vector program: when every op has a block kernel for its compute dtype, every operand
// and result is of that dtype, and every input is the output's shape, contiguous, or a single
// value, the group runs as an interpreter over small blocks (kVectorBlock elements, in L1):
// each op's block kernel called straight on raw pointers, intermediates in a few slots reused
// once their last reader has run. Same kernels, same order: bit-identical to the other paths.
// Elements per block of a vector program: one slot of float64 is 8 KiB, so a chain's few live
// slots and the inputs' and output's current blocks stay in L1. 512 to 4096 measured alike on
// the 2-core dev machine (bench/fusion.py; large chains are bound by memory there).
constexpr int64_t kVectorBlock = 1024;

struct VectorInstr {
  // An operand (or the result): slot >= 0 an intermediate's slot; else base + block start *
  // step (step 0: a single value).
  struct Ref {
    const char* base = nullptr;
    size_t step = 0;
    int slot = -1;
  };
  kernel::BlockFn fn = nullptr;
  std::array<Ref, 5> refs;  // functors take at most five operands
  size_t nrefs = 0;
  Ref result;
};

struct VectorProgram {
  std::vector<VectorInstr> instrs;
  int slots = 0;
  size_t elem = 0;  // bytes per element: every op computes in one dtype
};

bool vector_program(const FusedProgram& p, const std::vector<TBlob>& in, OpReqType req,
                    const TBlob& out, const DTypeVector& types, VectorProgram* vp) {
  static const auto& kernels = Op::attr<kernel::PointwiseKernel>("FPointwiseKernel");
  const DType t = out.dtype;
  if ((t != DType::kFloat32 && t != DType::kFloat64) || req == kAddTo || !out.is_contiguous())
    return false;
  for (const TBlob& b : in)
    if (b.dtype != t || (b.size() != 1 && (b.size() != out.size() || !b.is_contiguous())))
      return false;
  const size_t n = p.instrs.size(), elem = static_cast<size_t>(dtype_size(t));
  std::vector<size_t> last_use(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (int k : p.instrs[i].operands)
      if (k < 0) last_use[static_cast<size_t>(~k)] = i;
  vp->instrs.resize(n);
  vp->slots = 0;
  vp->elem = elem;
  std::vector<int> free_slots;
  std::vector<TBlob> operands;
  for (size_t i = 0; i < n; ++i) {
    const auto& ins = p.instrs[i];
    if (types[i] != t || ins.operands.size() > 5 || !kernels.count(ins.attrs.op)) return false;
    const kernel::PointwiseKernel& pk = kernels[ins.attrs.op];
    if (!pk.fn || !pk.fn.block) return false;
    operands.clear();
    for (int k : ins.operands) {
      TBlob b = k >= 0 ? in[static_cast<size_t>(k)] : out;
      b.dtype = t;
      operands.push_back(b);
    }
    if (kernel::pointwise_compute_type(pk.compute_of, ins.attrs, operands, out) != t) return false;
    VectorInstr& v = vp->instrs[i];
    v.fn = pk.fn.block(t);
    if (!v.fn) return false;
    v.nrefs = ins.operands.size();
    for (size_t j = 0; j < v.nrefs; ++j) {
      const int k = ins.operands[j];
      VectorInstr::Ref& r = v.refs[j];
      if (k < 0) {
        r = {nullptr, 0, vp->instrs[static_cast<size_t>(~k)].result.slot};
      } else {
        const TBlob& b = in[static_cast<size_t>(k)];
        r = {static_cast<const char*>(b.dptr), b.size() == 1 ? 0 : elem, -1};
      }
    }
    // Slots read for the last time here are free for this op's result (in place is safe: a
    // block kernel loads each vector before it stores it).
    for (int k : ins.operands)
      if (k < 0 && last_use[static_cast<size_t>(~k)] == i) {
        const int s = vp->instrs[static_cast<size_t>(~k)].result.slot;
        if (std::find(free_slots.begin(), free_slots.end(), s) == free_slots.end())
          free_slots.push_back(s);
      }
    if (i + 1 == n) {
      v.result = {static_cast<const char*>(out.dptr), elem, -1};
    } else if (free_slots.empty()) {
      v.result = {nullptr, 0, vp->slots++};
    } else {
      v.result = {nullptr, 0, free_slots.back()};
      free_slots.pop_back();
    }
  }
  return true;
}

void run_vector_program(const VectorProgram& vp, int64_t size) {
  constexpr int64_t kB = kVectorBlock;
  const int64_t blocks = (size + kB - 1) / kB;
  const size_t slot_bytes = static_cast<size_t>(kB) * vp.elem;
  // A large output is streamed past the cache, as the unfused kernel would write it.
  const bool stream = size * static_cast<int64_t>(vp.elem) >= kernel::kStreamBytes;
  const kernel::FunctorArgs args;  // ops with a block kernel take no params
  kernel::parallel_for(
      blocks, std::max<int64_t>(1, kernel::kGrain / kB), [&](int64_t begin, int64_t end) {
        thread_local std::vector<char> scratch;
        const size_t need = static_cast<size_t>(vp.slots) * slot_bytes + 64;
        if (scratch.size() < need) scratch.resize(need);
        char* buf = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
        auto at = [&](const VectorInstr::Ref& r, int64_t start) {
          return r.slot >= 0 ? buf + static_cast<size_t>(r.slot) * slot_bytes
                             : const_cast<char*>(r.base) + static_cast<size_t>(start) * r.step;
        };
        kernel::BlockOperand ops[5];
        for (int64_t blk = begin; blk < end; ++blk) {
          const int64_t start = blk * kB, n = std::min(kB, size - start);
          for (const VectorInstr& v : vp.instrs) {
            for (size_t j = 0; j < v.nrefs; ++j)
              ops[j] = {at(v.refs[j], start), v.refs[j].slot < 0 && v.refs[j].step == 0};
            v.fn(args, ops, at(v.result, start), n, stream && v.result.slot < 0);
          }
        }
      });
}

void run_blocks(const FusedProgram& p, const OpContext& ctx, const std::vector<TBlob>& in,
                OpReqType req, const TBlob& out, const DTypeVector& types) {
  const Shape& s = out.shape;
  const int nd = s.ndim();
  const auto w = static_cast<size_t>(nd > 0 ? nd : 1);
  const Blocking bl = blocking_of(s);
  const size_t nin = in.size();
  // Each input's strides in the output's index space (0 along broadcast dims).
  std::vector<int64_t> bst(nin * w, 0);
  for (size_t k = 0; k < nin; ++k) {
    const int lead = nd - in[k].ndim();
    for (int d = 0; d < in[k].ndim(); ++d)
      bst[k * w + static_cast<size_t>(lead + d)] = in[k].shape[d] == 1 ? 0 : in[k].strides[d];
  }
  size_t temp_bytes = 0;
  std::vector<size_t> temp_at(p.instrs.size(), 0);
  for (size_t i = 0; i + 1 < p.instrs.size(); ++i) {
    temp_at[i] = temp_bytes;
    temp_bytes +=
        (static_cast<size_t>(kFuseBlock) * static_cast<size_t>(dtype_size(types[i])) + 63) / 64 *
        64;
  }
  std::vector<BlockCall> proto = block_calls(p, in, req, out, types);
  const int64_t grain = std::max<int64_t>(1, kernel::kGrain / kFuseBlock);
  const bool serial = bl.count <= grain || kernel::num_threads() == 1;
  // One thread (small outputs): the calls as built and a reused scratch buffer, no copies.
  thread_local std::vector<char> scratch;
  kernel::parallel_for(bl.count, serial ? bl.count : grain, [&](int64_t begin, int64_t end) {
    std::vector<char> own;
    std::vector<char>& mem = serial ? scratch : own;
    if (mem.size() < temp_bytes + 64) mem.resize(temp_bytes + 64);
    char* buf = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
    std::vector<BlockCall> copies;
    if (!serial) copies = proto;
    std::vector<BlockCall>& calls = serial ? proto : copies;
    for (BlockCall& c : calls) {
      c.args.in = c.operands.data();
      c.args.out = c.outputs.data();
    }
    std::vector<TBlob> views(nin);
    std::vector<int64_t> in_off(nin);
    TBlob out_view = out;
    for (int64_t blk = begin; blk < end; ++blk) {
      int64_t outer = blk / bl.ranges, start = (blk % bl.ranges) * bl.len;
      int64_t out_off = 0;
      std::fill(in_off.begin(), in_off.end(), 0);
      for (int d = bl.split - 1; d >= 0; --d) {  // the outer dims' indices
        const int64_t idx = outer % s[d];
        outer /= s[d];
        out_off += idx * out.strides[d];
        for (size_t k = 0; k < nin; ++k) in_off[k] += idx * bst[k * w + static_cast<size_t>(d)];
      }
      Shape block(s.begin() + bl.split, s.end());
      if (nd > 0) {
        block[0] = std::min(bl.len, s[bl.split] - start);
        out_off += start * out.strides[bl.split];
        for (size_t k = 0; k < nin; ++k)
          in_off[k] += start * bst[k * w + static_cast<size_t>(bl.split)];
      }
      out_view.shape = block;
      out_view.strides = contiguous_strides(block);
      out_view.dptr = static_cast<char*>(out.dptr) + out_off * dtype_size(out.dtype);
      for (size_t k = 0; k < nin; ++k) {
        TBlob& v = views[k];
        v.shape = block;
        v.strides = block;
        for (int d = 0; d < block.ndim(); ++d) {
          v.strides[d] = bst[k * w + static_cast<size_t>(bl.split + d)];
          if (v.strides[d] == 0) v.shape[d] = 1;  // broadcast along this dim: extent 1
        }
        v.dptr = static_cast<char*>(in[k].dptr) + in_off[k] * dtype_size(in[k].dtype);
        v.dtype = in[k].dtype;
        v.device = in[k].device;
      }
      for (size_t i = 0; i < calls.size(); ++i) {
        BlockCall& c = calls[i];
        const auto& ops = p.instrs[i].operands;
        for (size_t j = 0; j < ops.size(); ++j) {
          const int k = ops[j];
          TBlob& dst = c.operands[j];
          if (k >= 0) {
            const TBlob& v = views[static_cast<size_t>(k)];
            dst.dptr = v.dptr;
            dst.shape = v.shape;
            dst.strides = v.strides;
          } else {
            dst.dptr = buf + temp_at[static_cast<size_t>(~k)];
            dst.shape = block;
            dst.strides = out_view.strides;
          }
        }
        TBlob& o = c.outputs[0];
        o.dptr = i + 1 == calls.size() ? out_view.dptr : buf + temp_at[i];
        o.shape = block;
        o.strides = out_view.strides;
        if (c.entry)
          c.entry(c.args);
        else
          cpu_compute_of(p.instrs[i].attrs)(p.instrs[i].attrs, ctx, c.operands, c.req, c.outputs);
      }
    }
  });
}

void fused_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const FusedProgram& p = program_of(attrs);
  if (req[0] == kNullOp || out[0].size() == 0) return;
  DTypeVector in_types;
  for (const TBlob& b : in) in_types.push_back(b.dtype);
  const DTypeVector types = instr_types(p, in_types);
  // Blocks need every input to broadcast to the output (true of pointwise ops; checked, so a
  // block never reads outside an input) and a contiguous CPU output.
  bool blocks = !out[0].device.is_gpu() && out[0].is_contiguous();
  const Shape& s = out[0].shape;
  for (size_t k = 0; blocks && k < in.size(); ++k) {
    const Shape& a = in[k].shape;
    blocks = a.ndim() <= s.ndim();
    for (int d = 0; blocks && d < a.ndim(); ++d)
      blocks = a[d] == 1 || a[d] == s[s.ndim() - a.ndim() + d];
  }
  if (!blocks) {
    g_whole_runs.fetch_add(1, std::memory_order_relaxed);
    return run_whole(p, ctx, in, req[0], out[0], types);
  }
  // Release the caller's interpreter lock for large outputs, as each unfused kernel would
  // (parallel_for counts blocks here, not elements). Pointwise kernels never touch Python.
  kernel::AllowThreads unlocked(out[0].size() >= kernel::kReleaseGil);
  thread_local VectorProgram vp;
  if (vector_program(p, in, req[0], out[0], types, &vp)) {
    g_vector_runs.fetch_add(1, std::memory_order_relaxed);
    return run_vector_program(vp, out[0].size());
  }
  g_block_runs.fetch_add(1, std::memory_order_relaxed);
  run_blocks(p, ctx, in, req[0], out[0], types);
}

// The gradient of a fused node: its ops as graph nodes again, differentiated as autograd would.
// (Executors fuse only unrecorded runs, so autograd never meets a fused node; graphs built
// from fused ones stay differentiable all the same.)
std::vector<NodeEntry> fused_gradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  const FusedProgram& p = program_of(n->attrs);
  std::vector<NodeEntry> temps;
  for (const auto& ins : p.instrs) {
    auto m = std::make_shared<Node>();
    m->attrs = ins.attrs;
    for (int k : ins.operands)
      m->inputs.push_back(k >= 0 ? n->inputs[static_cast<size_t>(k)]
                                 : temps[static_cast<size_t>(~k)]);
    temps.push_back(NodeEntry{m, 0, 0});
  }
  std::vector<NodeEntry> grads = autograd::gradient_entries({temps.back()}, og, n->inputs);
  for (size_t j = 0; j < grads.size(); ++j)
    if (!grads[j].node) grads[j] = make_node("_np_zeros_like", {n->inputs[j]});
  return grads;
}

// What the fused ops register alike: their program as parsed params, its inputs, shape and
// dtype inference through its ops, and the gradient of those ops.
auto& register_fused(const char* name, const char* description) {
  return OpRegistry::global()
      .register_op(name)
      .describe(description)
      .set_num_inputs([](const NodeAttrs& a) { return program_of(a).num_inputs; })
      .set_attr_parser([](NodeAttrs* a) { program_of(*a); })
      .set_attr<FInferShape>("FInferShape",
                             [](const NodeAttrs& a, ShapeVector* in, ShapeVector* out) {
                               for (const Shape& s : *in)
                                 if (!s.is_known()) return false;
                               (*out)[0] = instr_shapes(program_of(a), *in).back();
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& a, DTypeVector* in, DTypeVector* out) {
                              for (DType t : *in)
                                if (t == DType::kUnknown) return false;
                              (*out)[0] = instr_types(program_of(a), *in).back();
                              return true;
                            })
      .set_attr<FGradient>("FGradient", fused_gradient);
}

[[maybe_unused]] const bool registered = [] {
  register_fused("_FusedElementwise",
                 "Connected pointwise ops of a planned graph run as one pass over memory (made "
                 "by the executor's fusion pass, not callable directly).")
      // An input of the output's shape is read, block by block, before its block is written.
      .set_attr<FInplaceOption>("FInplaceOption",
                                [](const NodeAttrs& a) {
                                  std::vector<std::pair<int, int>> v;
                                  for (uint32_t k = 0; k < program_of(a).num_inputs; ++k)
                                    v.emplace_back(static_cast<int>(k), 0);
                                  return v;
                                })
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FCompute>("FCompute<cpu>", fused_compute)
      .set_attr<FCompute>("FCompute<gpu>", fused_compute);
  return true;
}();

// ---- convolutions with their epilogue

// The fused convolution through oneDNN with its epilogue as post-ops: float32 CPU arrays, a
// batch_norm that uses its running statistics, a residual of the output's shape. False,
// having written nothing, otherwise.
bool fused_conv_onednn(const FusedProgram& p, const OpContext& ctx, const std::vector<TBlob>& in,
                       OpReqType req, const TBlob& out) {
  if ((req != kWriteTo && req != kWriteInplace) || out.dtype != DType::kFloat32 ||
      out.device.is_gpu() || out.size() == 0)
    return false;
  std::vector<TBlob> conv_in;
  for (int k : p.instrs[0].operands) conv_in.push_back(in[static_cast<size_t>(k)]);
  dnnl::ConvEpilogue e;
  thread_local std::vector<float> affine;
  if (p.bn >= 0) {
    const auto& bn = p.instrs[static_cast<size_t>(p.bn)];
    std::vector<TBlob> bn_in{out};  // (data: only its shape is read)
    for (size_t j = 1; j < bn.operands.size(); ++j)
      bn_in.push_back(in[static_cast<size_t>(bn.operands[j])]);
    if (!batch_norm_as_affine(bn.attrs, ctx.is_train, out.shape, bn_in, &affine)) return false;
    e.scale = affine.data();
    e.shift = affine.data() + affine.size() / 2;
  }
  if (p.residual >= 0) {
    const TBlob& r = in[static_cast<size_t>(p.residual)];
    if (r.dtype != DType::kFloat32 || r.device.is_gpu() || r.shape != out.shape ||
        !r.is_contiguous())
      return false;
    e.sum = r.ptr<float>();
  }
  if (!conv_forward_with_epilogue(p.instrs[0].attrs, ctx.is_train, conv_in, e, out)) return false;
  // The relu runs its own kernel in place: oneDNN's relu post-op turns NaN into 0, NumPy's
  // maximum(x, 0) and ndx's relu keep it. (The output is still in cache: the pass cost 0.02
  // ms a call in resnet18_v1.)
  if (p.relu) {
    const NodeAttrs& relu = p.instrs.back().attrs;
    cpu_compute_of(relu)(relu, ctx, {out}, {kWriteInplace}, {out});
  }
  return true;
}

// Elsewhere (another dtype, the GPU, batch statistics, NDX_DNNL=0) each op runs its own
// kernel on whole arrays, exactly as the unfused graph would.
void fused_conv_compute(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const FusedProgram& p = program_of(attrs);
  if (req[0] == kNullOp) return;
  if (fused_conv_onednn(p, ctx, in, req[0], out[0])) {
    g_conv_onednn_runs.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_conv_whole_runs.fetch_add(1, std::memory_order_relaxed);
  DTypeVector in_types;
  for (const TBlob& b : in) in_types.push_back(b.dtype);
  run_whole(p, ctx, in, req[0], out[0], instr_types(p, in_types));
}

[[maybe_unused]] const bool conv_registered = [] {
  register_fused(
      "_FusedConvolution",
      "A convolution with the batch_norm, residual add and relu that follow it (made by the "
      "executor's fusion pass, not callable directly): oneDNN applies the first two as it "
      "stores the convolution's output.")
      // The residual is read (added into oneDNN's destination, or by the add) before the
      // output is written, unless the convolution reads it too.
      .set_attr<FInplaceOption>(
          "FInplaceOption",
          [](const NodeAttrs& a) {
            const FusedProgram& p = program_of(a);
            const auto& conv = p.instrs[0].operands;
            std::vector<std::pair<int, int>> v;
            if (p.residual >= 0 && std::find(conv.begin(), conv.end(), p.residual) == conv.end())
              v.emplace_back(p.residual, 0);
            return v;
          })
      .set_attr<FCompute>("FCompute<cpu>", fused_conv_compute)
      .set_attr<FCompute>("FCompute<gpu>", fused_conv_compute);
  return true;
}();

// The op a chain link must be, by name (aliases included); null when the build lacks it.
bool is_op(const Node& n, const char* name) {
  const Op* op = Op::find(name);
  return op && n.op() == op;
}

bool is_relu(const Node& n) {
  if (is_op(n, "_npx_relu")) return true;
  if (!is_op(n, "_npx_activation")) return false;
  auto it = n.attrs.dict.find("act_type");
  return it != n.attrs.dict.end() && it->second == "relu";
}

bool fusable(const Node& n) {
  static const auto& pointwise = Op::attr<bool>("TElementwise");
  return !n.is_variable() && pointwise.get(n.op(), false) && n.num_outputs() == 1 &&
         !n.inputs.empty() && n.control_deps.empty();
}

// Groups in reverse graph order: a node joins the group of its readers when every reader is
// in that one group and it is not a graph output, so only a group's last node (its root) is
// read from outside. A group is then one node without cycles: any path out of it leaves
// from the root, and nothing the root feeds can feed the group.
std::vector<std::vector<NodePtr>> find_groups(const Graph& g, const std::vector<NodePtr>& order,
                                              std::unordered_map<const Node*, int>* group_of) {
  std::unordered_map<const Node*, std::vector<const Node*>> readers;
  std::unordered_set<const Node*> outputs;
  for (const NodeEntry& o : g.outputs) outputs.insert(o.node.get());
  for (const NodePtr& n : order)
    for (const NodeEntry& e : n->inputs) readers[e.node.get()].push_back(n.get());
  std::vector<std::vector<NodePtr>> groups;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodePtr& n = *it;
    if (!fusable(*n)) continue;
    int gid = -1;
    const auto& rs = readers[n.get()];
    if (!outputs.count(n.get()) && !rs.empty()) {
      auto first = group_of->find(rs[0]);
      if (first != group_of->end()) gid = first->second;
      for (const Node* r : rs) {
        auto f = group_of->find(r);
        if (f == group_of->end() || f->second != gid) gid = -1;
      }
      if (gid >= 0 && groups[static_cast<size_t>(gid)].size() >= kMaxGroup) gid = -1;
    }
    if (gid < 0) {
      gid = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    (*group_of)[n.get()] = gid;
    groups[static_cast<size_t>(gid)].push_back(n);  // the root first
  }
  return groups;
}

}  // namespace

bool fusion_enabled() { return fusion_flag().load(std::memory_order_relaxed); }
void set_fusion_enabled(bool on) { fusion_flag().store(on); }
FusionRuns fusion_runs() {
  return {g_vector_runs.load(), g_block_runs.load(), g_whole_runs.load(), g_conv_onednn_runs.load(),
          g_conv_whole_runs.load()};
}

namespace {

// Who reads each entry of g: (reader, input position); graph outputs read as (null, index).
using Readers = std::unordered_map<const Node*, std::vector<std::vector<const Node*>>>;

Readers readers_of(const Graph& g, const std::vector<NodePtr>& order) {
  Readers r;
  auto at = [&](const NodeEntry& e) -> std::vector<const Node*>& {
    auto& v = r[e.node.get()];
    if (v.size() <= e.index) v.resize(e.index + 1);
    return v[e.index];
  };
  for (const NodePtr& n : order)
    for (const NodeEntry& e : n->inputs) at(e).push_back(n.get());
  for (const NodeEntry& o : g.outputs) at(o).push_back(nullptr);
  return r;
}

const std::vector<const Node*>& readers_at(const Readers& r, const Node* n, uint32_t index) {
  static const std::vector<const Node*> none;
  auto it = r.find(n);
  return it == r.end() || it->second.size() <= index ? none : it->second[index];
}

// The node that alone reads n's first output (not a graph output), or null.
const Node* only_reader(const Readers& r, const Node* n) {
  const auto& v = readers_at(r, n, 0);
  return v.size() == 1 ? v[0] : nullptr;
}

// The entries ops of the graph write in place as they run (TUpdatesInputs): batch_norm's
// running statistics (inputs 3 and 4, in training mode), every input of another such op.
using EntrySet = std::set<std::pair<const Node*, uint32_t>>;
EntrySet updated_entries(const std::vector<NodePtr>& order) {
  static const auto& updates = Op::attr<bool>("TUpdatesInputs");
  EntrySet s;
  for (const NodePtr& n : order) {
    if (n->is_variable() || !updates.get(n->op(), false)) continue;
    const bool bn = is_op(*n, "_npx_batch_norm");
    for (size_t i = 0; i < n->inputs.size(); ++i)
      if (!bn || i >= 3) s.insert({n->inputs[i].node.get(), n->inputs[i].index});
  }
  return s;
}

// Whether a link may join a chain, which runs it where the chain's last link was: it reads
// nothing an op writes in place (that op may run in between), and a batch_norm's running
// statistics, which it updates in training mode, have no other reader (that reader would see
// the update late).
bool may_move(const Readers& r, const EntrySet& updated, const Node* link) {
  const bool bn = is_op(*link, "_npx_batch_norm");
  for (size_t i = 0; i < link->inputs.size(); ++i) {
    const NodeEntry& e = link->inputs[i];
    if (bn && i >= 3) {
      for (const Node* reader : readers_at(r, e.node.get(), e.index))
        if (reader != link) return false;
    } else if (updated.count({e.node.get(), e.index})) {
      return false;
    }
  }
  return link->control_deps.empty();
}

// The chain conv -> [batch_norm] -> [add] -> [relu] that starts at conv (two links at least
// to be worth a node), each link the sole reader of the one before, free to move (may_move)
// and in no other chain (`taken`: the add of two convolutions' results joins the first
// one's).
std::vector<const Node*> conv_chain(const Readers& r, const EntrySet& updated, const Node* conv,
                                    const std::unordered_map<const Node*, const Node*>& taken) {
  if (!may_move(r, updated, conv)) return {};
  std::vector<const Node*> chain{conv};
  auto sole_reader = [&](const Node* n) {
    const Node* s = only_reader(r, n);
    return s && !taken.count(s) && may_move(r, updated, s) ? s : nullptr;
  };
  const Node* next = sole_reader(conv);
  if (next && is_op(*next, "_npx_batch_norm") && next->inputs[0].node.get() == conv &&
      readers_at(r, next, 1).empty() && readers_at(r, next, 2).empty()) {
    chain.push_back(next);
    next = sole_reader(next);
  }
  if (next && is_op(*next, "_np_add") && next->inputs.size() == 2 &&
      next->inputs[0].node.get() != next->inputs[1].node.get()) {
    chain.push_back(next);
    next = sole_reader(next);
  }
  if (next && is_relu(*next)) chain.push_back(next);
  if (chain.size() < 2) chain.clear();
  return chain;
}

NodePtr fused_conv_node(const std::vector<const Node*>& chain,
                        const std::function<NodeEntry(const NodeEntry&)>& map_entry) {
  auto prog = std::make_shared<FusedProgram>();
  auto fused = std::make_shared<Node>();
  std::vector<std::pair<const Node*, uint32_t>> external;
  for (size_t i = 0; i < chain.size(); ++i) {
    const Node* m = chain[i];
    FusedProgram::Instr ins{m->attrs, {}};
    for (const NodeEntry& e : m->inputs) {
      if (i > 0 && e.node.get() == chain[i - 1] && e.index == 0) {
        ins.operands.push_back(~static_cast<int>(i - 1));
        continue;
      }
      const std::pair<const Node*, uint32_t> key{e.node.get(), e.index};
      auto at = std::find(external.begin(), external.end(), key);
      if (at == external.end()) {
        external.push_back(key);
        fused->inputs.push_back(map_entry(e));
        at = external.end() - 1;
      }
      const int k = static_cast<int>(at - external.begin());
      ins.operands.push_back(k);
      if (is_op(*m, "_np_add")) prog->residual = k;
    }
    if (is_op(*m, "_npx_batch_norm")) prog->bn = static_cast<int>(i);
    prog->relu |= is_relu(*m);
    prog->instrs.push_back(std::move(ins));
  }
  prog->num_inputs = static_cast<uint32_t>(external.size());
  fused->attrs.op = Op::get("_FusedConvolution");
  fused->attrs.name = "fused_" + chain.front()->attrs.name;
  fused->attrs.parsed = ProgramPtr(std::move(prog));
  return fused;
}

}  // namespace

// A node a fusion pass keeps: its attrs and control deps, its inputs mapped to the new graph.
template <class MapEntry>
NodePtr unfused_copy(const Node& n, const MapEntry& map_entry) {
  auto c = std::make_shared<Node>();
  c->attrs = n.attrs;
  c->control_deps = n.control_deps;
  for (const NodeEntry& e : n.inputs) c->inputs.push_back(map_entry(e));
  return c;
}

Graph fuse_convolutions(const Graph& g, int* fused_nodes, int* fused_ops) {
  *fused_nodes = *fused_ops = 0;
  const std::vector<NodePtr> order = g.topo_order();
  const Readers readers = readers_of(g, order);
  const EntrySet updated = updated_entries(order);
  std::unordered_map<const Node*, const Node*> root_of;  // chain member -> its last node
  std::unordered_map<const Node*, std::vector<const Node*>> chain_at;  // last node -> chain
  for (const NodePtr& n : order) {
    if (!is_op(*n, "_npx_convolution") || !n->control_deps.empty() || root_of.count(n.get()))
      continue;
    std::vector<const Node*> chain = conv_chain(readers, updated, n.get(), root_of);
    if (chain.empty()) continue;
    for (const Node* m : chain) root_of[m] = chain.back();
    chain_at[chain.back()] = std::move(chain);
  }
  std::unordered_map<const Node*, NodePtr> copy;  // old op node -> its replacement
  std::function<NodeEntry(const NodeEntry&)> map_entry = [&](const NodeEntry& e) {
    if (e.node->is_variable()) return e;
    return NodeEntry{copy.at(e.node.get()), e.index, e.version};
  };
  for (const NodePtr& n : order) {
    if (n->is_variable()) continue;
    auto root = root_of.find(n.get());
    if (root != root_of.end()) {
      if (root->second != n.get()) continue;  // inner links are read by their chain only
      const auto& chain = chain_at.at(n.get());
      copy[n.get()] = fused_conv_node(chain, map_entry);
      ++*fused_nodes;
      *fused_ops += static_cast<int>(chain.size());
      continue;
    }
    copy[n.get()] = unfused_copy(*n, map_entry);
  }
  Graph out;
  for (const NodeEntry& o : g.outputs) out.outputs.push_back(map_entry(o));
  return out;
}

Graph fuse_elementwise(const Graph& g, int* fused_nodes, int* fused_ops) {
  *fused_nodes = *fused_ops = 0;
  const std::vector<NodePtr> order = g.topo_order();
  std::unordered_map<const Node*, int> group_of;
  const auto groups = find_groups(g, order, &group_of);
  std::unordered_map<const Node*, NodePtr> copy;  // old op node -> its replacement
  auto map_entry = [&](const NodeEntry& e) {
    if (e.node->is_variable()) return e;
    return NodeEntry{copy.at(e.node.get()), e.index, e.version};
  };
  for (const NodePtr& n : order) {
    if (n->is_variable()) continue;
    auto gi = group_of.find(n.get());
    const std::vector<NodePtr>* group =
        gi == group_of.end() ? nullptr : &groups[static_cast<size_t>(gi->second)];
    if (group && group->size() >= 2) {
      if (group->front() != n) continue;  // members are read only by their group: skip
      auto prog = std::make_shared<FusedProgram>();
      auto fused = std::make_shared<Node>();
      std::unordered_map<const Node*, int> temp_of;
      std::vector<std::pair<const Node*, uint32_t>> external;
      for (auto m = group->rbegin(); m != group->rend(); ++m) {  // graph order
        FusedProgram::Instr ins{(*m)->attrs, {}};
        for (const NodeEntry& e : (*m)->inputs) {
          auto t = temp_of.find(e.node.get());
          if (t != temp_of.end()) {
            ins.operands.push_back(~t->second);
            continue;
          }
          const std::pair<const Node*, uint32_t> key{e.node.get(), e.index};
          auto at = std::find(external.begin(), external.end(), key);
          if (at == external.end()) {
            external.push_back(key);
            fused->inputs.push_back(map_entry(e));
            at = external.end() - 1;
          }
          ins.operands.push_back(static_cast<int>(at - external.begin()));
        }
        temp_of[m->get()] = static_cast<int>(prog->instrs.size());
        prog->instrs.push_back(std::move(ins));
      }
      prog->num_inputs = static_cast<uint32_t>(external.size());
      fused->attrs.op = Op::get("_FusedElementwise");
      fused->attrs.name = "fused_" + n->attrs.name;
      fused->attrs.parsed = ProgramPtr(std::move(prog));
      copy[n.get()] = fused;
      ++*fused_nodes;
      *fused_ops += static_cast<int>(group->size());
      continue;
    }
    copy[n.get()] = unfused_copy(*n, map_entry);
  }
  Graph out;
  for (const NodeEntry& o : g.outputs) out.outputs.push_back(map_entry(o));
  return out;
}

}  // namespace ndx
