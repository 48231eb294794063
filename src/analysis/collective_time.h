// The time of NCCL's calls over the GPUs' interconnect, as its tuner predicts
// a ring: one call's (a graph's collectives), those of one data-parallel
// rank's training step (DDP, ZeRO, FSDP), and the bandwidth a group of ranks
// has.
#ifndef TORCHCOST_SRC_ANALYSIS_COLLECTIVE_TIME_H_
#define TORCHCOST_SRC_ANALYSIS_COLLECTIVE_TIME_H_

#include <string>

#include "torchcost/collective.h"
#include "torchcost/gpu.h"
#include "torchcost/sharding.h"

namespace torchcost::analysis {

// Seconds of one rank's collectives per step, by when they run.
struct CollectiveSeconds {
  // Beside the backward: DDP's all-reduce, ZeRO-1/2's reduce-scatter.
  double backward = 0;
  // Beside the forward and backward: ZeRO-3's and FSDP's gathers and
  // reduce-scatters, HYBRID_SHARD's all-reduce across the groups.
  double forward_backward = 0;
  // After the optimizer step, alone: ZeRO-1/2's gather of the updated
  // parameters, ZeRO-3's of its persistent ones.
  double after_step = 0;
  // Why a collective is not timed (its seconds are then 0); empty if all are.
  std::string untimed;
};

// Returns the seconds of the collectives `s` reports over `net`: each payload
// split evenly among its calls (ShardingReport's *_calls), each call timed by
// NcclCallSeconds.
CollectiveSeconds TimeCollectives(const ShardingReport& s,
                                  const Interconnect& net);

// Returns the bytes one rank sends in a ring collective of `kind` on `payload`
// bytes (CollectiveCall) among `ranks` ranks: 2 (n - 1) / n of it for an
// all-reduce (a reduce-scatter, then an all-gather), (n - 1) / n for a
// reduce-scatter, an all-gather or an all-to-all (all but its own share).
double RingTraffic(CollectiveKind kind, double payload, int ranks);

// Returns the seconds of one NCCL call of `kind` on `payload` bytes among
// `ranks` ranks placed among `span` consecutive ones (`ranks` itself for a
// group of consecutive ranks) over `net`, as NCCL's tuner predicts a ring
// (src/graph/tuning.cc): the fastest of its protocols LL, LL128 and Simple,
// each a latency (a base, plus one per ring step) and the RingTraffic over the
// protocol's share of the bandwidth (GroupBandwidth of the span); 0, with why
// in `*untimed`, where the bandwidth is unknown. NB: an all-to-all (NCCL's
// point-to-point sends) is timed as an all-gather.
double NcclCallSeconds(CollectiveKind kind, double payload, int ranks, int span,
                       const Interconnect& net, std::string* untimed);

// Returns the bandwidth, in bytes per second, of a collective among `group`
// consecutive ranks over `net`: the node's link within a node, else the
// slower of it and the network; 0, with why in `*untimed` (if it is empty),
// where it is unknown.
double GroupBandwidth(int group, const Interconnect& net, std::string* untimed);

}  // namespace torchcost::analysis

#endif  // TORCHCOST_SRC_ANALYSIS_COLLECTIVE_TIME_H_
