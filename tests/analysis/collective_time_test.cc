// NCCL's tuner's time of one call, and of a data-parallel rank's collectives
// as such calls, on payloads and links chosen so that each expected
// time is a short hand derivation.
#include "analysis/collective_time.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchcost::analysis {
namespace {

using ::testing::HasSubstr;

constexpr double kGB = 1e9;

Interconnect Node(double link, double network = 0, int node_gpus = 8) {
  Interconnect net;
  net.link = link;
  net.network = network;
  net.node_gpus = node_gpus;
  return net;
}

TEST(CollectiveTimeTest, DdpAllReducesBesideTheBackward) {
  ShardingReport s;
  s.strategy = ShardStrategy::kDdp;
  s.world = 8;
  s.all_reduce_bytes = 10 * kGB;
  s.all_reduce_calls = 10;  // Buckets of 1 GB.
  // 2 (8 - 1) / 8 * 10 GB at 100 GB/s = 175 ms, and per bucket NCCL's
  // latency (Simple at 1 GB): 8.4 + 14 steps x 3.4 us = 56 us.
  const CollectiveSeconds c = TimeCollectives(s, Node(100 * kGB));
  EXPECT_DOUBLE_EQ(c.backward, 0.175 + 10 * 56e-6);
  EXPECT_EQ(c.forward_backward, 0);
  EXPECT_EQ(c.after_step, 0);
  EXPECT_EQ(c.untimed, "");
}

TEST(CollectiveTimeTest, ZeroTwoGathersTheUpdatedParametersAfterTheStep) {
  ShardingReport s;
  s.strategy = ShardStrategy::kZero2;
  s.world = 4;
  s.reduce_scatter_bytes = 8 * kGB;
  s.reduce_scatter_calls = 2;  // Two reduce buckets.
  s.all_gather_bytes = s.after_step_all_gather_bytes = 4 * kGB;
  // (4 - 1) / 4 of each payload at 50 GB/s: 120 ms and 60 ms; per call
  // (Simple): 8.4 + 3 steps x 3.4 us = 18.6 us; the gather is one call.
  const CollectiveSeconds c = TimeCollectives(s, Node(50 * kGB));
  EXPECT_DOUBLE_EQ(c.backward, 0.12 + 2 * 18.6e-6);
  EXPECT_DOUBLE_EQ(c.after_step, 0.06 + 18.6e-6);
}

TEST(CollectiveTimeTest, FsdpAcrossNodesRunsAtTheSlowerNetwork) {
  ShardingReport s;
  s.strategy = ShardStrategy::kFsdp;
  s.world = 16;
  s.all_gather_bytes = 32 * kGB;
  s.reduce_scatter_bytes = 16 * kGB;
  // (16 - 1) / 16 of 48 GB at min(400, 25) GB/s = 1.8 s; a call each
  // (Simple): 15 steps, 1 between the 2 nodes: 8.4 + 14 x max(3.4, 3) + 14
  // us = 70 us.
  const CollectiveSeconds c = TimeCollectives(s, Node(400 * kGB, 25 * kGB));
  EXPECT_DOUBLE_EQ(c.forward_backward, 1.8 + 2 * 70e-6);
  EXPECT_EQ(c.backward, 0);
}

TEST(CollectiveTimeTest, HybridShardGathersInTheNodeAndAllReducesAcrossIt) {
  ShardingReport s;
  s.strategy = ShardStrategy::kFsdp;
  s.world = 16;
  s.shard_group = 8;
  s.all_gather_bytes = 16 * kGB;
  s.reduce_scatter_bytes = 8 * kGB;
  s.all_reduce_bytes = 1 * kGB;
  // Within the group of 8: 7 / 8 of 24 GB at 400 GB/s = 52.5 ms, and a call
  // each (Simple): 8.4 + 7 x 3.4 us = 32.2 us; across the 2 groups, ranks 8
  // apart on two nodes: 2 (2 - 1) / 2 of 1 GB at 20 GB/s = 50 ms, and 8.4 us
  // + 2 steps between the nodes, one rank each (NCCL's tree figure, 14 us).
  const CollectiveSeconds c = TimeCollectives(s, Node(400 * kGB, 20 * kGB));
  EXPECT_DOUBLE_EQ(c.forward_backward, 0.0525 + 2 * 32.2e-6 + 0.05 + 36.4e-6);
}

TEST(CollectiveTimeTest, WhatCannotBeTimedSaysWhy) {
  ShardingReport s;
  s.strategy = ShardStrategy::kDdp;
  s.world = 16;
  s.all_reduce_bytes = kGB;
  // Two nodes and no network given.
  CollectiveSeconds c = TimeCollectives(s, Node(400 * kGB));
  EXPECT_EQ(c.backward, 0);
  EXPECT_THAT(c.untimed, HasSubstr("span 16 ranks, over 8 GPUs per node"));
  // One node, but the GPU's link unknown.
  s.world = 4;
  c = TimeCollectives(s, Node(0));
  EXPECT_EQ(c.backward, 0);
  EXPECT_THAT(c.untimed, HasSubstr("link bandwidth is unknown"));
  // One rank communicates nothing.
  s.world = 1;
  c = TimeCollectives(s, Node(0));
  EXPECT_EQ(c.backward, 0);
  EXPECT_EQ(c.untimed, "");
}

// NCCL's tuner (src/graph/tuning.cc at 5067397c): per protocol a base
// latency, one per ring step, and the traffic over its bandwidth share.
TEST(NcclCallTest, ASmallAllReduceTakesLlsLatency) {
  // 4 ranks, 4096 bytes: 6 steps, 2 x 3/4 x 4096 = 6144 bytes sent. LL: 6.6
  // + 6 x 0.6 = 10.2 us + 6144 / (0.5 x 100 GB/s); LL128: 14 + 6 x 1.9 =
  // 25.4 us + ...; Simple: 8.4 + 6 x 3.4 = 28.8 us + ...
  std::string untimed;
  EXPECT_DOUBLE_EQ(NcclCallSeconds(CollectiveKind::kAllReduce, 4096, 4, 4,
                                   Node(100 * kGB), &untimed),
                   10.2e-6 + 6144 / (0.5 * 100 * kGB));
  // An all-gather of the same: 3 steps, 3/4 x 4096 = 3072 bytes. LL: 6.6 + 3
  // x 0.6 = 8.4 us + 3072 / 50 GB/s.
  EXPECT_DOUBLE_EQ(NcclCallSeconds(CollectiveKind::kAllGather, 4096, 4, 4,
                                   Node(100 * kGB), &untimed),
                   8.4e-6 + 3072 / (0.5 * 100 * kGB));
  EXPECT_EQ(untimed, "");
}

TEST(NcclCallTest, ALargeAllReduceRunsAtTheLinkWithSimple) {
  // 8 ranks, 1 GB: 14 steps, 2 x 7/8 x 1 GB = 1.75 GB sent. Simple: 8.4 + 14
  // x 3.4 = 56 us + 1.75 GB / 450 GB/s; LL128: 40.6 us + 1.75 GB / (0.92 x
  // 450 GB/s), 0.34 ms slower; LL at half the bandwidth slower still.
  std::string untimed;
  EXPECT_DOUBLE_EQ(NcclCallSeconds(CollectiveKind::kAllReduce, kGB, 8, 8,
                                   Node(450 * kGB), &untimed),
                   56e-6 + 1.75 * kGB / (450 * kGB));
}

TEST(NcclCallTest, AcrossNodesStepsBetweenThemTakeTheNetwork) {
  // 16 ranks, 8 a node, network 50 GB/s, 4096 bytes: 30 steps, 2 between the
  // 2 nodes; within, a step takes at least NCCL's 1 us network overhead. LL:
  // 6.6 + 28 x max(0.6, 1) + 2 x 2.7 = 40 us + 2 x 15/16 x 4096 = 7680 bytes /
  // (0.5 x 50 GB/s); LL128: 14 + 28 x 1.9 + 2 x 4 = 75.2 us + ...
  std::string untimed;
  EXPECT_DOUBLE_EQ(NcclCallSeconds(CollectiveKind::kAllReduce, 4096, 16, 16,
                                   Node(450 * kGB, 50 * kGB), &untimed),
                   40e-6 + 7680 / (0.5 * 50 * kGB));
  // No network given: not timed, and why.
  EXPECT_EQ(NcclCallSeconds(CollectiveKind::kAllReduce, 4096, 16, 16,
                            Node(450 * kGB), &untimed),
            0);
  EXPECT_THAT(untimed, HasSubstr("network's bandwidth is not given"));
}

TEST(NcclCallTest, LlsBandwidthIsCappedByTheGpusArchitecture) {
  // 4 ranks, 512 KiB: 6 steps, 2 x 3/4 x 524288 = 786432 bytes sent, at 450
  // GB/s. LL: 6.6 + 6 x 0.6 = 10.2 us + 786432 B / min(0.5 x 450, 141) GB/s
  // on a Hopper (llMaxBws[HOPPER][N1]) = 15.8 us; LL128: 25.4 us + 1.9 us;
  // Simple: 8.4 + 6 x 3.4 = 28.8 us + 1.7 us.
  Interconnect hopper = Node(450 * kGB);
  hopper.compute_capability = 90;
  std::string untimed;
  EXPECT_DOUBLE_EQ(NcclCallSeconds(CollectiveKind::kAllReduce, 524288, 4, 4,
                                   hopper, &untimed),
                   10.2e-6 + 786432 / (141 * kGB));
  // An Ampere's cap, 87.7 GB/s: 10.2 us + 8.97 us, still below LL128's.
  hopper.compute_capability = 80;
  EXPECT_DOUBLE_EQ(NcclCallSeconds(CollectiveKind::kAllReduce, 524288, 4, 4,
                                   hopper, &untimed),
                   10.2e-6 + 786432 / (87.7 * kGB));
  // The architecture unknown: no cap, half the link.
  EXPECT_DOUBLE_EQ(NcclCallSeconds(CollectiveKind::kAllReduce, 524288, 4, 4,
                                   Node(450 * kGB), &untimed),
                   10.2e-6 + 786432 / (0.5 * 450 * kGB));
}

TEST(NcclCallTest, PcieTakesItsOwnLatenciesAndNoLl128) {
  Interconnect pcie = Node(32 * kGB);
  pcie.link_type = LinkType::kPcie;
  std::string untimed;
  // 4 ranks, 4096 bytes: LL's 6.6 + 6 x 1.0 (PCIe's step) = 12.6 us + 6144 B
  // / 16 GB/s.
  EXPECT_DOUBLE_EQ(
      NcclCallSeconds(CollectiveKind::kAllReduce, 4096, 4, 4, pcie, &untimed),
      12.6e-6 + 6144 / (16 * kGB));
  // 1 MiB: 1572864 bytes sent. LL: 12.6 + 98.3 us; Simple: 8.4 + 6 x 5.7 =
  // 42.6 us + 49.2 us = 91.8 us. LL128's 14 + 6 x 2.5 = 29 us + 1572864 B /
  // (0.92 x 32 GB/s) = 82.4 us would be faster, but NCCL runs it over NVLink
  // only.
  EXPECT_DOUBLE_EQ(NcclCallSeconds(CollectiveKind::kAllReduce, 1 << 20, 4, 4,
                                   pcie, &untimed),
                   42.6e-6 + 1572864 / (32 * kGB));
  EXPECT_EQ(untimed, "");
}

}  // namespace
}  // namespace torchcost::analysis
