// The CUDA context's default bytes (torchcost/cuda_allocator.h).
#include "torchcost/cuda_allocator.h"

namespace torchcost {

int64_t DefaultCudaContextBytes() {
  // NB: an assumption, not a measurement: the device memory a process holds
  // outside PyTorch's allocator once its first kernels ran (the CUDA context
  // with PyTorch's and its libraries' kernel images loaded, cuBLAS and cuDNN
  // handles) is commonly 300 to 500 MiB, depending on the GPU, the driver and
  // CUDA's lazy loading; 400 MiB is the middle. docs/allocator.md.
  return int64_t{400} << 20;
}

}  // namespace torchcost
