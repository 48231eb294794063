// Names of the links between a node's GPUs.
#include <string>

#include "torchcost/gpu.h"

namespace torchcost {
namespace {

constexpr std::string_view kLinkTypeNames[] = {"nvlink", "pcie"};

}  // namespace

std::string_view LinkTypeName(LinkType t) {
  return kLinkTypeNames[static_cast<int>(t)];
}

Result<LinkType> ParseLinkType(std::string_view text) {
  for (int i = 0; i < 2; ++i) {
    if (kLinkTypeNames[i] == text) return static_cast<LinkType>(i);
  }
  return Status::InvalidArgument("unknown link type '" + std::string(text) +
                                 "' (nvlink, pcie)");
}

}  // namespace torchcost
