// Helpers shared by the C++ tests: building arrays, invoking ops by name, checking errors.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
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

}  // namespace ndx::test
