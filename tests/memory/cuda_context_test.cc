// The CUDA context's assumed default (src/memory/cuda_context.cc).
#include <gtest/gtest.h>

#include "torchcost/cuda_allocator.h"

namespace torchcost {
namespace {

// docs/allocator.md: 300 to 500 MiB is the commonly reported range; the default
// is its middle.
TEST(CudaContextTest, DefaultIsTheMiddleOfTheReportedRange) {
  EXPECT_EQ(DefaultCudaContextBytes(), (300 + 500) / 2 * (int64_t{1} << 20));
}

}  // namespace
}  // namespace torchcost
