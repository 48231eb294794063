// The CUDA context's default bytes (torchcost/cuda_allocator.h).
#include "torchcost/cuda_allocator.h"

namespace torchcost {

int64_t DefaultCudaContextBytes() {
  // NB: measured, on one device: an NVIDIA H200 with driver 580.159.04, CUDA
  // 13.0 and torch 2.11.0 (docs/measurements/h200/cuda-default.json), after a
  // training step of GPT-2 124M (no convolution: cuDNN's kernels not loaded).
  // The device memory used outside the caching allocator (mem_get_info's used
  // bytes less memory_reserved(): the context, the kernel images loaded
  // lazily, the libraries' handles) is 787,283,968 bytes; cuBLAS's two 32 MiB
  // workspaces (one per handle and stream: the forward's thread and autograd's)
  // and the 1 MiB block beside them take 69,206,016 bytes of segments, which
  // the step's modelled allocations do not include. 787,283,968 + 69,206,016 =
  // 856,489,984 (816.8 MiB). Other GPUs, drivers and versions differ: give a
  // measured value with --cuda-context. docs/allocator.md.
  return int64_t{787283968} + int64_t{69206016};
}

std::string DefaultCudaContextSource() { return "an H200's"; }

}  // namespace torchcost
