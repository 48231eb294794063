#include "torchcost/collective.h"

#include <string>

namespace torchcost {
namespace {

constexpr std::string_view kCollectiveNames[kNumCollectiveKinds] = {
    "all_reduce", "reduce_scatter", "all_gather", "all_to_all"};

}  // namespace

std::string_view CollectiveKindName(CollectiveKind k) {
  return kCollectiveNames[static_cast<int>(k)];
}

Result<CollectiveKind> ParseCollectiveKind(std::string_view name) {
  for (int i = 0; i < kNumCollectiveKinds; ++i) {
    if (kCollectiveNames[i] == name) return static_cast<CollectiveKind>(i);
  }
  return Status::InvalidArgument(
      "unknown collective '" + std::string(name) +
      "' (all_reduce, reduce_scatter, all_gather, all_to_all)");
}

}  // namespace torchcost
