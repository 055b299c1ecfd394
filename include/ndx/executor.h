// Graphs as values: tracing a computation into a graph, graph JSON (MXNet's layout: a node
// list with "op", "name", "attrs", "inputs", plus "arg_nodes" and "heads"), and a cached
// executor that replays a graph with little per-node overhead.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ndx/graph.h"

namespace ndx {

struct Graph {
  std::vector<NodeEntry> outputs;

  std::vector<NodePtr> topo_order() const;  // inputs before users
  // Variable nodes without a value: the graph's inputs, in first-use order.
  std::vector<NodePtr> inputs() const;
  std::vector<std::string> input_names() const;
};

std::string graph_to_json(const Graph& g);
// Parses graph JSON; unknown ops, bad params or malformed structure raise ValueError (bad
// params keep their kind) with our own message: "[graph_from_json] invalid JSON at byte N:
// <reason>", or the node index and field at fault. Nesting past 128 levels is refused.
Graph graph_from_json(const std::string& json);

// Shape and dtype inference over a graph from its inputs' shapes and dtypes.
struct GraphTypes {
  std::vector<Shape> output_shapes;
  std::vector<DType> output_types;
};
GraphTypes infer_graph(const Graph& g, const std::vector<Shape>& input_shapes,
                       const std::vector<DType>& input_types);

// MXNet's graph inference from some of the inputs: shapes and dtypes flow forward through
// each op whose inputs are known, and backward into inputs of unknown shape or dtype (a
// fully_connected's weight from its data, a custom op's label from its prop) through the ops
// that set "TFillsInputs" (their FInferShape / FInferType fill such inputs, never read them).
// Passes repeat until nothing changes; what stays unknown is Shape::unknown() / kUnknown. An
// op that finds its known shapes inconsistent raises as in infer_graph.
struct PartialGraphTypes {
  std::vector<Shape> input_shapes, output_shapes;
  std::vector<DType> input_types, output_types;
};
PartialGraphTypes infer_graph_partial(const Graph& g, const std::vector<Shape>& input_shapes,
                                      const std::vector<DType>& input_types);

struct CachedPlan;  // src/op/cached_op.cc

class Executor {
 public:
  explicit Executor(Graph g);
  ~Executor();
  const Graph& graph() const { return graph_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  // Runs the graph on inputs given in input_names() order. Under autograd recording, when an
  // input needs a gradient, the graph is recorded as one node (MXNet's CachedOp: the forward
  // runs planned and unrecorded, the gradient is a backward graph built once per input
  // signature and replayed by its own executor; NDX_CACHED_OP=0 records op by op instead).
  // Otherwise memory is planned as it runs: an intermediate's buffer is reused once its last reader
  // has run, by a later output of the same shape and dtype or, where the op's FInplaceOption
  // allows, by the reader's own output (written in place). Planned runs also fuse connected
  // elementwise ops into one node (src/op/fusion.cc) while fusion_enabled(); traced and recorded
  // runs never do.
  std::vector<NDArray> run(const std::vector<NDArray>& inputs) const;
  // A planned, unrecorded run whose outputs are written into `into` (one per graph output; an
  // undefined array, or one whose shape or dtype differs, gets a buffer of the run's own):
  // the step that makes an output writes it there directly rather than into a buffer that is
  // then copied (the cached backward's gradients go straight into the .grad arrays). The
  // arrays in `into` must not alias the inputs. Returns the outputs, those written into `into`
  // among them.
  std::vector<NDArray> run_into(const std::vector<NDArray>& inputs,
                                const std::vector<NDArray>& into) const;

  // What the last run's memory planning did (for tests and the profiler).
  struct PlanStats {
    int outputs_in_place = 0;   // outputs written over a dying input
    int outputs_reused = 0;     // outputs given a freed buffer
    int outputs_allocated = 0;  // outputs given a fresh buffer
    int kernels = 0;            // nodes invoked (a fused node counts once)
    int fused_nodes = 0;        // of those, fused elementwise nodes
    int fused_ops = 0;          // the graph's ops they ran
    int direct = 0;             // kernels called without invoke (planned CPU steps)
  };
  PlanStats last_plan() const { return stats_; }

 private:
  struct Step {
    const NodeAttrs* attrs;
    std::vector<int> in_slots;
    int out_slot;            // first slot of this node's outputs
    std::vector<int> dying;  // internal slots whose last reader is this step
    // Per output, for planned runs: kNullOp where nothing reads the output (empty: every
    // output is written). Recorded runs write every output: backward may read them.
    std::vector<OpReqType> unread_req;
  };
  // The steps of one graph over the slot table (inputs take slots 0..n-1).
  struct Program {
    Graph graph;  // owns the nodes the steps point into
    std::vector<Step> steps;
    std::vector<std::pair<int, NDArray>> constants;  // slot, value
    std::vector<int> output_slots;
    int num_slots = 0;
    int fused_nodes = 0, fused_ops = 0;
    // Each step's output shapes and dtypes for the last input signature, so planning does
    // not infer them again on every run.
    mutable std::vector<std::pair<ShapeVector, DTypeVector>> step_outs;
  };
  static std::unique_ptr<Program> make_program(Graph g, const std::vector<NodePtr>& inputs);
  // The program a planned run uses: the fused one when fusion is on and found something.
  const Program& planned_program() const;
  std::vector<NDArray> run_cached(const std::vector<NDArray>& inputs) const;
  void plan_outputs(const Program& p, size_t step, std::vector<NDArray>& slots,
                    std::vector<NDArray>& free, std::vector<NDArray>* bufs,
                    const NDArray* const* dest) const;
  std::vector<NDArray> run_planned(const std::vector<NDArray>& inputs,
                                   const std::vector<NDArray>* into) const;
  struct DirectScratch {  // one run's blobs and requests, reused step to step
    std::vector<TBlob> in, out;
    std::vector<OpReqType> req;
  };
  bool run_direct(const Step& s, const std::vector<NDArray>& slots,
                  const std::vector<NDArray>& bufs, DirectScratch& scratch) const;
  Graph graph_;
  std::vector<std::string> input_names_;
  std::unique_ptr<Program> plain_;
  mutable std::unique_ptr<Program> fused_;  // built on the first planned run with fusion on
  mutable bool fusion_tried_ = false;
  mutable PlanStats stats_;
  mutable std::vector<Shape> sig_shapes_;  // the last input signature
  mutable std::vector<DType> sig_types_;
  // The CachedOp plans built so far, one per input signature and set of inputs that need
  // gradients (the last 8).
  mutable std::vector<std::shared_ptr<const CachedPlan>> plans_;
  mutable bool no_cached_plan_ = false;  // the gradient cannot be built: record op by op
  // A node's op keeps the state of one use in its attributes: each recorded run gets its own
  // (a plan built per run, steps parsed afresh).
  bool per_use_state_ = false;
  // A node's backward depends on its forward's mode (batch_norm): plans are per mode.
  bool mode_dependent_ = false;
};

// Whether planned runs fuse connected pointwise ops into one pass over memory: on unless
// NDX_FUSION=0; npx.set_fusion() changes it for later runs. Pointwise ops are those whose
// registration sets the bool attribute "TElementwise": one output, each element a function of
// the same element of the inputs broadcast to the output's shape, so FCompute may run on any
// block of the output (given the inputs' matching views, broadcast dims of extent 1).
bool fusion_enabled();
void set_fusion_enabled(bool on);
// How fused nodes have run since the process started: as a vector program (every op's block
// kernel on small contiguous blocks), op by op on blocks of the output, or op by op on whole
// arrays (GPU arrays, strided outputs); fused convolutions through oneDNN with their epilogue,
// or op by op (conv_whole).
struct FusionRuns {
  int64_t vector = 0, blocks = 0, whole = 0, conv_onednn = 0, conv_whole = 0;
};
FusionRuns fusion_runs();

// While a TraceScope is alive on this thread, every op whose inputs include a traced array is
// recorded into the graph (as autograd records), without changing autograd's own state.
class TraceScope {
 public:
  TraceScope();
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  bool prev_;
};
bool is_tracing();
bool set_tracing(bool on);  // returns the previous state
// `value` as a traced graph input named `name` (same data, a fresh variable node).
NDArray trace_input(const NDArray& value, const std::string& name);
// The graph whose outputs are these traced arrays (arrays never traced become constants).
Graph traced_graph(const std::vector<NDArray>& outputs);

}  // namespace ndx
