// The ring algorithm's time of a data-parallel rank's collectives, on payloads
// and links chosen so that each expected time is a short hand derivation.
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
  // 2 (8 - 1) / 8 * 10 GB at 100 GB/s = 175 ms.
  const CollectiveSeconds c = TimeCollectives(s, Node(100 * kGB));
  EXPECT_DOUBLE_EQ(c.backward, 0.175);
  EXPECT_EQ(c.forward_backward, 0);
  EXPECT_EQ(c.after_step, 0);
  EXPECT_EQ(c.untimed, "");
}

TEST(CollectiveTimeTest, ZeroTwoGathersTheUpdatedParametersAfterTheStep) {
  ShardingReport s;
  s.strategy = ShardStrategy::kZero2;
  s.world = 4;
  s.reduce_scatter_bytes = 8 * kGB;
  s.all_gather_bytes = s.after_step_all_gather_bytes = 4 * kGB;
  // (4 - 1) / 4 of each payload at 50 GB/s: 120 ms and 60 ms.
  const CollectiveSeconds c = TimeCollectives(s, Node(50 * kGB));
  EXPECT_DOUBLE_EQ(c.backward, 0.12);
  EXPECT_DOUBLE_EQ(c.after_step, 0.06);
}

TEST(CollectiveTimeTest, FsdpAcrossNodesRunsAtTheSlowerNetwork) {
  ShardingReport s;
  s.strategy = ShardStrategy::kFsdp;
  s.world = 16;
  s.all_gather_bytes = 32 * kGB;
  s.reduce_scatter_bytes = 16 * kGB;
  // (16 - 1) / 16 of 48 GB at min(400, 25) GB/s = 1.8 s.
  const CollectiveSeconds c = TimeCollectives(s, Node(400 * kGB, 25 * kGB));
  EXPECT_DOUBLE_EQ(c.forward_backward, 1.8);
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
  // Within the group of 8: 7 / 8 of 24 GB at 400 GB/s = 52.5 ms; across the
  // 2 groups, ranks 8 apart on two nodes: 2 (2 - 1) / 2 of 1 GB at 20 GB/s =
  // 50 ms.
  const CollectiveSeconds c = TimeCollectives(s, Node(400 * kGB, 20 * kGB));
  EXPECT_DOUBLE_EQ(c.forward_backward, 0.0525 + 0.05);
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

}  // namespace
}  // namespace torchcost::analysis
