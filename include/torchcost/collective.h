// The collectives a graph's nodes run (a rule's `collectives:`): their kinds
// and payloads, which the time model takes over the GPUs' interconnect.
#ifndef TORCHCOST_COLLECTIVE_H_
#define TORCHCOST_COLLECTIVE_H_

#include <string_view>

#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost {

// A collective's kind, as NCCL names it.
enum class CollectiveKind : int {
  kAllReduce = 0,
  kReduceScatter,
  kAllGather,
  kAllToAll
};
inline constexpr int kNumCollectiveKinds = 4;
// Returns "all_reduce", "reduce_scatter", "all_gather", "all_to_all".
std::string_view CollectiveKindName(CollectiveKind k);
// Parses a name CollectiveKindName returns.
Result<CollectiveKind> ParseCollectiveKind(std::string_view name);

// One collective call. NB: the payload is the whole tensor's bytes: an
// all-reduce's tensor, a reduce-scatter's input, an all-gather's output, an
// all-to-all's tensor on one rank (nccl-tests' "size").
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  sym::Expr payload;
};

}  // namespace torchcost

#endif  // TORCHCOST_COLLECTIVE_H_
