#include "ndx/imperative.h"

#include <mutex>
#include <random>

#include "gpu/runtime.h"
#include "kernel/blob.h"
#include "kernel/host_fallback.h"
#include "ndx/amp.h"
#include "ndx/autograd.h"
#include "ndx/default_device.h"
#include "ndx/executor.h"
#include "ndx/op_util.h"
#include "ndx/profiler.h"
#include "ndx/random_position.h"
#include "op/gpu_dispatch.h"

namespace ndx {

namespace {

// The per-process generator that seeds kernels' counter-based streams; kernels may run on any
// thread with the interpreter lock released, so draws take a lock.
std::mutex& random_mutex() {
  static std::mutex m;
  return m;
}
constexpr uint64_t kDefaultSeed = 0x5eed;
std::mt19937_64& random_engine() {
  static std::mt19937_64 engine(kDefaultSeed);
  return engine;
}
RandomPosition& position() {  // guarded by random_mutex(), as the engine
  static RandomPosition p{kDefaultSeed, 0};
  return p;
}

void to_blob(const NDArray& a, TBlob* b) {  // assigns in place, reusing the blob's Shapes
  b->dptr = a.raw_data();
  b->shape = a.shape();
  b->strides = a.strides();
  b->dtype = a.dtype();
  b->device = a.device();
}

// Working vectors of one invoke, reused across calls so the hot path does not allocate them.
// One set per nesting depth: a kernel (or a Python custom op) may invoke other ops.
struct Scratch {
  ShapeVector in_shapes, out_shapes;
  DTypeVector in_types, out_types;
  std::vector<TBlob> in_blobs, out_blobs;
  std::vector<OpReqType> req;
  std::vector<NDArray> targets, held_inputs;
};

class ScratchLease {
 public:
  ScratchLease() {
    if (depth_ == pool_.size()) pool_.push_back(std::make_unique<Scratch>());
    s_ = pool_[depth_++].get();
  }
  ~ScratchLease() {
    s_->targets.clear();  // drop array references now, not at the next call
    s_->held_inputs.clear();
    --depth_;  // the blobs own nothing: they stay for the next call to overwrite
  }
  Scratch& operator*() { return *s_; }

 private:
  Scratch* s_;
  static thread_local std::vector<std::unique_ptr<Scratch>> pool_;
  static thread_local size_t depth_;
};
thread_local std::vector<std::unique_ptr<Scratch>> ScratchLease::pool_;
thread_local size_t ScratchLease::depth_ = 0;

bool same_view(const NDArray& a, const NDArray& b) {
  return a.shares_storage_with(b) && a.byte_offset() == b.byte_offset() &&
         a.strides() == b.strides() && a.shape() == b.shape();
}

// Ops that ran on host copies of GPU arrays, and how often (npx.gpu_host_fallbacks()).
std::mutex& fallback_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, int64_t>& fallback_counts() {
  static auto* counts = new std::map<std::string, int64_t>();
  return *counts;
}

// A GPU op whose family has no GPU kernel yet: its CPU kernel on host copies of the inputs
// (and of add-to outputs), the results copied back. Correct, and counted, never silent.
void run_on_host(const FCompute& compute, const NodeAttrs& attrs, const OpContext& ctx,
                 const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  {
    std::lock_guard<std::mutex> lock(fallback_mutex());
    ++fallback_counts()[attrs.op->name];
  }
  std::vector<NDArray> host_in, host_out;
  std::vector<TBlob> in_b, out_b;
  for (const TBlob& b : in) {
    host_in.push_back(kernel::as_array(b).to(cpu()));
    in_b.push_back(kernel::to_blob(host_in.back()));
  }
  for (size_t j = 0; j < out.size(); ++j) {
    host_out.push_back(req[j] == kAddTo ? kernel::as_array(out[j]).to(cpu())
                                        : NDArray(out[j].shape, out[j].dtype, cpu()));
    out_b.push_back(kernel::to_blob(host_out.back()));
  }
  OpContext host_ctx = ctx;
  host_ctx.device = cpu();
  std::vector<std::shared_ptr<Storage>> temp_holder;
  for (Resource& r : host_ctx.requested) {
    r.device = cpu();
    r.holder = &temp_holder;
  }
  compute(attrs, host_ctx, in_b, req, out_b);
  for (size_t j = 0; j < out.size(); ++j)
    if (req[j] != kNullOp) kernel::as_array(out[j]).assign(host_out[j]);
}

}  // namespace

void compute_on_gpu(const NodeAttrs& attrs, const OpContext& ctx, const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  static const auto& fcompute_cpu = Op::attr<FCompute>("FCompute<cpu>");
  static const auto& fcompute_gpu = Op::attr<FCompute>("FCompute<gpu>");
  const Op* op = attrs.op;
  if (fcompute_gpu.count(op)) {
    try {
      fcompute_gpu[op](attrs, ctx, in, req, out);
      return;
    } catch (const kernel::HostFallback&) {
      // A case the GPU kernel does not cover; it has written nothing. The host runs it below.
    }
  }
  if (!fcompute_cpu.count(op)) not_implemented("[", op->name, "] has no gpu kernel");
  run_on_host(fcompute_cpu[op], attrs, ctx, in, req, out);
}

void run_kernel(const NodeAttrs& attrs, const FCompute& compute, Device device, bool is_train,
                const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& out) {
  static const auto& fresource = Op::attr<FResourceRequest>("FResourceRequest");
  const Op* op = attrs.op;
  OpContext ctx;
  ctx.is_train = is_train;
  ctx.device = device;
  std::vector<std::shared_ptr<Storage>> temp_holder;
  if (fresource.count(op))
    for (const ResourceRequest& r : fresource[op](attrs)) {
      Resource res;
      res.type = r.type;
      res.holder = &temp_holder;
      res.device = device;
      ctx.requested.push_back(res);
    }
  profiler::Span span(op->name, "operator");
  if (device.is_gpu())
    compute_on_gpu(attrs, ctx, in, req, out);
  else
    compute(attrs, ctx, in, req, out);
  if (span.active()) {
    int64_t bytes = 0;
    for (const auto& b : out) bytes += b.size() * static_cast<int64_t>(dtype_size(b.dtype));
    span.set_bytes(bytes);
  }
}

std::map<std::string, int64_t> gpu_host_fallbacks() {
  std::lock_guard<std::mutex> lock(fallback_mutex());
  return fallback_counts();
}

void random_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(random_mutex());
  random_engine().seed(seed);
  position() = {seed, 0};
}

RandomPosition random_position() {
  std::lock_guard<std::mutex> lock(random_mutex());
  return position();
}

void set_random_position(uint64_t key, uint64_t pos) {
  std::lock_guard<std::mutex> lock(random_mutex());
  random_engine().seed(key);
  random_engine().discard(pos);
  position() = {key, pos};
}

void* Resource::get_space(std::size_t bytes) const {
  if (type != ResourceRequest::kTempSpace || !holder)
    raise(ErrorKind::kRuntimeError, "[resource] get_space on a resource that is not temp space");
  holder->push_back(Storage::allocate(bytes, device));
  return holder->back()->data();
}

uint64_t Resource::next_random() const {
  if (type != ResourceRequest::kRandom)
    raise(ErrorKind::kRuntimeError, "[resource] next_random on a resource that is not random");
  std::lock_guard<std::mutex> lock(random_mutex());
  ++position().pos;
  return random_engine()();
}

void infer_shapes(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  static const auto& finfer = Op::attr<FInferShape>("FInferShape");
  const Op* op = attrs.op;
  if (!finfer.count(op)) not_implemented("[", op->name, "] has no shape inference (FInferShape)");
  bool done = finfer[op](attrs, in, out);
  for (size_t i = 0; i < out->size(); ++i)
    if (!done || !(*out)[i].is_known())
      value_error("[", op->name, "] could not infer the shape of output ", i);
}

void infer_types(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  static const auto& finfer = Op::attr<FInferType>("FInferType");
  const Op* op = attrs.op;
  if (!finfer.count(op)) not_implemented("[", op->name, "] has no dtype inference (FInferType)");
  bool done = finfer[op](attrs, in, out);
  for (size_t i = 0; i < out->size(); ++i)
    if (!done || (*out)[i] == DType::kUnknown)
      type_error("[", op->name, "] could not infer the dtype of output ", i);
}

std::vector<NDArray> invoke(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                            const InvokeOptions& options) {
  static const auto& fcompute_cpu = Op::attr<FCompute>("FCompute<cpu>");
  static const auto& fcompute_gpu = Op::attr<FCompute>("FCompute<gpu>");
  static const auto& fstrided = Op::attr<TStridedInputs>("TStridedInputs");
  static const auto& finplace = Op::attr<FInplaceOption>("FInplaceOption");
  const Op* op = attrs.op;
  if (!op) value_error("[invoke] attrs carry no operator");
  if (const amp::Policy* policy = amp::active_policy(); policy && !options.outputs) {
    // (With out= the caller fixed the dtypes; AMP leaves that call alone.)
    if (auto casted = amp::cast_inputs(*policy, attrs, inputs))
      return invoke(attrs, *casted, options);
  }
  const uint32_t nin = op->inputs_for(attrs), nout = op->outputs_for(attrs);
  if (inputs.size() != nin)
    value_error("[", op->name, "] expected ", nin, " input", nin == 1 ? "" : "s", ", got ",
                inputs.size());

  // 1. device, shapes, dtypes: all validation happens before anything is allocated.
  // Ops with no inputs (creation, random draws) create on the `with device:` scope's device.
  Device device = options.device ? *options.device : (nin ? inputs[0].device() : default_device());
  ScratchLease lease;
  Scratch& s = *lease;
  ShapeVector& in_shapes = s.in_shapes;
  ShapeVector& out_shapes = s.out_shapes;
  DTypeVector& in_types = s.in_types;
  DTypeVector& out_types = s.out_types;
  in_shapes.resize(nin);
  in_types.resize(nin);
  out_shapes.assign(nout, Shape::unknown());
  out_types.assign(nout, DType::kUnknown);
  for (uint32_t i = 0; i < nin; ++i) {
    if (!inputs[i].defined()) value_error("[", op->name, "] input ", i, " is an undefined array");
    if (inputs[i].device() != device)
      value_error("[", op->name, "] input ", i, " is on ", inputs[i].device().str(), ", expected ",
                  device.str(), " like the other inputs");
    in_shapes[i] = inputs[i].shape();
    in_types[i] = inputs[i].dtype();
  }
  // Dtypes first, as NumPy resolves a ufunc's loop before it broadcasts: bitwise_and of
  // float arrays of shapes (3,) and (4,) is the TypeError, not the broadcasting ValueError.
  infer_types(attrs, &in_types, &out_types);
  infer_shapes(attrs, &in_shapes, &out_shapes);
  const FCompute* compute = nullptr;  // on a GPU: its kernel, else the CPU one on host copies
  if (device.is_cpu() && fcompute_cpu.count(op)) compute = &fcompute_cpu[op];
  if (device.is_gpu()) {
    cuda::check_device(device, op->name.c_str());
    if (fcompute_gpu.count(op))
      compute = &fcompute_gpu[op];
    else if (fcompute_cpu.count(op))
      compute = &fcompute_cpu[op];
  }
  if (!compute)
    not_implemented("[", op->name, "] has no kernel for ", device.is_cpu() ? "cpu" : "gpu",
                    " in this build");

  std::vector<OpReqType>& req = s.req;
  req.assign(nout, kWriteTo);
  if (options.req) {
    if (options.req->size() != nout)
      value_error("[", op->name, "] expected ", nout, " request types, got ", options.req->size());
    req = *options.req;
  }

  // 2. outputs: the caller's (checked) or fresh ones.
  std::vector<NDArray> outputs(nout);
  const std::vector<NDArray>* given = options.outputs;
  std::vector<NDArray> preferred;  // options.preferred where it fits, fresh arrays elsewhere
  if (!given && options.preferred) {
    if (options.preferred->size() != nout)
      value_error("[", op->name, "] expected ", nout, " preferred output arrays, got ",
                  options.preferred->size());
    preferred.resize(nout);
    for (uint32_t j = 0; j < nout; ++j) {
      const NDArray& o = (*options.preferred)[j];
      const bool fits = o.defined() && o.shape() == out_shapes[j] && o.dtype() == out_types[j] &&
                        o.device() == device;
      if (!fits) checked_size(out_shapes[j], dtype_size(out_types[j]), op_name(attrs).c_str());
      preferred[j] = fits ? o : NDArray(out_shapes[j], out_types[j], device);
    }
    given = &preferred;
  }
  // out= names the visible outputs (dropout's result, not its mask): the hidden ones are fresh.
  std::vector<NDArray> with_hidden;
  const bool callers = given && given == options.outputs;
  if (callers && given->size() < nout && given->size() == op->visible_outputs_for(attrs)) {
    with_hidden = *given;
    for (uint32_t j = static_cast<uint32_t>(given->size()); j < nout; ++j) {
      checked_size(out_shapes[j], dtype_size(out_types[j]), op_name(attrs).c_str());
      with_hidden.emplace_back(out_shapes[j], out_types[j], device);
    }
    given = &with_hidden;
  }
  if (given) {
    if (given->size() != nout)
      value_error("[", op->name, "] expected ", op->visible_outputs_for(attrs), " output arrays",
                  nout > op->visible_outputs_for(attrs) ? " (or all " : "",
                  nout > op->visible_outputs_for(attrs) ? std::to_string(nout) : "",
                  nout > op->visible_outputs_for(attrs) ? " with the hidden ones)" : "", ", got ",
                  given->size());
    for (uint32_t j = 0; j < nout; ++j) {
      const NDArray& o = (*given)[j];
      if (!o.defined()) value_error("[", op->name, "] output ", j, " is an undefined array");
      if (callers && req[j] != kNullOp) o.check_writeable(op->name.c_str(), "output array");
      if (o.shape() != out_shapes[j])
        value_error("[", op->name, "] output ", j, " has shape ", o.shape().str(), ", expected ",
                    out_shapes[j].str());
      if (o.dtype() != out_types[j])
        type_error("[", op->name, "] output ", j, " has dtype ", o.dtype(), ", expected ",
                   out_types[j]);
      if (o.device() != device)
        value_error("[", op->name, "] output ", j, " is on ", o.device().str(), ", expected ",
                    device.str());
      if (device.is_cpu()) cuda::wait_for_host_write(o.raw_data());  // pinned: copies out first
      outputs[j] = o;
    }
  } else {
    for (uint32_t j = 0; j < nout; ++j) {  // checked here so the error names the op
      checked_size(out_shapes[j], dtype_size(out_types[j]), op_name(attrs).c_str());
      outputs[j] = NDArray(out_shapes[j], out_types[j], device);
    }
  }

  // 3. inputs contiguous unless the op takes strides.
  std::vector<TBlob>& in_blobs = s.in_blobs;
  in_blobs.resize(nin);
  const bool strided_ok = fstrided.get(op, false);
  std::vector<NDArray>& held_inputs = s.held_inputs;
  held_inputs.reserve(nin);  // in_blobs point into it
  for (uint32_t i = 0; i < nin; ++i) {
    if (strided_ok || inputs[i].is_contiguous()) {
      to_blob(inputs[i], &in_blobs[i]);
    } else {
      held_inputs.push_back(inputs[i].copy());
      to_blob(held_inputs.back(), &in_blobs[i]);
    }
  }

  // Outputs the kernel cannot write directly (non-contiguous, or aliasing an input without an
  // in-place option) are computed into a scratch array and copied back.
  // Fresh outputs are contiguous and alias nothing: the kernel writes them directly.
  std::vector<std::pair<int, int>> inplace;
  if (given && finplace.count(op)) inplace = finplace[op](attrs);
  std::vector<NDArray>& targets = s.targets;
  std::vector<TBlob>& out_blobs = s.out_blobs;
  out_blobs.resize(nout);
  if (given) targets = outputs;
  for (uint32_t j = 0; j < nout && !given; ++j) to_blob(outputs[j], &out_blobs[j]);
  for (uint32_t j = 0; j < nout && given; ++j) {
    bool aliased = false, inplace_ok = false;
    for (uint32_t i = 0; i < nin; ++i) {
      if (!inputs[i].shares_storage_with(outputs[j])) continue;
      bool allowed = false;
      for (auto [pi, po] : inplace)
        allowed |= pi == static_cast<int>(i) && po == static_cast<int>(j);
      if (allowed && same_view(inputs[i], outputs[j]) && in_blobs[i].dptr == outputs[j].raw_data())
        inplace_ok = true;
      else
        aliased = true;
    }
    if (aliased || !outputs[j].is_contiguous()) {
      targets[j] = NDArray(out_shapes[j], out_types[j], device);
      if (req[j] == kAddTo) targets[j].assign(outputs[j]);
      if (req[j] == kWriteInplace) req[j] = kWriteTo;
    } else if (inplace_ok && req[j] == kWriteTo) {
      req[j] = kWriteInplace;
    }
    to_blob(targets[j], &out_blobs[j]);
  }

  // Arrays last used by another thread's stream: this stream waits for that work first.
  if (device.is_gpu()) {
    for (const NDArray& a : inputs) cuda::use_on_this_stream(a.storage()->data(), device.id);
    for (uint32_t j = 0; j < nout && given; ++j)
      cuda::use_on_this_stream(outputs[j].storage()->data(), device.id);
  }

  // 4. resources and dispatch.
  const bool recording = autograd::is_recording() || is_tracing();
  if (recording && options.outputs) {
    for (const NDArray& in : inputs)
      if (in.autograd_entry())
        not_implemented("[", op_name(attrs),
                        "] writing into existing arrays (out=, in-place operators) ",
                        "is not supported while autograd records an array that requires grad");
    // (out= an array autograd records, or a view of one: backward may read its old values)
    for (const NDArray& out : *options.outputs)
      if (autograd::requires_grad(out))
        not_implemented("[", op_name(attrs), "] writing into an array autograd records (out=) ",
                        "is not supported: its values may be saved for backward");
  }
  run_kernel(attrs, *compute, device, options.is_train || autograd::is_training(), in_blobs, req,
             out_blobs);

  for (uint32_t j = 0; j < nout && given; ++j)
    if (targets[j].raw_data() != outputs[j].raw_data() && req[j] != kNullOp)
      outputs[j].assign(targets[j]);
  if (recording) autograd::record_op(attrs, inputs, &outputs);
  if (!options.all_outputs) outputs.resize(op->visible_outputs_for(attrs));
  return outputs;
}

std::vector<NDArray> invoke(const std::string& op_name, const std::vector<NDArray>& inputs,
                            std::map<std::string, std::string> dict, const InvokeOptions& options) {
  return invoke(Op::get(op_name)->make_attrs(std::move(dict)), inputs, options);
}

}  // namespace ndx
