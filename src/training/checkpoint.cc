#include "training/checkpoint.h"

#include <algorithm>
#include <map>
#include <regex>
#include <string>

#include "passes/attention_core.h"
#include "passes/user_regex.h"

namespace torchcost::training {
namespace {

using passes::AttentionCore;
using passes::FindAttentionCores;

// Returns whether a module name is an index: "3", or "encoder_layer_3".
bool IsIndexName(const std::string& name) {
  size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  return i < name.size() && (i == 0 || name[i - 1] == '_');
}

// Returns, per scope, whether some node lies in its subtree.
std::vector<bool> ScopesWithNodes(const ir::Graph& g) {
  std::vector<bool> has(g.scopes.size(), false);
  for (const ir::Node& n : g.nodes) {
    for (int s = n.scope; s >= 0 && !has[s]; s = g.scopes[s].parent)
      has[s] = true;
  }
  return has;
}

// Megatron's selective recomputation: one segment per attention core.
Result<std::vector<CheckpointSegment>> SelectiveSegments(
    const ir::Graph& g, const TrainingOptions& options) {
  if (options.checkpoint_group != 1) {
    return Status::InvalidArgument(
        "StepConfig.checkpoint selective: StepConfig.checkpoint_group " +
        std::to_string(options.checkpoint_group) +
        " does not apply (each attention core is its own segment)");
  }
  std::vector<CheckpointSegment> segments;
  for (const AttentionCore& core : FindAttentionCores(g)) {
    CheckpointSegment seg;
    seg.first = core.first;
    seg.last = core.last;
    seg.module = g.scopes[g.nodes[core.product].scope].path;
    seg.calls = 1;
    segments.push_back(std::move(seg));
  }
  if (segments.empty()) {
    return Status::InvalidArgument(
        "StepConfig.checkpoint selective: no attention core found (a Q K^T "
        "product reaching a softmax through "
        "scale, mask and casts, whose output reaches an A V product through "
        "dropout and casts; or a "
        "scaled_dot_product_attention node)");
  }
  return segments;
}

}  // namespace

std::vector<int> RepeatedBlocks(const ir::Graph& g) {
  const std::vector<bool> has_nodes = ScopesWithNodes(g);
  std::vector<bool> candidate(g.scopes.size(), false);
  for (size_t s = 1; s < g.scopes.size(); ++s) {
    candidate[s] = has_nodes[s] && IsIndexName(g.scopes[s].name);
  }
  // Outermost candidates only, grouped by module type in order of first
  // appearance.
  std::map<std::string, std::vector<int>> by_type;
  std::vector<std::string> type_order;
  for (size_t s = 1; s < g.scopes.size(); ++s) {
    if (!candidate[s]) continue;
    bool nested = false;
    for (int p = g.scopes[s].parent; p > 0 && !nested; p = g.scopes[p].parent)
      nested = candidate[p];
    if (nested) continue;
    auto& members = by_type[g.scopes[s].type];
    if (members.empty()) type_order.push_back(g.scopes[s].type);
    members.push_back(static_cast<int>(s));
  }
  const std::vector<int>* best = nullptr;
  for (const std::string& t : type_order) {
    if (best == nullptr || by_type[t].size() > best->size()) best = &by_type[t];
  }
  return best ? *best : std::vector<int>();
}

Result<std::vector<CheckpointSegment>> FindCheckpointSegments(
    const ir::Graph& g, const TrainingOptions& options) {
  std::vector<CheckpointSegment> segments;
  if (options.checkpoint.empty()) return segments;
  const std::string flag = "StepConfig.checkpoint '" + options.checkpoint + "'";
  if (options.checkpoint_group < 1) {
    return Status::InvalidArgument("StepConfig.checkpoint_group " +
                                   std::to_string(options.checkpoint_group) +
                                   ": must be at least 1");
  }
  if (options.checkpoint == "selective") return SelectiveSegments(g, options);
  std::vector<bool> matched(g.scopes.size(), false);
  if (options.checkpoint == "blocks") {
    for (int s : RepeatedBlocks(g)) matched[s] = true;
  } else {
    std::regex re;
    try {
      re = passes::UserRegex(options.checkpoint);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument(
          flag + ": not a valid regular expression (" + e.what() + ")");
    }
    for (size_t s = 1; s < g.scopes.size(); ++s)
      matched[s] = std::regex_search(g.scopes[s].path, re);
  }
  // Each node's outermost matched module (0: none; the root never matches).
  const int n = static_cast<int>(g.nodes.size());
  std::vector<int> owner(n, 0);
  for (int ni = 0; ni < n; ++ni) {
    for (int s = g.nodes[ni].scope; s > 0; s = g.scopes[s].parent) {
      if (matched[s]) owner[ni] = s;
    }
  }
  // Calls: maximal runs of consecutive nodes with one owner.
  struct Call {
    int scope, first, last;
  };
  std::vector<Call> calls;
  for (int ni = 0; ni < n; ++ni) {
    if (owner[ni] == 0) continue;
    if (!calls.empty() && calls.back().scope == owner[ni] &&
        calls.back().last == ni - 1) {
      calls.back().last = ni;
    } else {
      calls.push_back({owner[ni], ni, ni});
    }
  }
  if (calls.empty()) {
    return Status::InvalidArgument(
        flag + (options.checkpoint == "blocks"
                    ? ": no repeated blocks found (modules named by an index, "
                      "such as h.0 or layers.3)"
                    : ": matches no module of the model (a regular "
                      "expression on module paths; 'blocks' checkpoints each "
                      "repeated block, as gradient_checkpointing_enable() "
                      "does; 'selective' the attention cores)"));
  }
  const size_t k = static_cast<size_t>(options.checkpoint_group);
  for (size_t i = 0; i < calls.size(); i += k) {
    const size_t end = std::min(calls.size(), i + k);
    CheckpointSegment seg;
    seg.first = calls[i].first;
    seg.last = calls[end - 1].last;
    seg.module = g.scopes[calls[i].scope].path;
    seg.calls = static_cast<int>(end - i);
    segments.push_back(std::move(seg));
  }
  return segments;
}

}  // namespace torchcost::training
