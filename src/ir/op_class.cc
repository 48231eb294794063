#include "torchcost/op_class.h"

#include <string>

namespace torchcost {
namespace {

constexpr std::string_view kNames[kNumOpClasses] = {"matmul",    "attention",
                                                    "pointwise", "reduction",
                                                    "optimizer", "convolution"};

}  // namespace

std::string_view OpClassName(OpClass c) { return kNames[static_cast<int>(c)]; }

Result<OpClass> ParseOpClass(std::string_view name) {
  for (int i = 0; i < kNumOpClasses; ++i) {
    if (kNames[i] == name) return static_cast<OpClass>(i);
  }
  return Status::InvalidArgument(
      "unknown op class '" + std::string(name) +
      "' (matmul, attention, pointwise, reduction, optimizer, "
      "convolution)");
}

}  // namespace torchcost
