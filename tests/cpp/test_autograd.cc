// Autograd against hand-derived gradients: chains, broadcasting, reuse of a value, grad_req
// write/add/null, retain_graph, second order through create_graph, scalars and zero-size
// arrays, per-thread recording, and the errors misuse raises.
#include <thread>

#include "ndx/autograd.h"
#include "test_util.h"

namespace ndx {
namespace {
using test::expect_close;
using test::expect_error;
namespace ag = autograd;

NDArray vec(std::vector<double> v) {
  return NDArray::from_vector(v, Shape{static_cast<int64_t>(v.size())});
}

TEST(Autograd, ChainRuleAndReuse) {
  NDArray x = vec({0.5, -1.0, 2.0});
  ag::attach_grad(x);
  NDArray y;
  {
    ag::RecordScope record;
    y = np::sum(x * x + np::sin(x) * x);  // x used three times
  }
  ag::backward({y});
  std::vector<double> want;
  for (double v : {0.5, -1.0, 2.0}) want.push_back(2 * v + std::cos(v) * v + std::sin(v));
  expect_close(ag::grad_of(x).to_vector<double>(), want, 1e-12, 1e-12);
}

TEST(Autograd, BroadcastingReducesToInputShapes) {
  NDArray a = NDArray::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray b = vec({10, 20, 30});
  ag::attach_grad(a);
  ag::attach_grad(b);
  NDArray y;
  {
    ag::RecordScope record;
    y = np::mean(a * b, Shape{0});  // shape (3,)
  }
  ag::backward({y}, {vec({1, 2, 3})});
  // d/da[i,j] = g[j] * b[j] / 2 ; d/db[j] = g[j] * (a[0,j] + a[1,j]) / 2
  expect_close(ag::grad_of(a).to_vector<double>(), {5, 20, 45, 5, 20, 45});
  expect_close(ag::grad_of(b).to_vector<double>(), {2.5, 7, 13.5});
}

TEST(Autograd, GradReqAddNullAndRetainGraph) {
  NDArray x = vec({1, 2});
  NDArray z = vec({3, 4});
  ag::attach_grad(x, kAddTo);
  ag::attach_grad(z, kNullOp);
  NDArray y;
  {
    ag::RecordScope record;
    y = np::sum(x * z);
  }
  ag::backward({y}, {}, /*retain_graph=*/true);
  ag::backward({y});
  expect_close(ag::grad_of(x).to_vector<double>(), {6, 8});  // accumulated twice
  expect_close(ag::grad_of(z).to_vector<double>(), {0, 0});  // 'null' is never written
  expect_error(
      ErrorKind::kValueError, [&] { ag::backward({y}); }, "retain_graph");
}

TEST(Autograd, SecondOrderThroughCreateGraph) {
  NDArray x = vec({0.5, 2.0});
  ag::attach_grad(x);
  NDArray y;
  {
    ag::RecordScope record;
    y = x * x * x + np::exp(x);
  }
  NDArray dydx;
  {
    ag::RecordScope record;
    dydx = ag::grad({y}, {x}, {}, /*create_graph=*/true)[0];  // 3x^2 + e^x
  }
  expect_close(dydx.to_vector<double>(), {0.75 + std::exp(0.5), 12 + std::exp(2.0)}, 1e-12, 1e-12);
  ag::backward({dydx});  // d2y/dx2 = 6x + e^x
  expect_close(ag::grad_of(x).to_vector<double>(), {3 + std::exp(0.5), 12 + std::exp(2.0)}, 1e-12,
               1e-12);
}

TEST(Autograd, ScalarsZeroSizeAndDetach) {
  NDArray s = NDArray::scalar(3.0, DType::kFloat64);
  ag::attach_grad(s);
  NDArray e = np::zeros({0, 3}, DType::kFloat64);
  ag::attach_grad(e);
  NDArray y;
  {
    ag::RecordScope record;
    y = s * s + np::sum(e);
  }
  ag::backward({y});
  EXPECT_EQ(ag::grad_of(s).item<double>(), 6.0);
  EXPECT_EQ(ag::grad_of(e).shape(), (Shape{0, 3}));
  NDArray x = vec({1, 2});
  ag::attach_grad(x);
  {
    ag::RecordScope record;
    y = np::sum(x * ag::detach(x));  // the detached factor is a constant
  }
  ag::backward({y});
  expect_close(ag::grad_of(x).to_vector<double>(), {1, 2});
}

TEST(Autograd, RecordingIsPerThreadAndMisuseRaises) {
  ag::RecordScope record;
  EXPECT_TRUE(ag::is_recording());
  bool other = true;
  std::thread t([&] { other = ag::is_recording(); });
  t.join();
  EXPECT_FALSE(other);
  NDArray x = vec({1});
  ag::attach_grad(x);
  NDArray y = x * 2.0;
  expect_error(
      ErrorKind::kNotImplementedError, [&] { y += x; }, "autograd");
  ag::RecordScope pause(false, false);
  NDArray plain = vec({1});
  expect_error(
      ErrorKind::kValueError, [&] { ag::backward({plain}); }, "not part of a recorded computation");
  expect_error(
      ErrorKind::kValueError, [&] { ag::grad({y}, {plain}); }, "attach_grad");
  expect_error(
      ErrorKind::kValueError,
      [&] {
        ag::backward({y}, {vec({1, 2})});
      },
      "shape");
}

}  // namespace
}  // namespace ndx
