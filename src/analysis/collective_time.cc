#include "analysis/collective_time.h"

#include <algorithm>
#include <string>

namespace torchcost::analysis {
namespace {

// A collective's kind: how many times its payload crosses a rank's link.
enum class Collective { kAllReduce, kReduceScatter, kAllGather };

// Times collectives over one interconnect, noting the first it cannot time.
class RingTimer {
 public:
  explicit RingTimer(const Interconnect& net, std::string* untimed)
      : net_(net), untimed_(untimed) {}

  // Returns the seconds of a collective of `bytes` over `ranks` ranks placed
  // among `span` consecutive ones (the ranks a ring's members lie within).
  double Seconds(Collective c, double bytes, int ranks, int span) {
    if (!(bytes > 0) || ranks <= 1) return 0;
    const double bandwidth = GroupBandwidth(span, net_, untimed_);
    if (!(bandwidth > 0)) return 0;
    // Ring traffic per rank: 2 (n - 1) / n of the payload for an all-reduce
    // (a reduce-scatter, then an all-gather), (n - 1) / n for either half.
    const double n = ranks;
    const double traffic = (c == Collective::kAllReduce ? 2 : 1) * (n - 1) / n;
    return traffic * bytes / bandwidth;
  }

 private:
  const Interconnect& net_;
  std::string* untimed_;
};

}  // namespace

double GroupBandwidth(int group, const Interconnect& net,
                      std::string* untimed) {
  auto note = [&](const std::string& why) {
    if (untimed->empty()) *untimed = why;
    return 0.0;
  };
  if (group <= net.node_gpus) {
    if (net.link > 0) return net.link;
    return note(
        "the GPU's link bandwidth is unknown (no link_gbs in its table)");
  }
  if (net.network > 0)
    return net.link > 0 ? std::min(net.link, net.network) : net.network;
  return note("the collectives span " + std::to_string(group) +
              " ranks, over " + std::to_string(net.node_gpus) +
              " GPUs per node, and the network's bandwidth is not given");
}

CollectiveSeconds TimeCollectives(const ShardingReport& s,
                                  const Interconnect& net) {
  CollectiveSeconds out;
  if (s.world <= 1) return out;
  RingTimer ring(net, &out.untimed);
  const int group = s.shard_group > 0 ? s.shard_group : s.world;
  const double gathered =
      static_cast<double>(s.all_gather_bytes - s.after_step_all_gather_bytes);
  switch (s.strategy) {
    case ShardStrategy::kNone:
      break;
    case ShardStrategy::kDdp:
      out.backward = ring.Seconds(Collective::kAllReduce,
                                  static_cast<double>(s.all_reduce_bytes),
                                  s.world, s.world);
      break;
    case ShardStrategy::kZero1:
    case ShardStrategy::kZero2:
      out.backward = ring.Seconds(Collective::kReduceScatter,
                                  static_cast<double>(s.reduce_scatter_bytes),
                                  s.world, s.world);
      break;
    case ShardStrategy::kZero3:
    case ShardStrategy::kFsdp:
      // NB: HYBRID_SHARD reduce-scatters and gathers within its group of
      // consecutive ranks and all-reduces the shards across the world / group
      // groups, one rank of each, spread over the world.
      out.forward_backward =
          ring.Seconds(Collective::kAllGather, gathered, group, group) +
          ring.Seconds(Collective::kReduceScatter,
                       static_cast<double>(s.reduce_scatter_bytes), group,
                       group) +
          ring.Seconds(Collective::kAllReduce,
                       static_cast<double>(s.all_reduce_bytes), s.world / group,
                       s.world);
      break;
  }
  out.after_step = ring.Seconds(
      Collective::kAllGather,
      static_cast<double>(s.after_step_all_gather_bytes), s.world, s.world);
  return out;
}

}  // namespace torchcost::analysis
