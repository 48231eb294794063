// The device and host fit on phases made from known parameters: it recovers
// them, and names a bad sample.
#include "torchcost/device_host_fit.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace torchcost {
namespace {

constexpr int kMatmulAt = static_cast<int>(OpClass::kMatmul);
constexpr int kPointwiseAt = static_cast<int>(OpClass::kPointwise);
constexpr int kOptimizerAt = static_cast<int>(OpClass::kOptimizer);
// The device: matmul at 0.5 of peak, pointwise 0.25, optimizer 0.4, 2 us per
// kernel. The host: 50 us per forward kernel, 10 us per optimizer kernel and
// 30 us per optimizer tensor.
constexpr double kEffMm = 0.5, kEffPw = 0.25, kEffOpt = 0.4, kDevice = 2e-6;
constexpr double kHostFwd = 50e-6, kHostOptK = 10e-6, kHostOptT = 30e-6;

// A phase with roofline seconds (mm, pw) over kernels (n_mm, n_pw): its
// device seconds per class r / e + n o, its wall `wall` (0: the device's).
DeviceTimingSample Pass(const std::string& name, StepPhase phase, double r_mm,
                        double r_pw, double n_mm, double n_pw,
                        double wall = 0) {
  DeviceTimingSample d;
  d.timing.name = name;
  d.phase = phase;
  d.timing.roofline_seconds[kMatmulAt] = r_mm;
  d.timing.roofline_seconds[kPointwiseAt] = r_pw;
  d.class_kernels[kMatmulAt] = n_mm;
  d.class_kernels[kPointwiseAt] = n_pw;
  d.timing.kernels = n_mm + n_pw;
  d.device_class_seconds[kMatmulAt] = r_mm / kEffMm + n_mm * kDevice;
  d.device_class_seconds[kPointwiseAt] = r_pw / kEffPw + n_pw * kDevice;
  d.device_seconds =
      d.device_class_seconds[kMatmulAt] + d.device_class_seconds[kPointwiseAt];
  d.timing.measured_seconds = wall > 0 ? wall : d.device_seconds;
  return d;
}

// An optimizer step of `kernels` launches over `tensors` tensors, host-bound.
DeviceTimingSample Step(const std::string& name, double r, double kernels,
                        double tensors) {
  DeviceTimingSample d;
  d.timing.name = name;
  d.phase = StepPhase::kOptimizer;
  d.timing.roofline_seconds[kOptimizerAt] = r;
  d.class_kernels[kOptimizerAt] = kernels;
  d.timing.kernels = kernels;
  d.tensors = tensors;
  d.device_class_seconds[kOptimizerAt] = r / kEffOpt + kernels * kDevice;
  d.device_seconds = d.device_class_seconds[kOptimizerAt];
  d.timing.measured_seconds = kernels * kHostOptK + tensors * kHostOptT;
  return d;
}

std::vector<DeviceTimingSample> Samples() {
  return {
      // Device-bound: GEMM-heavy and pointwise-heavy passes.
      Pass("big forward", StepPhase::kForward, 0.05, 0.01, 100, 200),
      Pass("big backward", StepPhase::kBackward, 0.1, 0.01, 200, 300),
      Pass("mixed forward", StepPhase::kForward, 0.01, 0.03, 50, 400),
      // Host-bound: 20 and 40 kernels at 50 us on a device busy for less.
      Pass("small forward", StepPhase::kForward, 1e-5, 1e-5, 10, 10,
           20 * kHostFwd),
      Pass("small forward 2", StepPhase::kForward, 2e-5, 1e-5, 20, 20,
           40 * kHostFwd),
      // Single-tensor (7 launches per tensor) and foreach steps.
      Step("single optimizer", 1e-4, 700, 100),
      Step("foreach optimizer", 1e-4, 21, 100),
  };
}

TEST(DeviceHostFitTest, RecoversTheDeviceAndTheHost) {
  const std::vector<DeviceTimingSample> samples = Samples();
  auto fit = FitDeviceAndHost(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->efficiency[kMatmulAt], kEffMm, 1e-9);
  EXPECT_NEAR(fit->efficiency[kPointwiseAt], kEffPw, 1e-9);
  EXPECT_NEAR(fit->efficiency[kOptimizerAt], kEffOpt, 1e-9);
  EXPECT_TRUE(fit->fitted[kMatmulAt] && fit->fitted[kPointwiseAt] &&
              fit->fitted[kOptimizerAt]);
  EXPECT_FALSE(fit->fitted[static_cast<int>(OpClass::kReduction)]);
  EXPECT_NEAR(fit->kernel_overhead, kDevice, 1e-15);
  EXPECT_NEAR(fit->host.forward_kernel, kHostFwd, 1e-15);
  EXPECT_NEAR(fit->host.optimizer_kernel, kHostOptK, 1e-15);
  EXPECT_NEAR(fit->host.optimizer_tensor, kHostOptT, 1e-15);
  // No backward phase is host-bound: no cost for it.
  EXPECT_EQ(fit->host.backward_kernel, 0);
  const std::vector<char> bound = {0, 0, 0, 1, 1, 1, 1};
  EXPECT_EQ(fit->host_bound, bound);
  // Every phase predicted as measured: max(device, host).
  ASSERT_EQ(fit->predicted_seconds.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_NEAR(fit->predicted_seconds[i], samples[i].timing.measured_seconds,
                1e-12)
        << samples[i].timing.name;
  }
  EXPECT_NEAR(fit->rms_relative_error, 0, 1e-9);
}

TEST(DeviceHostFitTest, OptimizerCostBelowZeroIsDropped) {
  // Steps whose walls follow the tensors alone, with kernels that would take
  // a cost below 0 in the pair: the tensors' cost fitted alone.
  std::vector<DeviceTimingSample> samples = {Step("a", 1e-4, 700, 100),
                                             Step("b", 1e-4, 21, 100)};
  samples[0].timing.measured_seconds = 100 * kHostOptT * 0.9;
  samples[1].timing.measured_seconds = 100 * kHostOptT * 1.1;
  auto fit = FitDeviceAndHost(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->host.optimizer_kernel, 0);
  // Least squares of (100 h / W - 1)^2 over W = 0.9 and 1.1 x 3 ms: h = 30 us
  // x (1/0.9 + 1/1.1) / (1/0.81 + 1/1.21).
  const double want = kHostOptT * (1 / 0.9 + 1 / 1.1) / (1 / 0.81 + 1 / 1.21);
  EXPECT_NEAR(fit->host.optimizer_tensor, want, 1e-15);
}

TEST(DeviceHostFitTest, ErrorsNameTheSample) {
  EXPECT_EQ(FitDeviceAndHost({}).status().message(),
            "device and host fit: no timing samples");
  std::vector<DeviceTimingSample> samples = Samples();
  samples[2].device_seconds = 0;
  EXPECT_EQ(FitDeviceAndHost(samples).status().message(),
            "device and host fit: sample 'mixed forward' has a device time "
            "not positive");
  samples = Samples();
  samples[0].device_class_seconds[kPointwiseAt] = -1;
  EXPECT_EQ(FitDeviceAndHost(samples).status().message(),
            "device and host fit: sample 'big forward' has a roofline time, "
            "device time or kernel count of pointwise negative or not "
            "finite");
  samples = Samples();
  samples[6].tensors = std::numeric_limits<double>::infinity();
  EXPECT_EQ(FitDeviceAndHost(samples).status().message(),
            "device and host fit: sample 'foreach optimizer' has a kernel or "
            "tensor count negative or not finite");
}

}  // namespace
}  // namespace torchcost
