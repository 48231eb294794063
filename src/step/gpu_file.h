// A calibration file's device (a built-in GPU's figures or its own measured
// peaks) with its fitted efficiencies, as StepConfig::gpu_file reads it
// (docs/calibration.md, "FILE.json").
#ifndef TORCHCOST_SRC_STEP_GPU_FILE_H_
#define TORCHCOST_SRC_STEP_GPU_FILE_H_

#include <string>
#include <string_view>

#include "torchcost/gpu.h"
#include "torchcost/status.h"

namespace torchcost::step {

// The GPU a calibration file describes, and the device its times were
// measured on.
struct CalibratedGpu {
  GpuSpec gpu;         // Peaks, bandwidth, and fit.efficiency per op class.
  std::string device;  // roofline.device: "cuda" or "cpu".
  // The device memory the file measured outside the step's allocations (the
  // CUDA context and the libraries' workspaces); -1 if it has none.
  int64_t cuda_context_bytes = -1;
};

// Parses a calibration file's text: `roofline` ({"device", "gpu": a built-in
// name} or {"device", "name", "bandwidth_gbs", "tflops": {"fp32", ...}}),
// `fit.efficiency` ({"matmul": 0.6, ...}; classes left out stay 1) and, if
// present, `cuda_context_bytes` (an integer >= 0). Errors name `file` and the
// key: "cal.json: key fit.efficiency.matmul: ...".
Result<CalibratedGpu> ParseGpuFile(std::string_view text,
                                   const std::string& file);

// Reads and parses the file at `path` (ParseGpuFile).
Result<CalibratedGpu> ReadGpuFile(const std::string& path);

}  // namespace torchcost::step

#endif  // TORCHCOST_SRC_STEP_GPU_FILE_H_
