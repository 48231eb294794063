// Names of the links between a node's GPUs.
#include <iterator>
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
  for (size_t i = 0; i < std::size(kLinkTypeNames); ++i) {
    if (kLinkTypeNames[i] == text) return static_cast<LinkType>(i);
  }
  return Status::InvalidArgument("unknown link type '" + std::string(text) +
                                 "' (nvlink, pcie)");
}

}  // namespace torchcost
