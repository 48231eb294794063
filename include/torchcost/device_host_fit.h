// Fitting a GPU's time model from phases whose device time was measured apart
// from their wall time (the profiler's kernels): the efficiencies and the
// device's seconds per kernel from the device's seconds per op class, and the
// host's launch costs from the phases the host bounds (docs/calibration.md,
// "Device and host").
#ifndef TORCHCOST_DEVICE_HOST_FIT_H_
#define TORCHCOST_DEVICE_HOST_FIT_H_

#include <array>
#include <vector>

#include "torchcost/efficiency_fit.h"
#include "torchcost/gpu.h"
#include "torchcost/op_class.h"
#include "torchcost/status.h"
#include "torchcost/training.h"

namespace torchcost {

// A phase is host-bound when its wall seconds exceed its device seconds by
// more than this factor (below it, the device's gaps between kernels).
inline constexpr double kHostBoundRatio = 1.1;

// One measured phase: its wall seconds and predicted roofline and kernels
// (`timing`), beside the device's own seconds.
struct DeviceTimingSample {
  TimingSample timing;  // measured_seconds: the wall's; kernels: predicted.
  // Predicted kernels per OpClass (their sum is timing.kernels).
  std::array<double, kNumOpClasses> class_kernels{};
  // The device's seconds per OpClass (the profiler's kernels grouped by the
  // analysis's classes) and in all.
  std::array<double, kNumOpClasses> device_class_seconds{};
  double device_seconds = 0;
  StepPhase phase = StepPhase::kForward;  // Forward, backward or optimizer.
  double tensors = 0;  // Parameter tensors the optimizer updates.
};

// The fitted device and host, and how well they explain the walls.
struct DeviceHostFit {
  // Achieved fraction of peak per OpClass; 1 where no sample has device time.
  std::array<double, kNumOpClasses> efficiency = kPureRoofline;
  std::array<bool, kNumOpClasses> fitted{};
  double kernel_overhead = 0;    // Device seconds per kernel (GpuSpec's).
  HostCost host;                 // 0 for a cost no host-bound phase fits.
  std::vector<char> host_bound;  // Per sample (kHostBoundRatio).
  std::vector<double> predicted_seconds;  // Per sample: max(device, host).
  // Root mean square and largest |predicted / wall - 1| over the samples.
  double rms_relative_error = 0, max_relative_error = 0;
};

// Returns the fit, in two least-squares steps: (1) the 1/e_c and the
// device's seconds per kernel o minimising sum over phases i and classes c of
// ((r_ic / e_c + n_ic o - d_ic) / D_i)^2 (d_ic the device's seconds of class
// c in phase i, n_ic its kernels, D_i the phase's device seconds; an o below
// 0 is dropped); (2) over the host-bound phases of each kind, h minimising
// sum ((n_i h - W_i) / W_i)^2 for forward and for backward kernels, and
// (h_k, h_t) for the optimizer's n_i h_k + T_i h_t (NB: a cost fitted below 0
// is dropped and the other refitted alone; none where no phase of its kind
// is host-bound). Each phase is then predicted as max(device, host). Errors:
// no sample, a wall or device time not positive, a count, roofline or device
// time negative or not finite (the sample named), a class fitted to a time
// not positive.
Result<DeviceHostFit> FitDeviceAndHost(
    const std::vector<DeviceTimingSample>& samples);

}  // namespace torchcost

#endif  // TORCHCOST_DEVICE_HOST_FIT_H_
