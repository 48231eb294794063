// Tests of one rank's memory under data-parallel sharding: the ZeRO paper's
// closed forms (Rajbhandari et al. 2020, Figure 1 and its 7.5B example), DDP's
// buckets, ZeRO-2's reduce buckets and FSDP's gathered units, on small graphs
// whose expected bytes are derived by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "testing/timeline.h"
#include "testing/toy_graph_test.h"
#include "testing/toy_graphs.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::At;
using ::testing::HasSubstr;
using testing::kGrad;
using testing::kOpt;
using testing::kParam;
using testing::kTemp;

// Graphs of t::lin layers (testing::LinearChain).
class ShardingTest : public testing::ToyGraphTest {
 protected:
  void Chain(const std::vector<int64_t>& dims,
             const std::vector<std::string>& paths) {
    testing::LinearChain(b_, dims, paths);
  }

  Report Run(const std::string& input, const TrainingOptions& t,
             DType param_dtype = DType::kUnknown) {
    AnalysisOptions opts;
    opts.training = t;
    opts.param_dtype = param_dtype;
    return AnalyzeBuiltGraph(opts, input);
  }

  // The FSDP step of kShards' model (below), its parameter shards on the host
  // if `offload_params`; SHARD_GRAD_OP unless `reshard_after_forward`; over
  // `world` ranks, sharded over groups of `shard_group` (0: all); `accumulate`
  // micro-batches per step.
  Report RunFsdpBlocks(bool offload_params, bool reshard_after_forward = true,
                       int world = 4, int shard_group = 0, int accumulate = 1) {
    b_.Scope("h", "ModuleList");
    Chain({16, 16, 16, 4}, {"h.0", "h.1", "head"});
    TrainingOptions t;
    t.optimizer = OptimizerKind::kSgd;
    t.sharding.strategy = ShardStrategy::kFsdp;
    t.sharding.world = world;
    t.sharding.shard_group = shard_group;
    t.sharding.reshard_after_forward = reshard_after_forward;
    t.sharding.offload_optimizer = t.sharding.offload_params = offload_params;
    t.accumulate = accumulate;
    return Run("2,16", t);
  }
};

// Mixed-precision Adam (fp16 params and grads; fp32 masters and two fp32
// moments, K = 12 bytes per parameter) sharded over N ranks, in the ZeRO
// paper's accounting (no DeepSpeed flat gradient buffers, no persistent
// parameters).
TrainingOptions MixedAdam(ShardStrategy s, int n) {
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  t.master_weights = true;
  t.sharding.strategy = s;
  t.sharding.world = n;
  t.sharding.contiguous_gradients = false;
  t.sharding.persistence_threshold = 0;
  return t;
}

// A list of byte counts (keeps a table's rows on one line).
template <typename... T>
std::vector<int64_t> Bytes(T... bytes) {
  return {static_cast<int64_t>(bytes)...};
}

// The distinct successive gradient bytes over the backward's points.
std::vector<int64_t> BackwardGrads(const Report& r) {
  std::vector<int64_t> grads;
  for (const TimelinePoint& p : r.training.timeline) {
    if (p.phase == StepPhase::kBackward &&
        (grads.empty() || grads.back() != At(p.live[kGrad]))) {
      grads.push_back(At(p.live[kGrad]));
    }
  }
  return grads;
}

// The model states of the last point (after the optimizer step).
int64_t StatesAtEnd(const Report& r) {
  const TimelinePoint& p = r.training.timeline.back();
  return At(p.live[kParam]) + At(p.live[kGrad]) + At(p.live[kOpt]);
}

TEST_F(ShardingTest, ZeroPaperFigureOne) {
  // Psi = 64 * 1000 parameters in one tensor; N = 64 ranks, so Psi / N = 1000.
  Chain({1000, 64}, {"l"});
  constexpr int64_t kPsi = 64 * 1000, kN = 64, kK = 12;
  // NB: torch 1.13's Adam keeps a float32 `step` per tensor: one per flat shard
  // (+4 bytes).
  struct Case {
    ShardStrategy s;
    int64_t param, grad, opt;
  } cases[] = {
      // Baseline: (2 + 2 + K) * Psi.
      {ShardStrategy::kNone, 2 * kPsi, 2 * kPsi, kK * kPsi + 4},
      // P_os: 2 Psi + 2 Psi + K Psi / N.
      {ShardStrategy::kZero1, 2 * kPsi, 2 * kPsi, kK * kPsi / kN + 4},
      // P_os+g: 2 Psi + (2 + K) Psi / N.
      {ShardStrategy::kZero2, 2 * kPsi, 2 * kPsi / kN, kK * kPsi / kN + 4},
      // P_os+g+p: (2 + 2 + K) Psi / N.
      {ShardStrategy::kZero3, 2 * kPsi / kN, 2 * kPsi / kN, kK * kPsi / kN + 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(ShardStrategyName(c.s)));
    Report r = Run("4,1000:float16", MixedAdam(c.s, kN), DType::kFloat16);
    const ShardingReport& sr = r.training.sharding;
    EXPECT_EQ(sr.param_bytes, c.param);
    EXPECT_EQ(sr.grad_bytes, c.grad);
    EXPECT_EQ(sr.opt_bytes, c.opt);
    EXPECT_EQ(StatesAtEnd(r), c.param + c.grad + c.opt);
    // OPT holds the rank's states at every moment of the step.
    for (const TimelinePoint& p : r.training.timeline)
      EXPECT_EQ(At(p.live[kOpt]), c.opt);
  }
}

// ZeRO-Offload (Ren et al. 2021, Sec. 4): the fp32 masters, both moments and
// the fp32 gradient shard move to the host, where the step runs; the device
// keeps its fp16 parameters (all of them under ZeRO-2, its shard under ZeRO-3)
// and the gradients not yet reduced.
TEST_F(ShardingTest, ZeroOffloadKeepsParametersAndUnreducedGradients) {
  Chain({1000, 64}, {"l"});
  constexpr int64_t kPsi = 64 * 1000, kN = 64, kK = 12;
  for (ShardStrategy s : {ShardStrategy::kZero2, ShardStrategy::kZero3}) {
    SCOPED_TRACE(std::string(ShardStrategyName(s)));
    TrainingOptions t = MixedAdam(s, kN);
    t.sharding.offload_optimizer = true;
    Report r = Run("4,1000:float16", t, DType::kFloat16);
    const ShardingReport& sr = r.training.sharding;
    const int64_t param = s == ShardStrategy::kZero2 ? 2 * kPsi : 2 * kPsi / kN;
    EXPECT_EQ(sr.param_bytes, param);
    EXPECT_EQ(sr.grad_bytes, 0);
    EXPECT_EQ(sr.opt_bytes, 0);
    EXPECT_TRUE(sr.offload_optimizer);
    // K Psi / N of states (+4: the flat shard's float32 `step`), and the
    // shard's Psi / N gradients in float32.
    EXPECT_EQ(sr.host_opt_bytes, kK * kPsi / kN + 4);
    EXPECT_EQ(sr.host_grad_bytes, 4 * kPsi / kN);
    // Down 2 Psi / N bytes of gradients, up 2 Psi / N of parameters.
    EXPECT_EQ(sr.host_transfer_bytes, 2 * 2 * kPsi / kN);
    EXPECT_EQ(StatesAtEnd(r), param);
    for (const TimelinePoint& p : r.training.timeline)
      EXPECT_EQ(At(p.live[kOpt]), 0);
    // The step runs on the host: no device temporaries beyond the backward's.
    EXPECT_EQ(testing::OptimizerTempOverBackward(r), 0);
  }
}

TEST_F(ShardingTest, ExpertParallelismIsRefusedUnderZeroAndFsdp) {
  // A graph with an all-to-all (a mixture of experts built with ep > 1): its
  // experts' states would shard over world / ep ranks, which is not modelled.
  int x = b_.Input();
  const int w = b_.Param("a.weight", {4, 4});
  x = b_.One("t::lin", {x, w}, {"input", "weight"});
  b_.Output(b_.One("torchcost::all_to_all", {x}, {"self"}));
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "2,4"));
  for (ShardStrategy s :
       {ShardStrategy::kZero1, ShardStrategy::kZero3, ShardStrategy::kFsdp}) {
    opts.training = MixedAdam(s, 4);
    Result<Report> r = Analyze(b_.graph(), rules_, ctx_, opts);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(
        r.status().message(),
        HasSubstr("StepConfig.shard " + std::string(ShardStrategyName(s)) +
                  ": not modelled with expert parallelism"));
  }
  opts.training = MixedAdam(ShardStrategy::kDdp, 4);
  EXPECT_TRUE(Analyze(b_.graph(), rules_, ctx_, opts).ok());
}

TEST_F(ShardingTest, ZeroPaperSevenAndAHalfBillionOnSixtyFourRanks) {
  // Psi = 75000 * 100000 = 7.5e9 parameters, N = 64: the paper's example,
  // 120 GB, 31.4 GB, 16.6 GB and 1.9 GB of model states per device.
  Chain({100000, 75000}, {"l"});
  const double psi = 7.5e9, n = 64;
  struct Case {
    ShardStrategy s;
    double gb;
  } cases[] = {
      {ShardStrategy::kNone, (2 + 2 + 12) * psi / 1e9},  // 120
      // 31.4
      {ShardStrategy::kZero1, (2 * psi + 2 * psi + 12 * psi / n) / 1e9},
      {ShardStrategy::kZero2, (2 * psi + (2 + 12) * psi / n) / 1e9},  // 16.6
      {ShardStrategy::kZero3, (2 + 2 + 12) * psi / n / 1e9},          // 1.9
  };
  const double paper[] = {120, 31.4, 16.6, 1.9};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(std::string(ShardStrategyName(cases[i].s)));
    Report r =
        Run("1,100000:float16", MixedAdam(cases[i].s, 64), DType::kFloat16);
    const ShardingReport& sr = r.training.sharding;
    const double gb =
        static_cast<double>(sr.param_bytes + sr.grad_bytes + sr.opt_bytes) /
        1e9;
    // The formula, to the step counter's 4 bytes.
    EXPECT_NEAR(gb, cases[i].gb, 1e-8);
    EXPECT_NEAR(gb, paper[i], 0.05);  // The paper's rounded figure.
  }
}

TEST_F(ShardingTest, FlatShardsArePaddedToMultiplesOfN) {
  // W [3, 5]: 15 float32 elements over N = 4 ranks: ceil(15 / 4) = 4 each.
  Chain({5, 3}, {"l"});
  TrainingOptions t;
  t.optimizer = OptimizerKind::kSgdMomentum;
  t.sharding.strategy = ShardStrategy::kZero3;
  t.sharding.world = 4;
  t.sharding.persistence_threshold = 0;
  Report r = Run("2,5", t);
  EXPECT_EQ(r.training.sharding.param_bytes, 4 * 4);
  EXPECT_EQ(r.training.sharding.grad_bytes, 4 * 4);
  // One momentum buffer per element.
  EXPECT_EQ(r.training.sharding.opt_bytes, 4 * 4);
}

TEST_F(ShardingTest, DdpBucketsAreASecondCopyOfTheGradients) {
  Chain({8, 4, 2}, {"l1", "l2"});
  TrainingOptions plain;
  plain.optimizer = OptimizerKind::kSgd;
  Report a = Run("5,8", plain);
  TrainingOptions ddp = plain;
  ddp.sharding.strategy = ShardStrategy::kDdp;
  ddp.sharding.world = 8;
  Report b = Run("5,8", ddp);
  // Gradients: W1 [4, 8] and W2 [2, 4] in float32: (32 + 8) * 4 = 160 bytes,
  // held by the buckets from DDP's construction on, beside each .grad.
  constexpr int64_t kGrads = (32 + 8) * 4;
  ASSERT_EQ(a.training.timeline.size(), b.training.timeline.size());
  for (size_t i = 0; i < a.training.timeline.size(); ++i) {
    EXPECT_EQ(At(b.training.timeline[i].live[kGrad]),
              At(a.training.timeline[i].live[kGrad]) + kGrads);
    EXPECT_EQ(At(b.training.timeline[i].total),
              At(a.training.timeline[i].total) + kGrads);
  }
  EXPECT_EQ(b.training.sharding.all_reduce_bytes, kGrads);
  // 160 bytes fit the first (1 MiB) bucket.
  EXPECT_EQ(b.training.sharding.ddp_buckets, 1);
  // gradient_as_bucket_view: .grad views the buckets, so GRAD is the buckets
  // but where backward makes a gradient (AccumulateGrad's tensor, copied into
  // its bucket and freed by the reducer's hook): W2's 32 bytes at l2, W1's 128
  // at l1.
  ddp.sharding.gradient_as_bucket_view = true;
  Report c = Run("5,8", ddp);
  EXPECT_THAT(BackwardGrads(c),
              ::testing::ElementsAre(kGrads, kGrads + 32, kGrads, kGrads + 128,
                                     kGrads));
  for (const TimelinePoint& p : c.training.timeline) {
    if (p.phase != StepPhase::kBackward) EXPECT_EQ(At(p.live[kGrad]), kGrads);
  }
}

TEST_F(ShardingTest, DdpBucketCount) {
  // Three float32 weights [512, 512] of 1 MiB each, bucketed in reverse order:
  // the first bucket closes at 1 MiB (W3); with a 25 MiB cap W2 and W1 share
  // the second; with a 1 MiB cap each has its own.
  Chain({512, 512, 512, 512}, {"l1", "l2", "l3"});
  TrainingOptions t;
  t.optimizer = OptimizerKind::kSgd;
  t.sharding.strategy = ShardStrategy::kDdp;
  t.sharding.world = 2;
  EXPECT_EQ(Run("1,512", t).training.sharding.ddp_buckets, 2);
  t.sharding.ddp_bucket_bytes = int64_t{1} << 20;
  const ShardingReport three = Run("1,512", t).training.sharding;
  EXPECT_EQ(three.ddp_buckets, 3);
  EXPECT_EQ(three.all_reduce_calls, 3);  // One all-reduce per bucket.
}

TEST_F(ShardingTest, Zero2ReducesGradientsInBuckets) {
  // W1 [4, 8] (32 elements) and W2 [2, 4] (8), float32, N = 4, buckets of 16
  // elements (64 bytes). Backward makes W2's gradient (32 bytes, not a full
  // bucket: in flight whole), then W1's (128 bytes): 160 bytes made, two full
  // buckets (128 bytes) reduced to ceil(128 / 4) = 32 bytes, 32 in flight.
  Chain({8, 4, 2}, {"l1", "l2"});
  TrainingOptions t;
  t.optimizer = OptimizerKind::kSgd;
  t.sharding.strategy = ShardStrategy::kZero2;
  t.sharding.world = 4;
  t.sharding.reduce_bucket_elements = 16;
  t.sharding.contiguous_gradients = false;
  Report r = Run("5,8", t);
  EXPECT_THAT(BackwardGrads(r), ::testing::ElementsAre(0, 32, 32 + 32));
  // After backward the rank keeps its shard: ceil(40 / 4) = 10 elements.
  EXPECT_EQ(At(r.training.timeline.back().live[kGrad]), 10 * 4);
  EXPECT_EQ(r.training.sharding.reduce_scatter_bytes, 160);
  EXPECT_EQ(r.training.sharding.all_gather_bytes, 160);
  // One reduce-scatter per bucket: ceil(160 / 64) = 3 calls.
  EXPECT_EQ(r.training.sharding.reduce_scatter_calls, 3);
}

// Gradient accumulation, 3 micro-batches per step, on the chain of the test
// above: ZeRO-2 reduce-scatters every micro-batch's gradients (DeepSpeed
// edaa722, engine.py allreduce_gradients: "ZeRO stage >= 2 communicates
// during non gradient accumulation boundaries as well"); ZeRO-1 reduces at
// the accumulation boundary only, and DDP under no_sync(); both ZeROs gather
// the updated parameters once, after the step.
TEST_F(ShardingTest,
       AccumulationReducesEveryMicroBatchWhereGradientsAreSharded) {
  Chain({8, 4, 2}, {"l1", "l2"});
  TrainingOptions t;
  t.optimizer = OptimizerKind::kSgd;
  t.sharding.world = 4;
  t.sharding.reduce_bucket_elements = 16;
  t.sharding.contiguous_gradients = false;
  t.accumulate = 3;
  t.sharding.strategy = ShardStrategy::kZero2;
  const ShardingReport zero2 = Run("5,8", t).training.sharding;
  EXPECT_EQ(zero2.reduce_scatter_bytes, 3 * 160);  // 40 float32 gradients.
  EXPECT_EQ(zero2.reduce_scatter_calls, 3 * 3);    // ceil(160 / 64) buckets.
  EXPECT_EQ(zero2.all_gather_bytes, 160);
  EXPECT_EQ(zero2.after_step_all_gather_bytes, 160);
  t.sharding.strategy = ShardStrategy::kZero1;
  const ShardingReport zero1 = Run("5,8", t).training.sharding;
  EXPECT_EQ(zero1.reduce_scatter_bytes, 160);
  EXPECT_EQ(zero1.reduce_scatter_calls, 3);
  EXPECT_EQ(zero1.all_gather_bytes, 160);
  t.sharding.strategy = ShardStrategy::kDdp;
  const ShardingReport ddp = Run("5,8", t).training.sharding;
  EXPECT_EQ(ddp.all_reduce_bytes, 160);
  EXPECT_EQ(ddp.all_reduce_calls, 1);  // 160 bytes: one bucket.
}

// DeepSpeed's contiguous_gradients (its default; stage_1_and_2.py and
// stage3.py at deepspeedai/DeepSpeed edaa722). The chain of the test above:
// W2's gradient (8 elements, 32 bytes) is made first, then W1's (32
// elements, 128 bytes); float32, N = 4, buckets of 16 elements (a 64-byte
// buffer). A rank's flat partition: ceil(40 / 4) = 10 elements (40 bytes) at
// ZeRO-2, ceil(32 / 4) + ceil(8 / 4) = 10 at ZeRO-3. Each gradient is whole
// only at the moment it is made; its hook copies it into the buffer.
TEST_F(ShardingTest, DeepSpeedFlatGradientBuffers) {
  Chain({8, 4, 2}, {"l1", "l2"});
  struct Case {
    const char* name;
    ShardStrategy s;
    bool overlap, offload;
    int64_t end;                    // Gradient bytes after the step.
    int64_t buffers, staging;       // ShardingReport.
    std::vector<int64_t> backward;  // BackwardGrads.
  };
  const Case cases[] = {
      // The buffer from W2's gradient on: 64 + 32; then 64 alone; W1's
      // gradient fills a bucket (160 > 64 bytes made), so the partition is
      // allocated whole: 40 + 64 + 128, then 40 + 64. After: the partition.
      {"zero2", ShardStrategy::kZero2, false, false, 40, 64, 0,
       Bytes(0, 64 + 32, 64, 40 + 64 + 128, 40 + 64)},
      // overlap_comm: two buffers (128 bytes).
      {"zero2 overlap", ShardStrategy::kZero2, true, false, 40, 128, 0,
       Bytes(0, 128 + 32, 128, 40 + 128 + 128, 40 + 128)},
      // ZeRO-Offload: no partition on the device, a staging buffer of the
      // largest parameter (W1: 32 elements, 128 bytes) from the start.
      {"zero2 offload", ShardStrategy::kZero2, false, true, 128, 64, 128,
       Bytes(128, 128 + 64 + 32, 128 + 64, 128 + 64 + 128, 128 + 64)},
      // ZeRO-1: whole gradients, and the buffer from the first one.
      {"zero1", ShardStrategy::kZero1, false, false, 160, 64, 0,
       Bytes(0, 32 + 64, 160 + 64)},
      // ZeRO-3: buffer and partition (64 + 40 = 104) from initialization.
      {"zero3", ShardStrategy::kZero3, false, false, 104, 64, 0,
       Bytes(104, 104 + 32, 104, 104 + 128, 104)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TrainingOptions t;
    t.optimizer = OptimizerKind::kSgd;
    t.sharding.strategy = c.s;
    t.sharding.world = 4;
    t.sharding.reduce_bucket_elements = 16;
    t.sharding.overlap_comm = c.overlap;
    t.sharding.offload_optimizer = c.offload;
    Report r = Run("5,8", t);
    EXPECT_THAT(BackwardGrads(r), ::testing::ElementsAreArray(c.backward));
    EXPECT_EQ(At(r.training.timeline.back().live[kGrad]), c.end);
    const ShardingReport& sr = r.training.sharding;
    EXPECT_TRUE(sr.contiguous_gradients);
    EXPECT_EQ(sr.reduce_bucket_elements, 16);
    EXPECT_EQ(sr.bucket_buffers, c.overlap ? 2 : 1);
    EXPECT_EQ(sr.bucket_buffer_bytes, c.buffers);
    EXPECT_EQ(sr.offload_staging_bytes, c.staging);
  }
}

// DeepSpeed's step with float32 masters (stage_1_and_2.py and stage3.py
// step at deepspeedai/DeepSpeed edaa722) on the chain above in float16, N =
// 4: the rank's partition is ceil(40 / 4) = 10 elements, 20 bytes in
// float16, 40 in float32. ZeRO-1/2 flatten it (+20 TEMP), cast the copy to
// float32 (+40), free the 16-bit gradients; the step runs with the float32
// gradient alive: torch's Adam loop adds sqrt and quotient (2 x 40), its fused
// step nothing; then the float32 gradient is freed. ZeRO-3 keeps its flat
// 16-bit buffer (20) and the bucket (16 elements, 32 bytes) and casts only.
TEST_F(ShardingTest, DeepSpeedStepCastsThePartitionForTheMasters) {
  Chain({8, 4, 2}, {"l1", "l2"});
  using Points = std::vector<std::pair<int64_t, int64_t>>;  // (GRAD, TEMP).
  struct Case {
    ShardStrategy s;
    bool fused;
    Points expected;
  } cases[] = {
      {ShardStrategy::kZero2,
       false,
       {{20, 20}, {20, 20 + 40}, {0, 40 + 80}, {0, 40}, {0, 0}}},
      {ShardStrategy::kZero2, true, {{20, 20}, {20, 20 + 40}, {0, 40}, {0, 0}}},
      {ShardStrategy::kZero1,
       false,
       {{20, 20}, {20, 20 + 40}, {0, 40 + 80}, {0, 40}, {0, 0}}},
      {ShardStrategy::kZero3, false, {{52, 40 + 80}, {52, 40}, {52, 0}}},
      {ShardStrategy::kZero3, true, {{52, 40}, {52, 0}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(ShardStrategyName(c.s)) +
                 (c.fused ? " fused" : ""));
    TrainingOptions t = MixedAdam(c.s, 4);
    t.sharding.contiguous_gradients = true;
    t.sharding.reduce_bucket_elements = 16;
    t.fused = c.fused;
    Report r = Run("5,8:float16", t, DType::kFloat16);
    int64_t base = 0;
    Points got;
    for (const TimelinePoint& p : r.training.timeline) {
      if (p.phase == StepPhase::kBackward) base = At(p.live[kTemp]);
      if (p.phase == StepPhase::kOptimizer)
        got.emplace_back(At(p.live[kGrad]), At(p.live[kTemp]) - base);
    }
    EXPECT_EQ(got, c.expected);
  }
}

// Root "head" W [4, 16] and blocks h.0, h.1 with W [16, 16], float32, N = 4,
// under FSDP with SGD. Shards: head ceil(64 / 4) * 4 = 64 bytes; each block
// ceil(256 / 4) * 4 = 256. Gathered (N shards): head 256 bytes, a block 1024.
constexpr int64_t kShards = 64 + 256 + 256, kRoot = 256, kBlock = 1024;

// The full parameters gathered at `p` of that step. Node 0 is h.0's lin,
// node 1 h.1's, node 2 the head's.
int64_t GatheredFsdpBlocks(const TimelinePoint& p) {
  // The root from the start of the forward; a block while its forward runs.
  if (p.phase == StepPhase::kForward) return kRoot + (p.node <= 1 ? kBlock : 0);
  // In backward h.1 runs with h.0 prefetched; h.0 has nothing after it.
  if (p.phase == StepPhase::kBackward)
    return kRoot + (p.node == 1 ? 2 * kBlock : p.node == 0 ? kBlock : 0);
  return 0;
}

TEST_F(ShardingTest, FsdpGathersTheUnitThatRunsAndPrefetchesTheNext) {
  Report r = RunFsdpBlocks(false);
  const ShardingReport& sr = r.training.sharding;
  EXPECT_EQ(sr.param_bytes, kShards);
  EXPECT_THAT(sr.units, ::testing::ElementsAre("", "h.0", "h.1"));
  EXPECT_EQ(sr.largest_unit_bytes, kBlock);
  for (const TimelinePoint& p : r.training.timeline) {
    EXPECT_EQ(At(p.live[kParam]), kShards + GatheredFsdpBlocks(p))
        << StepPhaseName(p.phase) << " node " << p.node;
  }
  // The largest unit's full parameters are live while it runs.
  EXPECT_EQ(At(EvaluatePeak(r.training, {}).category_max[kParam]),
            kShards + kRoot + 2 * kBlock);
  // All-gathers: the root once, each block in forward and in backward.
  EXPECT_EQ(sr.all_gather_bytes, kRoot + 2 * 2 * kBlock);
  EXPECT_EQ(sr.all_gather_calls, 1 + 2 * 2);
  EXPECT_EQ(sr.reduce_scatter_calls, 3);  // One per unit.
  // Gradients end as the rank's shards.
  EXPECT_EQ(At(r.training.timeline.back().live[kGrad]), kShards);
}

// FSDP accumulating 3 micro-batches (no no_sync(): the rank keeps only its
// gradient shards between them): every micro-batch gathers the root once and
// each block in its forward and its backward, and reduce-scatters each unit.
TEST_F(ShardingTest, FsdpAccumulationGathersAndReducesEveryMicroBatch) {
  const ShardingReport sr =
      RunFsdpBlocks(false, true, 4, 0, /*accumulate=*/3).training.sharding;
  EXPECT_EQ(sr.all_gather_bytes, 3 * (kRoot + 2 * 2 * kBlock));
  EXPECT_EQ(sr.all_gather_calls, 3 * (1 + 2 * 2));
  EXPECT_EQ(sr.reduce_scatter_bytes, 3 * (kRoot + 2 * kBlock));  // Unsharded.
  EXPECT_EQ(sr.reduce_scatter_calls, 3 * 3);
}

// SHARD_GRAD_OP on the model above (torch/distributed/fsdp/
// fully_sharded_data_parallel.py at torch 1.13: the post-forward frees a
// unit's parameters for FULL_SHARD only; _should_free_unsharded_flat_param in
// the post-backward): a block stays gathered from its forward to the end of
// its backward.
TEST_F(ShardingTest, FsdpShardGradOpKeepsAUnitFromItsForwardToItsBackward) {
  Report r = RunFsdpBlocks(false, /*reshard_after_forward=*/false);
  for (const TimelinePoint& p : r.training.timeline) {
    int64_t gathered = 0;
    if (p.phase == StepPhase::kForward) {
      // h.0 from node 0 on, h.1 from node 1 on; the loss (no node) after all.
      gathered = kRoot + (p.node == 0 ? kBlock : 2 * kBlock);
    } else if (p.phase == StepPhase::kBackward) {
      // Both until h.1's backward ends (node 1), then h.0 alone; the
      // backward's points without a node keep what the one before had.
      gathered = kRoot + (p.node == 0 ? kBlock : 2 * kBlock);
    }
    if (p.phase == StepPhase::kBackward && p.node < 0) continue;
    EXPECT_EQ(At(p.live[kParam]), kShards + gathered)
        << StepPhaseName(p.phase) << " node " << p.node;
  }
  // All-gathers: the root and each block once.
  EXPECT_EQ(r.training.sharding.all_gather_bytes, kRoot + 2 * kBlock);
  EXPECT_FALSE(r.training.sharding.reshard_after_forward);
}

// HYBRID_SHARD over 8 ranks in groups of 4: a rank holds what FSDP over 4
// does, and all-reduces its reduced gradient shard across the 2 groups.
TEST_F(ShardingTest, FsdpHybridShardIsFsdpOverTheGroup) {
  Report r = RunFsdpBlocks(false, true, /*world=*/8, /*shard_group=*/4);
  const ShardingReport& sr = r.training.sharding;
  EXPECT_EQ(sr.param_bytes, kShards);
  EXPECT_EQ(sr.largest_unit_bytes, kBlock);
  for (const TimelinePoint& p : r.training.timeline) {
    EXPECT_EQ(At(p.live[kParam]), kShards + GatheredFsdpBlocks(p))
        << StepPhaseName(p.phase) << " node " << p.node;
  }
  // float32 SGD: the gradient shards are the parameter shards' bytes.
  EXPECT_EQ(sr.all_reduce_bytes, kShards);
  EXPECT_EQ(sr.all_reduce_calls, 3);  // One per unit, across the groups.
  EXPECT_EQ(sr.all_gather_bytes, kRoot + 2 * 2 * kBlock);
  EXPECT_EQ(sr.shard_group, 4);
}

// FSDP's CPUOffload(offload_params=True) on the model above: the shards, the
// reduced gradients and the step are on the host; the device holds the
// gathered units and the gradients of the unit whose backward runs.
TEST_F(ShardingTest, ParameterOffloadKeepsOnlyTheGatheredUnits) {
  Report r = RunFsdpBlocks(true);
  for (const TimelinePoint& p : r.training.timeline) {
    EXPECT_EQ(At(p.live[kParam]), GatheredFsdpBlocks(p))
        << StepPhaseName(p.phase) << " node " << p.node;
  }
  // Nothing of the model's states stays on the device after the step.
  EXPECT_EQ(StatesAtEnd(r), 0);
  const ShardingReport& sr = r.training.sharding;
  EXPECT_TRUE(sr.offload_params);
  EXPECT_EQ(sr.param_bytes, 0);
  EXPECT_EQ(sr.host_param_bytes, kShards);
  // The shards' 144 elements in float32.
  EXPECT_EQ(sr.host_grad_bytes, 4 * kShards / 4);
  // Down the gradient shard; up every shard twice (forward, backward).
  EXPECT_EQ(sr.host_transfer_bytes, kShards + 2 * kShards);
}

TEST_F(ShardingTest, FsdpReduceScattersAUnitsGradientsWhenItsBackwardEnds) {
  Report r = RunFsdpBlocks(false);
  // At h.0's backward: the head's and h.1's gradients (256 + 1024 bytes) were
  // reduced when h.1's backward ended: ceil(1280 / 4) = 320; h.0's 1024 whole.
  int64_t at_h0 = -1;
  for (const TimelinePoint& p : r.training.timeline) {
    if (p.phase == StepPhase::kBackward && p.node == 0)
      at_h0 = std::max(at_h0, At(p.live[kGrad]));
  }
  EXPECT_EQ(at_h0, 320 + 1024);
}

TEST_F(ShardingTest, OptimizerTemporariesRunOnTheShard) {
  // Adam on W [64, 1000] float32 (64000 elements), N = 8: the update runs on
  // an 8000-element shard: denom's sqrt and quotient, 2 * 8000 * 4 bytes.
  Chain({1000, 64}, {"l"});
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  t.sharding.strategy = ShardStrategy::kZero1;
  t.sharding.world = 8;
  Report r = Run("1,1000", t);
  int64_t temp = 0;
  for (const TimelinePoint& p : r.training.timeline) {
    if (p.phase == StepPhase::kOptimizer)
      temp = std::max(temp, At(p.live[kTemp]));
  }
  EXPECT_EQ(temp, 2 * 8000 * 4);
}

TEST_F(ShardingTest, ARankStepsItsShardsOnly) {
  // W [3, 5], 15 elements. Adam's FLOPs and bytes are per element, so a rank
  // stepping e of the 15 elements does e / 15 of the whole step's.
  Chain({5, 3}, {"l"});
  AnalysisOptions opts;
  opts.moved_bytes = true;
  opts.training.optimizer = OptimizerKind::kAdam;
  opts.training.sharding.persistence_threshold = 0;
  const Report whole = AnalyzeBuiltGraph(opts, "2,5");
  const int64_t flops = At(whole.training.flops_optimizer);
  const int64_t bytes = At(whole.training.optimizer_bytes);
  EXPECT_EQ(flops, 12 * 15);  // Adam: 12 FLOPs per element.
  ASSERT_GT(bytes, 0);
  EXPECT_TRUE(whole.training.rank_step_tensors.empty());
  struct Case {
    ShardStrategy strategy;
    int64_t elements;  // One rank's.
  };
  // ZeRO-1/2/3 over N = 4: one flat partition of ceil(15 / 4) = 4 elements;
  // DDP steps the whole parameter.
  for (const Case& c :
       {Case{ShardStrategy::kZero1, 4}, Case{ShardStrategy::kZero2, 4},
        Case{ShardStrategy::kZero3, 4}, Case{ShardStrategy::kDdp, 15}}) {
    opts.training.sharding.strategy = c.strategy;
    opts.training.sharding.world = 4;
    const Report r = AnalyzeBuiltGraph(opts, "2,5");
    const TrainingReport& tr = r.training;
    SCOPED_TRACE(std::string(ShardStrategyName(c.strategy)));
    EXPECT_EQ(At(tr.flops_optimizer) * 15, flops * c.elements);
    // NB: Adam's `step` is one scalar per tensor, not per element: the
    // share is within a byte (rounded down).
    EXPECT_EQ(At(tr.optimizer_bytes), bytes * c.elements / 15);
    // The forward and backward are the whole micro-batch's on every rank.
    EXPECT_EQ(At(tr.flops_step) - At(tr.flops_optimizer),
              At(whole.training.flops_step) - flops);
    if (c.strategy == ShardStrategy::kDdp) {
      EXPECT_TRUE(tr.rank_step_tensors.empty());
    } else {
      EXPECT_THAT(tr.rank_step_tensors, ::testing::ElementsAre(4));
    }
  }
}

TEST_F(ShardingTest, FsdpStepsOneFlatShardPerUnit) {
  // kShards' model (above): FlatParameters of the root (head, 64 elements)
  // and of h.0 and h.1 (256 each), each sharded over N = 4.
  Report r = RunFsdpBlocks(false);
  EXPECT_THAT(r.training.rank_step_tensors,
              ::testing::ElementsAre(64 / 4, 256 / 4, 256 / 4));
}

TEST_F(ShardingTest, MasterWeightsAloneAddFloat32CopiesAndStates) {
  // Adam with masters on W [64, 1000] in bfloat16: 4 (master) + 8 (moments)
  // bytes per element, + 4 for the step, with no sharding.
  Chain({1000, 64}, {"l"});
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  t.master_weights = true;
  Report r = Run("1,1000:bfloat16", t, DType::kBFloat16);
  EXPECT_EQ(At(r.training.timeline.front().live[kOpt]), 12 * 64000 + 4);
  EXPECT_EQ(r.training.sharding.strategy, ShardStrategy::kNone);
}

TEST_F(ShardingTest, BadOptionsAreErrors) {
  Chain({8, 4}, {"l"});
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "2,8"));
  opts.training.sharding.strategy = ShardStrategy::kFsdp;
  opts.training.sharding.world = 2;
  opts.training.sharding.fsdp_unit = "(";
  auto r = Analyze(b_.graph(), rules_, ctx_, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("StepConfig.fsdp_unit '('"));
  opts.training.sharding.fsdp_unit = "blocks";
  opts.training.sharding.world = 0;
  r = Analyze(b_.graph(), rules_, ctx_, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("StepConfig.world 0"));
  EXPECT_FALSE(ParseShardStrategy("zero4").ok());
  EXPECT_EQ(*ParseShardStrategy("fsdp"), ShardStrategy::kFsdp);
}

}  // namespace
}  // namespace torchcost
