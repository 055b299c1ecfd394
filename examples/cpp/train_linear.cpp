// Trains a linear regression model y = X w + b with full-batch gradient descent, using only
// ndx ops (matmul, transpose, broadcasting arithmetic, reductions). Prints the loss as it
// falls and the learned parameters against the true ones.
#include <cmath>
#include <cstdio>
#include <vector>

#include "ndx/np.h"

int main() {
  namespace np = ndx::np;
  const int64_t n = 256, d = 4;
  // Deterministic features in [-1, 1) and a known model plus a little noise.
  std::vector<float> xs(n * d), noise(n);
  uint64_t s = 42;
  auto next = [&s] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>((s >> 40) / double(1 << 24)) * 2.0f - 1.0f;
  };
  for (auto& v : xs) v = next();
  for (auto& v : noise) v = 0.01f * next();
  ndx::NDArray X = np::array(xs, ndx::Shape{n, d});
  ndx::NDArray true_w = np::array<float>({2.0f, -3.0f, 0.5f, 1.0f}).reshape({d, 1});
  float true_b = 0.7f;
  ndx::NDArray y = np::matmul(X, true_w) + true_b + np::array(noise, ndx::Shape{n, 1});

  ndx::NDArray w = np::zeros({d, 1});
  ndx::NDArray b = np::zeros({1});
  const float lr = 0.1f;
  float loss = 0;
  for (int step = 0; step <= 200; ++step) {
    ndx::NDArray err = np::matmul(X, w) + b - y;  // (n, 1)
    loss = np::mean(np::square(err)).item<float>();
    if (step % 25 == 0) std::printf("step %3d  loss %.6f\n", step, loss);
    ndx::NDArray grad_w = np::matmul(np::transpose(X), err) * (2.0f / n);
    ndx::NDArray grad_b = np::sum(err, ndx::Shape{0}) * (2.0f / n);
    w -= grad_w * lr;
    b -= grad_b * lr;
  }
  std::printf("learned w = %s (true [2, -3, 0.5, 1]), b = %.4f (true 0.7)\n",
              np::reshape(w, {d}).str().c_str(), b.item<float>());
  bool ok = loss < 1e-3f && std::fabs(b.item<float>() - true_b) < 0.05f;
  std::printf("%s\n", ok ? "training converged" : "training did NOT converge");
  return ok ? 0 : 1;
}
