#include "ndx/library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "gpu/runtime.h"

#include "ndx/graph.h"
#define NDX_LIB_C_ONLY  // the engine needs the ABI structs, not the author-side helpers
#include "ndx/lib_api.h"
#include "ndx/op_util.h"

namespace ndx {

namespace {

using VersionFn = int (*)();
using LastErrorFn = const char* (*)();
using NumOpsFn = int (*)();
using GetOpFn = int (*)(int, NDXLibOp*);

// What identifies the file a library was loaded from: a rebuild at the same path changes it.
struct FileId {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0;
  uint64_t hash = 0;  // FNV-1a of the contents: a touch or a copy of the same build is no change
  bool same_stat(const FileId& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
  }
};

struct Library {
  std::string path;
  FileId file;
  void* handle = nullptr;
  LastErrorFn last_error = nullptr;
  std::vector<NDXLibOp> ops;
  std::vector<std::string> names;
};

// The parsed attributes of one use of a library op: C views over owned strings.
// The state of one use of a stateful library op, destroyed by the library when the use ends.
struct LibState {
  void* ptr = nullptr;
  NDXLibDestroyState destroy = nullptr;
  ~LibState() {
    if (ptr && destroy) destroy(ptr);
  }
};

struct LibAttrs {
  std::shared_ptr<Library> lib;
  const NDXLibOp* op = nullptr;
  std::shared_ptr<LibState> state = std::make_shared<LibState>();  // shared with the backward node
  std::vector<std::string> keys, values;
  std::vector<const char*> kptr, vptr;
  int32_t num_inputs = 1, num_outputs = 1;
  std::vector<int32_t> mutated;  // inputs the op writes in place
  NDXLibAttrs c() const { return {static_cast<int32_t>(kptr.size()), kptr.data(), vptr.data()}; }
};

std::string lib_error(const Library& lib) {
  const char* e = lib.last_error ? lib.last_error() : nullptr;
  return e && *e ? e : "(no message)";
}

void check(const LibAttrs& a, int rc, const char* what) {
  if (rc != 0)
    value_error("[", a.op->name, "] ", what, " failed in library ", a.lib->path, ": ",
                lib_error(*a.lib));
}

// Calls a library function. Libraries built with lib_api.h catch everything they throw; one
// written against the bare C ABI may still let an exception out, and it must not take the
// process down: it becomes the same ValueError as a failure the library reports itself.
template <typename F>
int guarded(const LibAttrs& a, const char* what, F&& f) {
  try {
    return f();
  } catch (const Error&) {
    throw;  // ndx's own, from a callback into the engine
  } catch (const std::exception& e) {
    value_error("[", a.op->name, "] ", what, " threw through the C ABI in library ", a.lib->path,
                ": ", e.what());
  } catch (...) {
    value_error("[", a.op->name, "] ", what, " threw an unknown exception through the C ABI in ",
                "library ", a.lib->path);
  }
}

NDXLibTensor tensor_of(const TBlob& b) {
  return {b.dptr,
          b.shape.data(),
          b.ndim(),
          static_cast<int32_t>(b.dtype),
          b.device.is_cpu() ? 1 : 2,
          b.device.id};
}

// The stream a library's gpu kernels launch into: the one ndx's own kernels use on this thread.
void* stream_of(const Device& d) { return d.is_gpu() ? cuda::current_stream() : nullptr; }

struct ResourceCtx {
  std::vector<std::shared_ptr<Storage>> held;
  Device device;
  const OpContext* op_ctx;
  std::exception_ptr error;  // raised once the library returns (never thrown through it)
};

// Callbacks into the engine never throw through the library's frames: alloc_temp gives null
// and the engine raises its error (MemoryError, say) after the library returns.
void* alloc_temp(void* ctx, size_t bytes) {
  auto* c = static_cast<ResourceCtx*>(ctx);
  try {
    c->held.push_back(Storage::allocate(bytes, c->device));
    return c->held.back()->data();
  } catch (...) {
    if (!c->error) c->error = std::current_exception();
    return nullptr;
  }
}

uint64_t next_random(void* ctx) {
  auto* c = static_cast<ResourceCtx*>(ctx);
  try {
    for (const Resource& r : c->op_ctx->requested)
      if (r.type == ResourceRequest::kRandom) return r.next_random();
  } catch (...) {
    if (!c->error) c->error = std::current_exception();
  }
  return 0;
}

// The engine's own error from a callback first, then the library's.
void finish(const LibAttrs& a, const ResourceCtx& rctx, int rc, const char* what) {
  if (rctx.error) std::rethrow_exception(rctx.error);
  check(a, rc, what);
}

// Library kernels read contiguous row-major data. The op takes strided inputs from invoke so a
// mutated input arrives as its own memory (it must then be contiguous); other strided inputs
// are copied here.
std::vector<NDXLibTensor> lib_inputs(const LibAttrs& a, const std::vector<TBlob>& in,
                                     std::vector<NDArray>* keep) {
  std::vector<NDXLibTensor> out;
  keep->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].is_contiguous()) {
      out.push_back(tensor_of(in[i]));
      continue;
    }
    if (std::find(a.mutated.begin(), a.mutated.end(), static_cast<int32_t>(i)) != a.mutated.end())
      value_error("[", a.op->name, "] input ", i,
                  " is written in place by the op and must be contiguous");
    NDArray view(Storage::wrap(in[i].dptr, 0, in[i].device, [] {}), 0, in[i].shape, in[i].strides,
                 in[i].dtype);
    keep->push_back(view.copy());
    const NDArray& c = keep->back();
    TBlob b{c.raw_data(), c.shape(), c.strides(), c.dtype(), c.device()};
    out.push_back(tensor_of(b));
  }
  return out;
}

void* state_of(const LibAttrs& a) {
  if (!a.state->ptr) {
    NDXLibAttrs c = a.c();
    void* s = nullptr;
    check(a, guarded(a, "create_op_state", [&] { return a.op->create_state(&c, &s); }),
          "create_op_state");
    a.state->ptr = s;
    a.state->destroy = a.op->destroy_state;
  }
  return a.state->ptr;
}

void run_stateful(const LibAttrs& a, NDXLibStateCompute fn, const OpContext& ctx,
                  const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                  const std::vector<TBlob>& out, const char* what) {
  std::vector<NDArray> keep;
  std::vector<NDXLibTensor> cin = lib_inputs(a, in, &keep), cout;
  for (const auto& b : out) cout.push_back(tensor_of(b));
  std::vector<int32_t> creq(req.begin(), req.end());
  ResourceCtx rctx{{}, ctx.device, &ctx, nullptr};
  NDXLibResource res{&rctx, alloc_temp, next_random, stream_of(ctx.device)};
  void* state = state_of(a);
  int rc = guarded(a, what, [&] {
    return fn(state, static_cast<int32_t>(cin.size()), cin.data(),
              static_cast<int32_t>(cout.size()), cout.data(), creq.data(), &res);
  });
  finish(a, rctx, rc, what);
}

void run(const LibAttrs& a, NDXLibCompute fn, const OpContext& ctx, const std::vector<TBlob>& in,
         const std::vector<OpReqType>& req, const std::vector<TBlob>& out, const char* what) {
  std::vector<NDArray> keep;
  std::vector<NDXLibTensor> cin = lib_inputs(a, in, &keep), cout;
  for (const auto& b : out) cout.push_back(tensor_of(b));
  std::vector<int32_t> creq(req.begin(), req.end());
  ResourceCtx rctx{{}, ctx.device, &ctx, nullptr};
  NDXLibResource res{&rctx, alloc_temp, next_random, stream_of(ctx.device)};
  NDXLibAttrs attrs = a.c();
  int rc = guarded(a, what, [&] {
    return fn(&attrs, static_cast<int32_t>(cin.size()), cin.data(),
              static_cast<int32_t>(cout.size()), cout.data(), creq.data(), &res);
  });
  finish(a, rctx, rc, what);
}

void register_op(const std::shared_ptr<Library>& lib, const NDXLibOp* desc) {
  const std::string name = desc->name;
  auto parser = [lib, desc](NodeAttrs* attrs) {
    LibAttrs a;
    a.lib = lib;
    a.op = desc;
    for (const auto& [k, v] : attrs->dict) a.keys.push_back(k), a.values.push_back(v);
    a.keys.push_back("__op__");
    a.values.push_back(desc->name);
    for (size_t i = 0; i < a.keys.size(); ++i)
      a.kptr.push_back(a.keys[i].c_str()), a.vptr.push_back(a.values[i].c_str());
    if (desc->parse_attrs) {
      NDXLibAttrs c = a.c();
      check(a,
            guarded(a, "parse_attrs",
                    [&] { return desc->parse_attrs(&c, &a.num_inputs, &a.num_outputs); }),
            "parse_attrs");
    }
    if (desc->mutate_inputs) {
      int32_t num = 0, idx[NDX_LIB_MAX_DIMS];
      NDXLibAttrs c = a.c();
      check(a, guarded(a, "mutate_inputs", [&] { return desc->mutate_inputs(&c, &num, idx); }),
            "mutate_inputs");
      if (num < 0 || num > NDX_LIB_MAX_DIMS)
        value_error("[", desc->name, "] mutate_inputs gave ", num, " inputs; at most ",
                    NDX_LIB_MAX_DIMS, " are allowed");
      for (int32_t k = 0; k < num; ++k) {
        if (idx[k] < 0 || idx[k] >= a.num_inputs)
          value_error("[", desc->name, "] mutate_inputs names input ", idx[k], " of ",
                      a.num_inputs);
        a.mutated.push_back(idx[k]);
      }
    }
    if (a.num_inputs < 0 || a.num_outputs < 1)
      value_error("[", desc->name, "] parse_attrs gave ", a.num_inputs, " inputs and ",
                  a.num_outputs, " outputs");
    attrs->parsed = std::make_shared<LibAttrs>(std::move(a));
  };
  auto get = [](const NodeAttrs& n) -> const LibAttrs& {
    return *n.get<std::shared_ptr<LibAttrs>>();
  };
  Op& op = OpRegistry::global().register_op(name);
  op.describe("Operator '" + name + "' from the library " + lib->path + ".")
      .add_argument("data", "NDArray[]", "Inputs of the library op.")
      .set_attr_parser(parser)
      .set_num_inputs(
          [get](const NodeAttrs& n) { return static_cast<uint32_t>(get(n).num_inputs); })
      .set_num_outputs(
          [get](const NodeAttrs& n) { return static_cast<uint32_t>(get(n).num_outputs); })
      .set_attr<FInferShape>(
          "FInferShape",
          [get](const NodeAttrs& n, ShapeVector* in, ShapeVector* out) {
            const LibAttrs& a = get(n);
            std::vector<const int64_t*> dims;
            std::vector<int32_t> nd;
            for (const auto& s : *in) {
              if (!s.is_known()) return false;
              dims.push_back(s.data()), nd.push_back(s.ndim());
            }
            std::vector<int64_t> outs(out->size() * NDX_LIB_MAX_DIMS);
            std::vector<int32_t> out_nd(out->size());
            NDXLibAttrs c = a.c();
            check(a,
                  guarded(a, "infer_shape",
                          [&] {
                            return a.op->infer_shape(
                                &c, static_cast<int32_t>(in->size()), dims.data(), nd.data(),
                                static_cast<int32_t>(out->size()), outs.data(), out_nd.data());
                          }),
                  "infer_shape");
            for (size_t j = 0; j < out->size(); ++j) {
              if (out_nd[j] < 0 || out_nd[j] > NDX_LIB_MAX_DIMS)
                value_error("[", a.op->name, "] infer_shape gave ", out_nd[j], " dims");
              Shape s(outs.data() + j * NDX_LIB_MAX_DIMS,
                      outs.data() + j * NDX_LIB_MAX_DIMS + out_nd[j]);
              for (int64_t d : s)
                if (d < 0) value_error("[", a.op->name, "] infer_shape gave shape ", s.str());
              // A shape whose size overflows is refused here, in graphs too, before anything
              // sizes a buffer from it (the dtype is not known yet: the element count alone).
              checked_size(s, 1, a.op->name);
              assign_shape(n, &(*out)[j], s, "output", static_cast<int>(j));
            }
            return true;
          })
      .set_attr<FInferType>(
          "FInferType",
          [get](const NodeAttrs& n, DTypeVector* in, DTypeVector* out) {
            const LibAttrs& a = get(n);
            std::vector<int32_t> ti, to(out->size(), -1);
            for (DType t : *in) ti.push_back(static_cast<int32_t>(t));
            for (DType t : *in)
              if (t == DType::kUnknown) return false;
            if (!a.op->infer_type) {  // optional: input 0's dtype
              const DType t = in->empty() ? DType::kFloat32 : (*in)[0];
              for (DType& o : *out) o = t;
              return true;
            }
            NDXLibAttrs c = a.c();
            check(a,
                  guarded(a, "infer_type",
                          [&] {
                            return a.op->infer_type(&c, static_cast<int32_t>(ti.size()), ti.data(),
                                                    static_cast<int32_t>(to.size()), to.data());
                          }),
                  "infer_type");
            for (size_t j = 0; j < out->size(); ++j) {
              if (to[j] < 0 || to[j] >= kNumDTypes)
                type_error("[", a.op->name, "] infer_type gave dtype code ", to[j]);
              (*out)[j] = static_cast<DType>(to[j]);
            }
            return true;
          })
      .set_attr<TStridedInputs>("TStridedInputs", true)
      .set_attr<FResourceRequest>(
          "FResourceRequest",
          [](const NodeAttrs&) { return std::vector<ResourceRequest>{{ResourceRequest::kRandom}}; })
      .set_attr<FCompute>(
          "FCompute<cpu>",
          [get](const NodeAttrs& n, const OpContext& ctx, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
            const LibAttrs& a = get(n);
            if (a.op->create_state)
              return run_stateful(a, a.op->state_forward, ctx, in, req, out, "forward");
            if (!a.op->forward_cpu)
              not_implemented("[", a.op->name, "] the library has no cpu forward");
            run(a, a.op->forward_cpu, ctx, in, req, out, "forward");
          });
  if (desc->create_state)  // a recorded call in a graph gets a state of its own (executor)
    op.set_attr<bool>("TPerUseState", true);
  if (desc->forward_gpu)  // runs on ndx's stream (resource.cuda_stream)
    op.set_attr<FCompute>(
        "FCompute<gpu>",
        [get](const NodeAttrs& n, const OpContext& ctx, const std::vector<TBlob>& in,
              const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
          run(get(n), get(n).op->forward_gpu, ctx, in, req, out, "forward");
        });
  if (!desc->backward_cpu && !desc->state_backward) return;
  const std::string bwd = "_backward_" + name;
  op.set_attr<FGradient>("FGradient", [bwd](const NodePtr& n, const std::vector<NodeEntry>& og) {
    std::vector<NodeEntry> heads(og.begin(), og.end());
    heads.insert(heads.end(), n->inputs.begin(), n->inputs.end());
    for (uint32_t i = 0; i < n->num_outputs(); ++i) heads.push_back(NodeEntry{n, i, 0});
    return make_grad_node(bwd, n, heads, /*share_params=*/true);
  });
  OpRegistry::global()
      .register_op(bwd)
      .describe("Backward of the library op '" + name +
                "': (ograds, inputs, outputs) -> input grads.")
      .set_num_inputs([get](const NodeAttrs& n) {
        return static_cast<uint32_t>(2 * get(n).num_outputs + get(n).num_inputs);
      })
      .set_num_outputs(
          [get](const NodeAttrs& n) { return static_cast<uint32_t>(get(n).num_inputs); })
      .set_attr<FInferShape>("FInferShape",
                             [get](const NodeAttrs& n, ShapeVector* in, ShapeVector* out) {
                               const LibAttrs& a = get(n);
                               for (int i = 0; i < a.num_inputs; ++i)
                                 assign_shape(n, &(*out)[i], (*in)[a.num_outputs + i], "output", i);
                               return true;
                             })
      .set_attr<FInferType>("FInferType",
                            [get](const NodeAttrs& n, DTypeVector* in, DTypeVector* out) {
                              const LibAttrs& a = get(n);
                              for (int i = 0; i < a.num_inputs; ++i)
                                (*out)[i] = (*in)[a.num_outputs + i];
                              return true;
                            })
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>(
          "FCompute<cpu>",
          [get](const NodeAttrs& n, const OpContext& ctx, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
            if (get(n).op->state_backward)
              return run_stateful(get(n), get(n).op->state_backward, ctx, in, req, out, "backward");
            run(get(n), get(n).op->backward_cpu, ctx, in, req, out, "backward");
          });
}

std::mutex& libs_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::shared_ptr<Library>>& loaded() {
  static auto* libs = new std::map<std::string, std::shared_ptr<Library>>();
  return *libs;
}

// More than any real library has; the bound keeps a bogus count from sizing a table.
constexpr int kMaxLibraryOps = 1 << 16;

FileId file_id(const std::string& path, bool hash) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    value_error("[library.load] cannot load ", path, ": no such file or not readable");
  FileId id;
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.ino = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (hash) {
    std::ifstream f(path, std::ios::binary);
    uint64_t h = 1469598103934665603ull;
    char buf[1 << 16];
    while (f) {
      f.read(buf, sizeof(buf));
      for (std::streamsize i = 0; i < f.gcount(); ++i)
        h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
    }
    id.hash = h;
  }
  return id;
}

// " (by library <path>)" for an op a loaded library registered, else "".
std::string owner_of(const std::string& op) {
  for (const auto& [path, lib] : loaded())
    for (const std::string& n : lib->names)
      if (n == op || "_backward_" + n == op || n == "_backward_" + op)
        return " (by the library " + path + ")";
  return "";
}

template <typename F>
F symbol(void* handle, const char* name, const std::string& path) {
  void* p = dlsym(handle, name);
  if (!p)
    value_error("[library.load] ", path, " is not an ndx operator library: it lacks the function ",
                name);
  return reinterpret_cast<F>(p);
}

}  // namespace

bool library_op_is_stateful(const std::string& op) {
  std::lock_guard<std::mutex> lock(libs_mutex());
  for (const auto& [path, lib] : loaded())
    for (const NDXLibOp& o : lib->ops)
      if (o.name && op == o.name) return o.create_state != nullptr;
  return false;
}

std::vector<std::string> load_library(const std::string& path) {
  std::lock_guard<std::mutex> lock(libs_mutex());
  auto it = loaded().find(path);
  if (it != loaded().end()) {
    // Loaded before: the same file again is a no-op; a different one (a rebuild) is refused.
    // dlopen hands back the loaded copy for a path it knows, and the ops already registered
    // may sit in graphs, autograd tapes and cached executors, so they cannot be swapped.
    Library& lib = *it->second;
    FileId now = file_id(path, /*hash=*/false);
    if (now.same_stat(lib.file)) return lib.names;
    now = file_id(path, /*hash=*/true);
    if (now.hash != lib.file.hash)
      value_error("[library.load] ", path, " changed since it was loaded (rebuilt?); a process ",
                  "holds one version of an operator library, and its ops keep running the ",
                  "version loaded first. Restart the process to load the new build");
    lib.file = now;  // touched or copied over with the same contents
    return lib.names;
  }
  const FileId id = file_id(path, /*hash=*/true);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    value_error("[library.load] cannot load ", path, ": ", e ? e : "unknown error");
  }
  auto lib = std::make_shared<Library>();
  lib->path = path;
  lib->file = id;
  lib->handle = handle;
  try {
    auto version = symbol<VersionFn>(handle, "ndx_lib_version", path);
    lib->last_error = symbol<LastErrorFn>(handle, "ndx_lib_last_error", path);
    auto num_ops = symbol<NumOpsFn>(handle, "ndx_lib_num_ops", path);
    auto get_op = symbol<GetOpFn>(handle, "ndx_lib_get_op", path);
    int v = version();
    if (v != NDX_LIB_API_VERSION)
      value_error("[library.load] ", path, " was built against lib_api version ", v,
                  "; this ndx loads version ", NDX_LIB_API_VERSION);
    int n = num_ops();
    if (n < 0 || n > kMaxLibraryOps)
      value_error("[library.load] ", path, " reports ", n, " operators; a library may have 0 to ",
                  kMaxLibraryOps);
    lib->ops.resize(static_cast<size_t>(n));
    // Every check before any registration, so a bad library changes nothing.
    for (int i = 0; i < n; ++i) {
      if (get_op(i, &lib->ops[i]) != 0)
        value_error("[library.load] ", path, ": getting operator ", i,
                    " failed: ", lib_error(*lib));
      const NDXLibOp& op = lib->ops[i];
      if (!op.name || !*op.name)
        value_error("[library.load] ", path, ": operator ", i, " has no name");
      std::string name = op.name;
      if (!op.infer_shape)
        value_error("[library.load] ", path, ": operator '", name, "' has no infer_shape");
      if (!op.forward_cpu && !op.forward_gpu && !op.create_state)
        value_error("[library.load] ", path, ": operator '", name, "' has no forward");
      if (op.create_state && (!op.state_forward || !op.destroy_state))
        value_error("[library.load] ", path, ": stateful operator '", name,
                    "' lacks its state functions");
      if (Op::find(name) || Op::find("_backward_" + name))
        value_error("[library.load] ", path, ": an operator named '", name,
                    "' is already registered", owner_of(name),
                    "; a process holds one version of an op: restart it to load another build");
      for (int j = 0; j < i; ++j)
        if (name == lib->ops[j].name)
          value_error("[library.load] ", path, ": operator '", name, "' appears twice");
      lib->names.push_back(name);
    }
  } catch (...) {
    dlclose(handle);
    throw;
  }
  for (const NDXLibOp& op : lib->ops) register_op(lib, &op);
  loaded()[path] = lib;
  return lib->names;
}

}  // namespace ndx
