// Calibration files as StepConfig::gpu_file reads them: a built-in GPU with
// fitted efficiencies, a CPU's own measured peaks, and errors that name the
// file and the key.
#include "step/gpu_file.h"

#include <gtest/gtest.h>

#include <string>

namespace torchcost::step {
namespace {

constexpr int kMatmul = static_cast<int>(OpClass::kMatmul);
constexpr int kPointwise = static_cast<int>(OpClass::kPointwise);

TEST(GpuFileTest, BuiltinGpuWithFittedEfficiencies) {
  auto g = ParseGpuFile(R"({"roofline": {"device": "cuda", "gpu": "a100-80gb"},
      "fit": {"efficiency": {"matmul": 0.6, "pointwise": 0.8}}})",
                        "a100.json");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->device, "cuda");
  EXPECT_EQ(g->gpu.name, "A100-80GB-SXM");
  // gpus/gpus.yaml: 2039 GB/s, 19.5 TFLOP/s fp32.
  EXPECT_DOUBLE_EQ(g->gpu.bandwidth, 2039e9);
  EXPECT_DOUBLE_EQ(g->gpu.fp32, 19.5e12);
  EXPECT_DOUBLE_EQ(g->gpu.efficiency[kMatmul], 0.6);
  EXPECT_DOUBLE_EQ(g->gpu.efficiency[kPointwise], 0.8);
  // Classes the file leaves out stay at the pure roofline.
  EXPECT_DOUBLE_EQ(g->gpu.efficiency[static_cast<int>(OpClass::kReduction)], 1);
}

TEST(GpuFileTest, ConvolutionsTakeMatmulsEfficiencyInOlderFiles) {
  constexpr int kConv = static_cast<int>(OpClass::kConvolution);
  // Fitted before convolutions had a class: they were matmul's.
  auto older = ParseGpuFile(R"({"roofline": {"gpu": "h200"},
      "fit": {"efficiency": {"matmul": 0.7, "pointwise": 0.6}}})",
                            "old.json");
  ASSERT_TRUE(older.ok()) << older.status().message();
  EXPECT_DOUBLE_EQ(older->gpu.efficiency[kConv], 0.7);
  auto own = ParseGpuFile(R"({"roofline": {"gpu": "h200"},
      "fit": {"efficiency": {"matmul": 0.7, "convolution": 0.25}}})",
                          "new.json");
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_DOUBLE_EQ(own->gpu.efficiency[kConv], 0.25);
  EXPECT_DOUBLE_EQ(own->gpu.efficiency[kMatmul], 0.7);
}

TEST(GpuFileTest, FittedHostCosts) {
  auto g = ParseGpuFile(R"({"roofline": {"gpu": "h200"},
      "fit": {"efficiency": {"matmul": 0.7}, "host": {
      "forward_kernel_seconds": 2e-5, "backward_kernel_seconds": 4e-5,
      "optimizer_kernel_seconds": 1e-5, "optimizer_tensor_seconds": 3e-5}}})",
                        "h200.json");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_DOUBLE_EQ(g->gpu.host.forward_kernel, 2e-5);
  EXPECT_DOUBLE_EQ(g->gpu.host.backward_kernel, 4e-5);
  EXPECT_DOUBLE_EQ(g->gpu.host.optimizer_kernel, 1e-5);
  EXPECT_DOUBLE_EQ(g->gpu.host.optimizer_tensor, 3e-5);
  auto none = ParseGpuFile(R"({"roofline": {"gpu": "h200"},
      "fit": {"efficiency": {"matmul": 0.7}}})",
                           "h200.json");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->gpu.host.modelled());
  auto bad = ParseGpuFile(R"({"roofline": {"gpu": "h200"},
      "fit": {"efficiency": {}, "host": {"forward_kernel_seconds": "fast"}}})",
                          "h200.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "h200.json: key fit.host.forward_kernel_seconds: expected a number "
            ">= 0");
}

TEST(GpuFileTest, OwnPeaksInTheTablesUnits) {
  auto g = ParseGpuFile(R"({"roofline": {"device": "cpu", "name": "cpu x86_64",
      "bandwidth_gbs": 12.5, "tflops": {"fp32": 0.05}},
      "fit": {"efficiency": {"matmul": 1.2}}})",
                        "cpu.json");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->device, "cpu");
  EXPECT_EQ(g->gpu.name, "cpu x86_64");
  EXPECT_DOUBLE_EQ(g->gpu.bandwidth, 12.5e9);  // GB/s.
  EXPECT_DOUBLE_EQ(g->gpu.fp32, 0.05e12);      // TFLOP/s.
  EXPECT_DOUBLE_EQ(g->gpu.bf16, 0);
  EXPECT_DOUBLE_EQ(g->gpu.efficiency[kMatmul], 1.2);
  EXPECT_DOUBLE_EQ(g->gpu.kernel_overhead, 0);  // Not in the file: none.
}

TEST(GpuFileTest, FittedKernelOverhead) {
  auto g = ParseGpuFile(R"({"roofline": {"device": "cuda", "gpu": "h100"},
      "fit": {"efficiency": {"matmul": 0.7}, "kernel_overhead_seconds": 4.5e-6}})",
                        "h100.json");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_DOUBLE_EQ(g->gpu.kernel_overhead, 4.5e-6);
  auto bad = ParseGpuFile(R"({"roofline": {"device": "cuda", "gpu": "h100"},
      "fit": {"efficiency": {}, "kernel_overhead_seconds": -1}})",
                          "h100.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.status().message(),
      "h100.json: key fit.kernel_overhead_seconds: expected a number >= 0");
}

TEST(GpuFileTest, MeasuredCudaContext) {
  auto g = ParseGpuFile(R"({"roofline": {"device": "cuda", "gpu": "h200"},
      "fit": {"efficiency": {}}, "cuda_context_bytes": 856489984})",
                        "h200.json");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->cuda_context_bytes, 856489984);
  auto none = ParseGpuFile(
      R"({"roofline": {"device": "cuda", "gpu": "h200"}, "fit": {"efficiency": {}}})",
      "h200.json");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->cuda_context_bytes, -1);
  auto bad = ParseGpuFile(R"({"roofline": {"device": "cuda", "gpu": "h200"},
      "fit": {"efficiency": {}}, "cuda_context_bytes": 1.5})",
                          "h200.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "h200.json: key cuda_context_bytes: expected an integer >= 0");
}

// The error's message for `text`, "" if it parses.
std::string Error(const std::string& text) {
  auto g = ParseGpuFile(text, "cal.json");
  return g.ok() ? "" : g.status().message();
}

TEST(GpuFileTest, ErrorsNameTheFileAndTheKey) {
  const std::string peaks =
      R"("roofline": {"device": "cpu", "bandwidth_gbs": 10, "tflops": {"fp32": 0.1}})";
  EXPECT_EQ(Error("[1]"), "cal.json: not a JSON object");
  EXPECT_EQ(Error("{}").rfind("cal.json: key roofline: missing", 0), 0u);
  EXPECT_EQ(Error("{" + peaks + "}").rfind("cal.json: key fit.efficiency:", 0),
            0u);
  EXPECT_EQ(Error("{" + peaks + R"(, "fit": {"efficiency": {"matmul": -1}}})"),
            "cal.json: key fit.efficiency.matmul: expected a positive number");
  EXPECT_EQ(
      Error("{" + peaks + R"(, "fit": {"efficiency": {"conv": 1}}})")
          .rfind("cal.json: key fit.efficiency.conv: unknown op class", 0),
      0u);
  EXPECT_EQ(Error(R"({"roofline": {"device": "cpu", "tflops": {"fp32": 1}},
      "fit": {"efficiency": {}}})"),
            "cal.json: key roofline.bandwidth_gbs: missing");
  EXPECT_EQ(Error(R"({"roofline": {"device": "cpu", "bandwidth_gbs": 1,
      "tflops": {"fp64": 1}}, "fit": {"efficiency": {}}})")
                .rfind("cal.json: key roofline.tflops.fp64: unknown dtype", 0),
            0u);
  EXPECT_EQ(Error(R"({"roofline": {"device": "tpu", "gpu": "h100"}})"),
            "cal.json: key roofline.device: expected cuda or cpu");
  EXPECT_EQ(Error(R"({"roofline": {"gpu": "z80"}})")
                .rfind("cal.json: key roofline.gpu: ", 0),
            0u);
  auto missing = ReadGpuFile("/nonexistent/cal.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "/nonexistent/cal.json: cannot read the file");
}

}  // namespace
}  // namespace torchcost::step
