// The CUDA context's default (src/memory/cuda_context.cc).
#include <gtest/gtest.h>

#include "torchcost/cuda_allocator.h"

namespace torchcost {
namespace {

// docs/measurements/h200/cuda-default.json, run gpt2-single: the device memory
// outside the allocator after the step, plus the segments of the libraries'
// workspaces the run primed (context.primed_blocks: two of 32 MiB, one of
// 2 MiB).
TEST(CudaContextTest, DefaultIsTheH200Measurement) {
  const int64_t outside_allocator = 787283968;
  const int64_t workspaces = 2 * (int64_t{32} << 20) + (int64_t{2} << 20);
  EXPECT_EQ(DefaultCudaContextBytes(), outside_allocator + workspaces);
}

}  // namespace
}  // namespace torchcost
