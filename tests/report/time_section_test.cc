// The time block and the time columns of the text report: units, marking as
// predicted, and nothing at all without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/text_sections.h"

namespace torchcost::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(TimeSectionTest, SecondsInTheLargestUnitAboveOne) {
  EXPECT_EQ(SecondsText(1.5), "1.5 s");
  EXPECT_EQ(SecondsText(0.0123), "12.3 ms");
  EXPECT_EQ(SecondsText(4.56e-5), "45.6 us");
  EXPECT_EQ(SecondsText(7e-10), "0.7 ns");
  EXPECT_EQ(SecondsText(0), "0 s");
}

TEST(TimeSectionTest, StepCellsBoundWhereCollectivesAreUntimed) {
  StepRate timed{0.5, 2000, "tokens", 0.4, ""};
  EXPECT_THAT(StepTimeCells(timed),
              ::testing::ElementsAre("500 ms", "2000", "40.0%"));
  EXPECT_EQ(UntimedCommunicationNote(timed.communication_untimed, "full"), "");
  // Collectives that count 0 leave the step shorter than it is: the time is
  // a lower bound, tokens per second and MFU (over that time) upper bounds.
  StepRate untimed = timed;
  untimed.communication_untimed = "the network's bandwidth is not given";
  EXPECT_THAT(StepTimeCells(untimed),
              ::testing::ElementsAre(">= 500 ms", "<= 2000", "<= 40.0%"));
  EXPECT_THAT(UntimedCommunicationNote(untimed.communication_untimed, "full"),
              HasSubstr("collectives left out of full: "
                        "the network's bandwidth is not given"));
  // Not timed at all: dashes, never "0 s".
  EXPECT_THAT(StepTimeCells(StepRate()), ::testing::ElementsAre("-", "-", "-"));
}

TEST(TimeSectionTest, TflopsOverSeconds) {
  EXPECT_EQ(TflopsText(3e12, 0.5), "6.00");  // 3e12 FLOPs in 0.5 s = 6 TFLOP/s.
  EXPECT_EQ(TflopsText(1, 0), "-");
}

TEST(TimeSectionTest, BlockMarkedPredicted) {
  Report r;
  EXPECT_EQ(RenderTime(r), "");
  TimeReport& t = r.time;
  t.present = true;
  t.source = "roofline on L4";
  t.forward_seconds = 0.01;
  t.backward_seconds = 0.02;
  t.optimizer_seconds = 0.001;
  t.step_seconds = 0.031;
  t.mfu = 0.25;
  t.peak_flops = 121e12;
  t.peak_dtype = "bfloat16";
  t.throughput_unit = "tokens";
  t.items_per_step = 2048;
  t.items_per_second = 2048 / 0.031;
  const std::string text = RenderTime(r);
  EXPECT_THAT(text, HasSubstr("Time (predicted: roofline on L4)"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "  Backward:         20 ms per micro-batch\n"));  // Labels padded
                                                            // to 20.
  EXPECT_THAT(
      text,
      HasSubstr("  MFU:              25.0% of 121.0 TFLOP/s (bfloat16)\n"));
  // 2048 / 0.031 = 66064.5: whole numbers from 1000 on.
  EXPECT_THAT(text, HasSubstr("66065 tokens/s (2048 per step)"));
  // No overhead given: no line, and the note says it is not modelled.
  EXPECT_THAT(text, Not(HasSubstr("Overhead:")));
  EXPECT_THAT(text, HasSubstr("the overhead per kernel (launch, dispatch), "
                              "the host's launch time and communication are "
                              "not modelled"));
  EXPECT_THAT(text, Not(HasSubstr("-bound")));
}

TEST(TimeSectionTest, EachPhaseSaysWhichBoundsItWithTheHostModelled) {
  Report r;
  r.training.mode = StepMode::kTrain;
  TimeReport& t = r.time;
  t.present = true;
  t.source = "calibrated (h200.json)";
  t.calibrated = true;
  t.host.forward_kernel = 20e-6;
  t.forward_device_seconds = 0.01;
  t.forward_host_seconds = 0.002;
  t.forward_seconds = 0.01;
  t.optimizer_device_seconds = 0.003;
  t.optimizer_host_seconds = 0.015;
  t.optimizer_seconds = 0.015;
  const std::string text = RenderTime(r);
  EXPECT_THAT(text, HasSubstr("10 ms per micro-batch (device-bound: device "
                              "10 ms, host 2 ms)\n"));
  EXPECT_THAT(text, HasSubstr("  Optimizer:        15 ms (host-bound: device "
                              "3 ms, host 15 ms)\n"));
  EXPECT_THAT(text, HasSubstr("a phase takes the larger of its device and "
                              "host (launch) times"));
}

TEST(TimeSectionTest, OverheadLineWhenItApplies) {
  Report r;
  TimeReport& t = r.time;
  t.present = true;
  t.calibrated = true;
  t.source = "calibrated (cpu.json)";
  t.class_kernels = {40, 0, 50, 10, 6};  // 106 kernels.
  t.kernel_overhead = 5e-6;
  t.overhead_seconds = 106 * 5e-6;
  const std::string text = RenderTime(r);
  EXPECT_THAT(text, HasSubstr("  Overhead:         530 us (106 kernels x 5 us "
                              "each)\n"));
  EXPECT_THAT(text, HasSubstr("plus the overhead per kernel;"));
}

TEST(TimeSectionTest, CommunicationLinesNameTheLink) {
  Report r;
  r.training.mode = StepMode::kTrain;
  r.training.sharding.strategy = ShardStrategy::kDdp;
  r.training.sharding.world = 4;
  r.collectives.push_back(NodeCollectives());
  TimeReport& t = r.time;
  t.present = true;
  t.source = "roofline on L4";
  t.communication_seconds = 0.002;
  t.exposed_communication_seconds = 0.0005;
  t.model_parallel_communication_seconds = 1.5e-4;
  t.interconnect.link = 32e9;
  t.interconnect.link_type = LinkType::kPcie;
  std::string text = RenderTime(r);
  EXPECT_THAT(text, HasSubstr("  Communication:    2 ms per step (NCCL's "
                              "ring, 32 GB/s per direction over PCIe), "
                              "500 us of it exposed\n"));
  EXPECT_THAT(text, HasSubstr("  TP/SP/EP comm:    150 us per step, in the "
                              "forward and backward above (NCCL's ring: "
                              "latency, and bytes at 32 GB/s per direction "
                              "over PCIe)\n"));
  t.model_parallel_overlapped_seconds = 4e-5;
  EXPECT_THAT(RenderTime(r),
              HasSubstr("  TP/SP/EP comm:    150 us per step (40 us of it "
                        "beside the backward's GEMMs, as Megatron runs it), "
                        "in the forward and backward above"));
  t.interconnect = Interconnect();
  t.interconnect.link = 450e9;
  t.interconnect.network = 50e9;
  text = RenderTime(r);
  EXPECT_THAT(text, HasSubstr("(NCCL's ring, 450 GB/s per direction in a "
                              "node, 50 between)"));
  t.communication_untimed = "the network's bandwidth is not given";
  t.model_parallel_communication_seconds = 0;
  text = RenderTime(r);
  EXPECT_THAT(text, HasSubstr("  Communication:    not timed: the network's "
                              "bandwidth is not given\n"));
  EXPECT_THAT(text, HasSubstr("  TP/SP/EP comm:    not timed: the network's "
                              "bandwidth is not given\n"));
}

TEST(RateTextTest, FourDigitsThenWholeNumbers) {
  EXPECT_EQ(RateText(0.5), "0.5");
  EXPECT_EQ(RateText(423.14), "423.1");
  EXPECT_EQ(RateText(999.94), "999.9");
  EXPECT_EQ(RateText(5887.4), "5887");
  EXPECT_EQ(RateText(65327.2), "65327");
  EXPECT_EQ(RateText(1.5e9), "1500000000");
  EXPECT_EQ(RateText(-1), "-");
}

}  // namespace
}  // namespace torchcost::report
