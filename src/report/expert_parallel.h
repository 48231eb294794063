// The expert-parallel block of the reports: the all-to-all payloads of a
// mixture of experts built with ep > 1 (torchcost::all_to_all nodes), per MoE
// layer and per step, forward and backward.
#ifndef TORCHCOST_SRC_REPORT_EXPERT_PARALLEL_H_
#define TORCHCOST_SRC_REPORT_EXPERT_PARALLEL_H_

#include <nlohmann/json.hpp>
#include <string>

#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/sym.h"

namespace torchcost::report {

// One rank's all-to-all payloads (bytes of the tensors it sends; balanced
// routing: it receives as many).
struct AllToAll {
  // The expert-parallel degree (0: no all-to-all in the graph).
  int world = 0;
  int64_t layers = 0;  // MoE layers (dispatch calls).
  // Forward payloads of one MoE layer (its first dispatch and combine).
  sym::Expr dispatch, combine;
  sym::Expr forward;  // Every all-to-all of the forward.
  // The backward's reverse all-to-alls of the gradients (0 for inference).
  sym::Expr backward;
};

// Returns the payloads of the graph's torchcost::all_to_all nodes.
AllToAll CollectAllToAll(const ir::Graph& graph, const Report& report);

// Returns the text block ("Expert parallelism: ep=4 ..."), or "" without
// all-to-alls.
std::string RenderExpertParallel(const AllToAll& a,
                                 const sym::Bindings& bindings);

// Returns the JSON "expert_parallel" object (docs/json-schema.md); null without
// all-to-alls.
nlohmann::ordered_json ExpertParallelJson(const AllToAll& a,
                                          const sym::Bindings& bindings);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_EXPERT_PARALLEL_H_
