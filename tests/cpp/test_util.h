// Helpers shared by the C++ tests: building arrays, invoking ops by name, checking errors.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndx/autograd.h"
#include "ndx/graph.h"
#include "ndx/imperative.h"
#include "ndx/ndarray.h"
#include "ndx/np.h"

namespace ndx::test {

inline NDArray run(const std::string& op, const std::vector<NDArray>& in,
                   std::map<std::string, std::string> dict = {}) {
  return invoke(op, in, std::move(dict))[0];
}

// Expects `fn` to throw ndx::Error of `kind` whose message contains `needle`.
inline void expect_error(ErrorKind kind, const std::function<void()>& fn,
                         const std::string& needle = "") {
  try {
    fn();
    ADD_FAILURE() << "expected " << error_kind_name(kind) << ", nothing was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << "message: " << e.what();
    if (!needle.empty())
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

inline void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                         double rtol = 1e-6, double atol = 1e-9) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
      continue;
    }
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << "at " << i;
  }
}

// Deterministic pseudo-random doubles in [lo, hi).
inline std::vector<double> values(size_t n, double lo = -2, double hi = 2, uint64_t seed = 1) {
  std::vector<double> out(n);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (auto& v : out) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    v = lo + (hi - lo) * static_cast<double>(s >> 11) / static_cast<double>(1ULL << 53);
  }
  return out;
}

// Central-difference gradient of sum(f(x) * w) with respect to x (float64).
inline std::vector<double> numeric_grad(const std::function<NDArray(const NDArray&)>& f,
                                        const NDArray& x, const NDArray& w, double eps = 1e-6) {
  std::vector<double> xv = x.to_vector<double>(), grad(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    auto eval = [&](double delta) {
      std::vector<double> xp = xv;
      xp[i] += delta;
      NDArray y = f(NDArray::from_vector(xp, x.shape()));
      auto yv = y.to_vector<double>(), wv = w.to_vector<double>();
      double s = 0;
      for (size_t k = 0; k < yv.size(); ++k) s += yv[k] * wv[k];
      return s;
    };
    grad[i] = (eval(eps) - eval(-eps)) / (2 * eps);
  }
  return grad;
}

// The gradients FGradient builds for `op` applied to `inputs`, given head gradient `ograd`.
inline std::vector<NDArray> symbolic_grads(const std::string& op,
                                           const std::vector<NDArray>& inputs, const NDArray& ograd,
                                           std::map<std::string, std::string> dict = {}) {
  std::unordered_map<const Node*, NDArray> values;
  std::vector<NodeEntry> in_entries;
  for (size_t i = 0; i < inputs.size(); ++i) {
    NodePtr v = make_variable("x" + std::to_string(i));
    values[v.get()] = inputs[i];
    in_entries.push_back(NodeEntry{v, 0, 0});
  }
  NodeEntry y = make_node(op, in_entries, std::move(dict));
  NodePtr og = make_variable("ograd");
  values[og.get()] = ograd;
  const auto& fgrad = Op::attr<FGradient>("FGradient");
  auto grads = fgrad[y.node->op()](y.node, {NodeEntry{og, 0, 0}});
  return evaluate(grads, values);
}

// The gradients of sum(op(inputs) * w) through autograd, recorded in predict mode.
inline std::vector<NDArray> autograd_grads(const std::string& op, const std::vector<NDArray>& in,
                                           const NDArray& w,
                                           std::map<std::string, std::string> dict = {}) {
  std::vector<NDArray> xs;
  for (const auto& a : in) {
    xs.push_back(a.copy());
    autograd::attach_grad(xs.back());
  }
  NDArray y;
  {
    autograd::RecordScope record(true, /*train=*/false);
    y = run(op, xs, std::move(dict));
  }
  {
    autograd::RecordScope mode(false, false);
    autograd::backward({y}, {w});
  }
  std::vector<NDArray> out;
  for (const auto& x : xs) out.push_back(autograd::grad_of(x));
  return out;
}

// Numeric gradient check (float64 inputs, central differences).
// f(inputs) = sum_j sum(w_j * op(inputs)_j) for fixed random w_j; its gradient is what the op's
// FGradient graph gives for ograds w_j.
inline void check_numeric_gradient(const std::string& op,
                                   const std::map<std::string, std::string>& dict,
                                   const std::vector<NDArray>& inputs, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<NodePtr> vars;
  std::vector<NodeEntry> entries;
  for (size_t i = 0; i < inputs.size(); ++i) {
    vars.push_back(make_variable("x" + std::to_string(i)));
    entries.push_back(NodeEntry{vars.back(), 0, 0});
  }
  NodeEntry fwd = make_node(op, entries, dict);
  const uint32_t nout = fwd.node->num_outputs();
  std::unordered_map<const Node*, NDArray> feed;
  for (size_t i = 0; i < inputs.size(); ++i) feed[vars[i].get()] = inputs[i];
  std::vector<NodeEntry> fwd_outs;
  for (uint32_t j = 0; j < nout; ++j) fwd_outs.push_back(NodeEntry{fwd.node, j, 0});
  std::vector<NDArray> outs = evaluate(fwd_outs, feed);

  std::vector<NodeEntry> ograds;
  std::vector<std::vector<double>> w(nout);
  for (uint32_t j = 0; j < nout; ++j) {
    auto v = make_variable("og" + std::to_string(j));
    ograds.push_back(NodeEntry{v, 0, 0});
    for (int64_t k = 0; k < outs[j].size(); ++k) w[j].push_back(dist(rng));
    feed[v.get()] = NDArray::from_vector<double>(w[j], outs[j].shape());
  }
  const auto& fgrad = Op::attr<FGradient>("FGradient");
  std::vector<NodeEntry> grads = fgrad[Op::get(op)](fwd.node, ograds);
  ASSERT_EQ(grads.size(), inputs.size());
  std::vector<NDArray> analytic = evaluate(grads, feed);

  auto objective = [&](const std::vector<NDArray>& xs) {
    auto o = invoke(Op::get(op)->make_attrs(dict), xs);
    double s = 0;
    for (uint32_t j = 0; j < nout; ++j) {
      auto v = o[j].to_vector<double>();
      for (size_t k = 0; k < v.size(); ++k) s += w[j][k] * v[k];
    }
    return s;
  };
  const double eps = 1e-6;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(analytic[i].shape(), inputs[i].shape()) << op << " grad " << i;
    ASSERT_EQ(analytic[i].dtype(), DType::kFloat64);
    auto base = inputs[i].to_vector<double>();
    auto got = analytic[i].to_vector<double>();
    for (size_t k = 0; k < base.size(); ++k) {
      std::vector<NDArray> xp = inputs, xm = inputs;
      auto vp = base, vm = base;
      vp[k] += eps;
      vm[k] -= eps;
      xp[i] = NDArray::from_vector<double>(vp, inputs[i].shape());
      xm[i] = NDArray::from_vector<double>(vm, inputs[i].shape());
      double numeric = (objective(xp) - objective(xm)) / (2 * eps);
      EXPECT_NEAR(got[k], numeric, 1e-6) << op << " input " << i << " element " << k;
    }
  }
}

}  // namespace ndx::test
