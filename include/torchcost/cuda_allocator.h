// The settings of the CUDA caching allocator model (`--allocator cuda`): the
// step's allocations replayed through PyTorch's CUDACachingAllocator as its
// source defines it (docs/allocator.md), plus the CUDA context.
#ifndef TORCHCOST_CUDA_ALLOCATOR_H_
#define TORCHCOST_CUDA_ALLOCATOR_H_

#include <cstdint>
#include <limits>
#include <string>

namespace torchcost {

// PYTORCH_CUDA_ALLOC_CONF's settings that the model follows, and the context.
struct CudaAllocatorOptions {
  // max_split_size_mb in bytes: blocks this large are never split (oversize);
  // the default, no limit, is the allocator's.
  int64_t max_split_size = std::numeric_limits<int64_t>::max();
  // expandable_segments:True: one segment per pool that grows in pages of
  // 2 MiB (small pool) or 20 MiB (large pool).
  bool expandable_segments = false;
  // Device memory outside the allocator: the CUDA context and the libraries'
  // workspaces (cuBLAS, cuDNN), added to the reserved peak where a budget is
  // compared. NB: a documented default (DefaultCudaContextBytes), to be
  // replaced by a calibration file's measured value.
  int64_t context_bytes = 0;
  // Where context_bytes comes from, as the reports name it: "given", "an
  // H200's" (the default, DefaultCudaContextSource) or "measured: FILE" (a
  // calibration file's).
  std::string context_source = "given";
};

// Returns the bytes of the CUDA context and library workspaces when no
// measurement is given: one device's measurement (docs/allocator.md).
int64_t DefaultCudaContextBytes();

// Returns the device DefaultCudaContextBytes was measured on, as the reports
// name it ("an H200's").
std::string DefaultCudaContextSource();

}  // namespace torchcost

#endif  // TORCHCOST_CUDA_ALLOCATOR_H_
