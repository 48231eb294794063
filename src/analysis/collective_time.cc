#include "analysis/collective_time.h"

#include <algorithm>
#include <string>

namespace torchcost::analysis {
namespace {

// One NCCL protocol of the ring algorithm, from NCCL's tuner
// (src/graph/tuning.cc at 5067397c2676d5aed50042fc39e5c8ee96eb0027):
// microseconds of latency (baseLatencies[RING]; hwLatencies[NVLINK][RING] or
// [PCI][RING] per step within a node; hwLatencies[NET][RING], or [NET][TREE]
// with one rank per node, per step between nodes; getNetOverhead's 1 us, x 3
// for Simple, at least per step on a ring that leaves the node) and its share
// of the bus bandwidth ("busBw * .5", "busBw * 0.92").
struct NcclProtocol {
  double base_us, nvlink_step_us, pcie_step_us, net_step_us,
      net_one_per_node_step_us, net_overhead_us, bandwidth_share;
  bool nvlink_only;  // LL128: "pEnable &= (graphs[a]->typeIntra <= PATH_NVB)".
  bool capped;       // LL: "busBw = std::min(llMaxBw, busBw * .5)".
};
constexpr NcclProtocol kNcclProtocols[] = {
    {6.6, 0.6, 1.0, 2.7, 5.0, 1.0, 0.5, false, true},      // LL
    {14.0, 1.9, 2.5, 4.0, 8.5, 1.0, 0.92, true, false},    // LL128
    {8.4, 3.4, 5.7, 14.0, 14.0, 3.0, 1.0, false, false}};  // Simple

// NCCL's cap on LL's bus bandwidth, bytes per second (llMaxBws, GB/s): within
// a node by the GPU's architecture (Volta, Ampere, Hopper, Blackwell: 39,
// 87.7, 141, 282); across nodes by the host's CPU, here an Intel one (2
// nodes: 39, more: 20.4; NB: an AMD host's are 22.5 and 19). 0: no cap (the
// compute capability unknown).
double LlMaxBandwidth(const Interconnect& net, int nodes) {
  if (nodes > 1) return (nodes == 2 ? 39.0 : 20.4) * 1e9;
  const int cc = net.compute_capability;
  if (cc >= 100) return 2 * 141.0e9;
  if (cc >= 90) return 141.0e9;
  if (cc >= 80) return 87.7e9;
  if (cc > 0) return 39.0e9;
  return 0;
}

}  // namespace

double RingTraffic(CollectiveKind kind, double payload, int ranks) {
  if (ranks <= 1) return 0;
  const double n = ranks;
  return (kind == CollectiveKind::kAllReduce ? 2 : 1) * (n - 1) / n * payload;
}

double NcclCallSeconds(CollectiveKind kind, double payload, int ranks, int span,
                       const Interconnect& net, std::string* untimed) {
  if (!(payload > 0) || ranks <= 1) return 0;
  const double bandwidth = GroupBandwidth(span, net, untimed);
  if (!(bandwidth > 0)) return 0;
  const bool all_reduce = kind == CollectiveKind::kAllReduce;
  // Ring steps: 2 (n - 1) for an all-reduce, n - 1 otherwise; of them, those
  // that cross between nodes: 2 (nodes - 1) for an all-reduce, nodes - 1.
  const int steps = (all_reduce ? 2 : 1) * (ranks - 1);
  const int node_gpus = std::max(net.node_gpus, 1);
  const int nodes = std::min(ranks, (span + node_gpus - 1) / node_gpus);
  const int between = nodes == 1 ? 0 : (all_reduce ? 2 : 1) * (nodes - 1);
  const bool one_per_node = nodes == ranks && nodes > 1;
  const double traffic = RingTraffic(kind, payload, ranks);
  const bool pcie = net.link_type == LinkType::kPcie;
  const double ll_max = LlMaxBandwidth(net, nodes);
  double best = 0;
  for (const NcclProtocol& p : kNcclProtocols) {
    if (pcie && p.nvlink_only) continue;
    const double step_us = pcie ? p.pcie_step_us : p.nvlink_step_us;
    const double within =
        nodes > 1 ? std::max(step_us, p.net_overhead_us) : step_us;
    const double between_us =
        one_per_node ? p.net_one_per_node_step_us : p.net_step_us;
    double share = p.bandwidth_share * bandwidth;
    if (p.capped && ll_max > 0) share = std::min(share, ll_max);
    // latency + traffic / (share x bandwidth).
    const double seconds =
        1e-6 * (p.base_us + (steps - between) * within + between * between_us) +
        traffic / share;
    if (best == 0 || seconds < best) best = seconds;
  }
  return best;
}

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
  // `calls` NCCL calls of `kind` sharing `bytes` among `ranks` ranks placed
  // among `span` consecutive ones.
  auto seconds = [&](CollectiveKind kind, int64_t bytes, int calls, int ranks,
                     int span) {
    const int n = std::max(calls, 1);
    return n * NcclCallSeconds(kind, static_cast<double>(bytes) / n, ranks,
                               span, net, &out.untimed);
  };
  const int group = s.shard_group > 0 ? s.shard_group : s.world;
  const int64_t gathered = s.all_gather_bytes - s.after_step_all_gather_bytes;
  switch (s.strategy) {
    case ShardStrategy::kNone:
      break;
    case ShardStrategy::kDdp:
      out.backward = seconds(CollectiveKind::kAllReduce, s.all_reduce_bytes,
                             s.all_reduce_calls, s.world, s.world);
      break;
    case ShardStrategy::kZero1:
    case ShardStrategy::kZero2:
      out.backward =
          seconds(CollectiveKind::kReduceScatter, s.reduce_scatter_bytes,
                  s.reduce_scatter_calls, s.world, s.world);
      break;
    case ShardStrategy::kZero3:
    case ShardStrategy::kFsdp:
      // NB: HYBRID_SHARD reduce-scatters and gathers within its group of
      // consecutive ranks and all-reduces the shards across the world / group
      // groups, one rank of each, spread over the world.
      out.forward_backward =
          seconds(CollectiveKind::kAllGather, gathered, s.all_gather_calls,
                  group, group) +
          seconds(CollectiveKind::kReduceScatter, s.reduce_scatter_bytes,
                  s.reduce_scatter_calls, group, group) +
          seconds(CollectiveKind::kAllReduce, s.all_reduce_bytes,
                  s.all_reduce_calls, s.world / group, s.world);
      break;
  }
  out.after_step = seconds(CollectiveKind::kAllGather,
                           s.after_step_all_gather_bytes, 1, s.world, s.world);
  return out;
}

}  // namespace torchcost::analysis
