// Graph capture, the cached executor, graph JSON and graph inference, checked against running
// the same computation imperatively (and by hand where values are simple).
#include "ndx/amp.h"
#include "ndx/autograd.h"
#include "ndx/executor.h"
#include "op/fusion.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_close;
using test::expect_error;

NDArray f(const NDArray& x, const NDArray& w) {
  return np::tanh(np::matmul(x, w)) * 2.0 + np::sum(w, 0);
}

Graph trace_f(const NDArray& x, const NDArray& w) {
  TraceScope trace;
  NDArray tx = trace_input(x, "x"), tw = trace_input(w, "w");
  return traced_graph({f(tx, tw)});
}

TEST(Graph, TracedGraphReplaysLikeImperative) {
  NDArray x = NDArray::from_vector(test::values(6, -1, 1, 1), {2, 3});
  NDArray w = NDArray::from_vector(test::values(12, -1, 1, 2), {3, 4});
  Graph g = trace_f(x, w);
  EXPECT_EQ(g.input_names(), (std::vector<std::string>{"x", "w"}));
  Executor exec(g);
  // New inputs, same graph: the scalar 2.0 was captured as a constant.
  NDArray x2 = NDArray::from_vector(test::values(6, -1, 1, 3), {2, 3});
  expect_close(exec.run({x2, w})[0].to_vector<double>(), f(x2, w).to_vector<double>(), 1e-12,
               1e-12);
  GraphTypes t = infer_graph(g, {Shape{5, 3}, Shape{3, 4}}, {DType::kFloat64, DType::kFloat64});
  EXPECT_EQ(t.output_shapes[0], (Shape{5, 4}));
  EXPECT_EQ(t.output_types[0], DType::kFloat64);
  // Constants keep the dtype they had when traced (float64 here), so float32 inputs promote:
  // one reason graphs are cached per input dtype.
  t = infer_graph(g, {Shape{5, 3}, Shape{3, 4}}, {DType::kFloat32, DType::kFloat32});
  EXPECT_EQ(t.output_types[0], DType::kFloat64);
  expect_error(
      ErrorKind::kValueError,
      [&] {
        infer_graph(g, {Shape{5, 2}, Shape{3, 4}}, {DType::kFloat32, DType::kFloat32});
      },
      "matmul");
  expect_error(
      ErrorKind::kValueError, [&] { exec.run({x2}); }, "takes 2 inputs");
}

TEST(Graph, JsonRoundTrip) {
  NDArray x = NDArray::from_vector(test::values(6, -1, 1, 4), {2, 3});
  NDArray w = NDArray::from_vector(test::values(12, -1, 1, 5), {3, 4});
  Graph g = trace_f(x, w);
  std::string text = graph_to_json(g);
  EXPECT_NE(text.find("\"_np_matmul\""), std::string::npos);
  EXPECT_NE(text.find("\"arg_nodes\""), std::string::npos);
  Graph back = graph_from_json(text);
  EXPECT_EQ(back.input_names(), g.input_names());
  EXPECT_EQ(graph_to_json(back), text);
  expect_close(Executor(back).run({x, w})[0].to_vector<double>(), f(x, w).to_vector<double>(),
               1e-12, 1e-12);
}

TEST(Graph, BadJsonRaises) {
  expect_error(
      ErrorKind::kValueError, [] { graph_from_json("{not json"); }, "invalid JSON at byte 2");
  expect_error(
      ErrorKind::kValueError, [] { graph_from_json("[]"); }, "'nodes'");
  expect_error(
      ErrorKind::kValueError,
      [] {
        graph_from_json(
            R"({"nodes":[{"op":"_np_nope","name":"a","inputs":[]}],"heads":[[0,0,0]]})");
      },
      "_np_nope");
  expect_error(
      ErrorKind::kValueError,
      [] {
        graph_from_json(
            R"({"nodes":[{"op":"_np_exp","name":"e","inputs":[[3,0,0]]}],"heads":[[0,0,0]]})");
      },
      "not defined before");
  expect_error(
      ErrorKind::kValueError,
      [] {
        graph_from_json(R"({"nodes":[{"op":"null","name":"x","inputs":[]}],"heads":[[0,2,0]]})");
      },
      "head");
  expect_error(
      ErrorKind::kValueError,
      [] {
        graph_from_json(R"({"nodes":[{"op":"null","name":"x","inputs":[]},
      {"op":"_np_sum","name":"s","attrs":{"axis":"bad"},"inputs":[[0,0,0]]}],"heads":[[1,0,0]]})");
      },
      "'axis'");
}

TEST(Graph, ExecutorRunsUnderAutograd) {
  NDArray x = NDArray::from_vector(test::values(6, -1, 1, 6), {2, 3});
  NDArray w = NDArray::from_vector(test::values(12, -1, 1, 7), {3, 4});
  Executor exec(trace_f(x, w));
  NDArray wa = w, wb = w.copy();
  autograd::attach_grad(wa);
  autograd::attach_grad(wb);
  NDArray y1, y2;
  {
    autograd::RecordScope record;
    y1 = np::sum(exec.run({x, wa})[0]);
    y2 = np::sum(f(x, wb));
  }
  autograd::backward({y1});
  autograd::backward({y2});
  expect_close(autograd::grad_of(wa).to_vector<double>(), autograd::grad_of(wb).to_vector<double>(),
               1e-12, 1e-12);
}

}  // namespace
}  // namespace ndx

namespace ndx {
namespace {

NDArray chain(const NDArray& x) {
  NDArray y = np::exp(x * 0.1);
  NDArray z = np::sin(y) + np::cos(y);  // y is read twice before it dies
  return np::tanh(np::square(z)) - np::negative(z);
}

// Fusion off for the duration of a test that counts planned buffers of an elementwise chain
// (fused, the chain has no intermediates to plan).
struct NoFusion {
  bool prev = fusion_enabled();
  NoFusion() { set_fusion_enabled(false); }
  ~NoFusion() { set_fusion_enabled(prev); }
};

TEST(Graph, MemoryPlanningReusesDeadBuffersAndKeepsResults) {
  NoFusion no_fusion;
  NDArray x = NDArray::from_vector(test::values(1000, -1, 1, 9), {10, 100});
  Graph g;
  {
    TraceScope trace;
    g = traced_graph({chain(trace_input(x, "x"))});
  }
  Executor exec(g);
  NDArray planned = exec.run({x})[0];
  Executor::PlanStats s = exec.last_plan();
  EXPECT_GT(s.outputs_in_place + s.outputs_reused, 3)
      << "in place " << s.outputs_in_place << ", reused " << s.outputs_reused;
  EXPECT_EQ(planned.to_vector<double>(), chain(x).to_vector<double>());  // bit for bit
  // The output and the input are never overwritten.
  EXPECT_FALSE(planned.shares_storage_with(x));
  NDArray again = exec.run({x})[0];
  EXPECT_FALSE(again.shares_storage_with(planned));
  EXPECT_EQ(again.to_vector<double>(), planned.to_vector<double>());
  // Under autograd recording the graph is one node (CachedOp): the values its backward reads
  // are extra outputs of the forward, so the rest is still planned, and the gradient equals
  // the one recorded op by op.
  NDArray xr = x.copy();
  autograd::attach_grad(xr);
  {
    autograd::RecordScope record;
    NDArray y = np::sum(exec.run({xr})[0]);
    EXPECT_GT(exec.last_plan().outputs_in_place + exec.last_plan().outputs_reused, 0);
    autograd::backward({y});
  }
  NDArray xi = x.copy();
  autograd::attach_grad(xi);
  {
    autograd::RecordScope record;
    NDArray y = np::sum(chain(xi));
    autograd::backward({y});
  }
  EXPECT_EQ(autograd::grad_of(xr).to_vector<double>(), autograd::grad_of(xi).to_vector<double>());
}

// The same chain fused: one kernel, bit-identical results; fusion off: one kernel per op.
TEST(Graph, ElementwiseChainsFuseIntoOneKernel) {
  NDArray x = NDArray::from_vector(test::values(1000, -1, 1, 9), {10, 100});
  Graph g;
  {
    TraceScope trace;
    g = traced_graph({chain(trace_input(x, "x"))});
  }
  Executor exec(g);
  const NDArray fused = exec.run({x})[0];
  const Executor::PlanStats s = exec.last_plan();
  EXPECT_EQ(s.kernels, 1);
  EXPECT_EQ(s.fused_nodes, 1);
  EXPECT_GT(s.fused_ops, 3);
  EXPECT_EQ(fused.to_vector<double>(), chain(x).to_vector<double>());  // bit for bit
  NoFusion no_fusion;
  const NDArray plain = exec.run({x})[0];
  EXPECT_EQ(exec.last_plan().kernels, s.fused_ops);
  EXPECT_EQ(plain.to_vector<double>(), fused.to_vector<double>());
  // A fused node's gradient (its ops expanded again) equals the unfused graph's.
  int nodes = 0, ops = 0;
  const Graph f = fuse_elementwise(g, &nodes, &ops);
  ASSERT_EQ(nodes, 1);
  const auto grad_graph = [](const Graph& of) {
    const NodePtr in = of.inputs().at(0);
    NodePtr head = make_variable("head");
    return Graph{
        autograd::gradient_entries(of.outputs, {NodeEntry{head, 0, 0}}, {NodeEntry{in, 0, 0}})};
  };
  const auto run_grad = [&](const Graph& of) {
    Executor e(grad_graph(of));
    std::vector<NDArray> args;
    for (const auto& name : e.input_names()) args.push_back(name == "head" ? np::ones_like(x) : x);
    return e.run(args)[0];
  };
  const NDArray g_fused = run_grad(f), g_plain = run_grad(g);
  EXPECT_EQ(g_fused.to_vector<double>(), g_plain.to_vector<double>());
}

// A million-node chain: recorded by autograd, differentiated, traced into a graph, run,
// written as JSON, read back and freed. Each of these used to recurse once per node and
// overflowed the stack near 90,000 nodes.
TEST(Graph, MillionNodeChainsDoNotRecurse) {
  constexpr int kNodes = 1000000;
  NDArray x = NDArray::scalar(0.5, DType::kFloat64);
  autograd::attach_grad(x);
  {
    NDArray y = x;
    {
      autograd::RecordScope record;
      for (int i = 0; i < kNodes; ++i) y = np::negative(y);  // (-1)^n x
    }
    EXPECT_EQ(y.to_vector<double>()[0], 0.5);  // an even count of negations
    autograd::backward({y});
    EXPECT_EQ(autograd::grad_of(x).to_vector<double>()[0], 1.0);
  }  // the tape of a million nodes is freed here
  Graph g;
  {
    TraceScope trace;
    NDArray y = trace_input(x, "x");
    for (int i = 0; i < kNodes; ++i) y = np::negative(y);
    g = traced_graph({y});
  }
  NDArray in = NDArray::scalar(2.0, DType::kFloat64);
  EXPECT_EQ(evaluate(g.outputs, {{g.inputs()[0].get(), in}})[0].to_vector<double>()[0], 2.0);
  EXPECT_EQ(Executor(g).run({in})[0].to_vector<double>()[0], 2.0);
  Graph back = graph_from_json(graph_to_json(g));
  g = Graph{};  // freed while `back` lives on
  EXPECT_EQ(Executor(back).run({in})[0].to_vector<double>()[0], 2.0);
}

// Automatic mixed precision: the policy casts at invoke, so the imperative call, the autograd
// tape and a traced graph all hold the cast; gradients come back in the input's dtype.
TEST(Amp, PolicyCastsAtInvokeAndIsRecorded) {
  auto policy = std::make_unique<amp::Policy>();
  policy->target = DType::kFloat16;
  policy->rules[Op::get("_npx_fully_connected")] = amp::OpRule{};
  amp::OpRule wide;
  wide.kind = amp::OpRule::kFloat32;
  policy->rules[Op::get("_np_exp")] = wide;
  amp::set_policy(std::move(policy));
  const NDArray x = np::ones({2, 3}), w = np::full({4, 3}, 0.5);
  auto fc = [&](const NDArray& a) {
    return invoke("_npx_fully_connected", {a, w}, {{"num_hidden", "4"}, {"no_bias", "True"}})[0];
  };
  NDArray y = fc(x);
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(y.astype(DType::kFloat32).to_vector<float>(), std::vector<float>(8, 1.5f));
  EXPECT_EQ(np::exp(np::ones({2}, DType::kFloat16)).dtype(), DType::kFloat32);
  const NDArray x64 = np::ones({2, 3}, DType::kFloat64),
                w64 = np::full({4, 3}, 0.5, DType::kFloat64);
  EXPECT_EQ(
      invoke("_npx_fully_connected", {x64, w64}, {{"num_hidden", "4"}, {"no_bias", "True"}})[0]
          .dtype(),
      DType::kFloat64);  // float64 asked for on purpose: left alone
  {
    amp::PauseScope pause;
    EXPECT_EQ(fc(x).dtype(), DType::kFloat32);
  }
  // the tape: d(sum(fc(x)))/dx in float32 through the cast's gradient
  NDArray xg = x.copy();
  autograd::attach_grad(xg);
  {
    autograd::RecordScope record;
    NDArray s = np::sum(invoke("_npi_astype", {fc(xg)}, {{"dtype", "float32"}})[0]);
    autograd::backward({s});
  }
  EXPECT_EQ(autograd::grad_of(xg).dtype(), DType::kFloat32);
  EXPECT_EQ(autograd::grad_of(xg).to_vector<float>(), std::vector<float>(6, 2.0f));
  Graph g;
  {
    TraceScope trace;
    g = traced_graph({fc(trace_input(x, "x"))});
  }
  EXPECT_NE(graph_to_json(g).find("_npi_amp_cast"), std::string::npos);
  amp::set_policy(nullptr);
  EXPECT_EQ(fc(x).dtype(), DType::kFloat32);
  EXPECT_EQ(Executor(g).run({x})[0].dtype(), DType::kFloat16);  // the graph keeps its casts
  expect_error(
      ErrorKind::kTypeError,
      [] {
        auto bad = std::make_unique<amp::Policy>();
        bad->target = DType::kInt8;
        amp::set_policy(std::move(bad));
      },
      "float16 or bfloat16");
}

}  // namespace
}  // namespace ndx
