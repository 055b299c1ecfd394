// The C++ API in a few lines: creation, arithmetic with broadcasting, reductions, views,
// matmul, element access, NumPy-style printing and typed errors.
#include <iostream>

#include "ndx/c_api.h"
#include "ndx/np.h"
#include "ndx/version.h"

int main() {
  // The headers this program compiled against and the library it loaded are the same release.
  std::cout << "ndx " << NDX_VERSION_STRING << "\n";
  if (NDXGetVersion() != NDX_VERSION) {
    std::cerr << "ndx headers " << NDX_VERSION << " but library " << NDXGetVersion() << "\n";
    return 2;
  }
  namespace np = ndx::np;
  ndx::NDArray a = np::ones({2, 3});
  ndx::NDArray b = np::arange(6).reshape({2, 3});  // int64, a view of arange's result
  ndx::NDArray c = a + b * 2.0;                    // float32 + int64 -> float64, as NumPy
  std::cout << "c =\n" << c << "\n";
  std::cout << "sum(c, axis=1) = " << np::sum(c, 1) << "\n";
  std::cout << "mean(c) = " << np::mean(c).item<double>() << "\n";
  std::cout << "c.T @ c =\n" << np::matmul(np::transpose(c), c) << "\n";
  std::cout << "c[1] = " << c[1] << ", c[1, 2] = " << c.at<double>({1, 2}) << "\n";
  std::cout << "repr: " << np::linspace(0, 1, 5).repr() << "\n";
  try {
    np::add(np::ones({2, 3}), np::ones({4}));
  } catch (const ndx::Error& e) {
    std::cout << ndx::error_kind_name(e.kind()) << ": " << e.what() << "\n";
  }
  return c.at<double>({1, 2}) == 11.0 ? 0 : 1;
}
