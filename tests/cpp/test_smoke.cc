#include <gtest/gtest.h>
#include "ndx/ndarray.h"
TEST(Smoke, Builds) { ndx::NDArray a({2, 3}); EXPECT_EQ(a.size(), 6); }
