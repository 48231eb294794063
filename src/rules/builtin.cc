// The registry of C++ shape functions selected by `impl: NAME`: maps each name
// to its function in rules/impls.h.
#include "rules/builtin.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "rules/impls.h"
#include "rules/value.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules {
namespace {

struct Entry {
  std::string_view name;
  ImplFn fn;
};

// Wraps `Fn` so that sym::Error (overflow, a divisor not provably positive)
// becomes a Status instead of crossing the rule engine.
template <ImplFn Fn>
Status Guarded(ImplContext& c, std::vector<RValue>* outputs) {
  try {
    return Fn(c, outputs);
  } catch (const sym::Error& e) {
    return Status::InvalidArgument(e.what());
  }
}

// Sorted by name.
constexpr Entry kImpls[] = {
    {"broadcast", &Guarded<impl::Broadcast>},
    {"broadcast_bool", &Guarded<impl::BroadcastBool>},
    {"broadcast_float", &Guarded<impl::BroadcastFloat>},
    {"broadcast_inplace", &Guarded<impl::BroadcastInplace>},
    {"cat", &Guarded<impl::Cat>},
    {"chunk", &Guarded<impl::Chunk>},
    {"einsum", &Guarded<impl::Einsum>},
    {"expand", &Guarded<impl::Expand>},
    {"flatten", &Guarded<impl::Flatten>},
    {"index", &Guarded<impl::Index>},
    {"narrow", &Guarded<impl::Narrow>},
    {"pad", &Guarded<impl::Pad>},
    {"permute", &Guarded<impl::Permute>},
    {"reduce", &Guarded<impl::Reduce>},
    {"reduce_bool", &Guarded<impl::ReduceBool>},
    {"reduce_index", &Guarded<impl::ReduceIndex>},
    {"reduce_sum", &Guarded<impl::ReduceSum>},
    {"reduce_with_indices", &Guarded<impl::ReduceWithIndices>},
    {"sdpa_flash", &Guarded<impl::SdpaFlash>},
    {"select", &Guarded<impl::Select>},
    {"slice", &Guarded<impl::Slice>},
    {"split", &Guarded<impl::Split>},
    {"squeeze", &Guarded<impl::Squeeze>},
    {"stack", &Guarded<impl::Stack>},
    {"t", &Guarded<impl::T>},
    {"tensor_split", &Guarded<impl::TensorSplit>},
    {"to", &Guarded<impl::To>},
    {"transpose", &Guarded<impl::Transpose>},
    {"unbind", &Guarded<impl::Unbind>},
    {"unflatten", &Guarded<impl::Unflatten>},
    {"unsqueeze", &Guarded<impl::Unsqueeze>},
    {"upsample", &Guarded<impl::Upsample>},
    {"view", &Guarded<impl::View>},
};

}  // namespace

ImplFn FindImpl(std::string_view name) {
  for (const Entry& e : kImpls) {
    if (e.name == name) return e.fn;
  }
  return nullptr;
}

std::vector<std::string> ImplNames() {
  std::vector<std::string> names;
  for (const Entry& e : kImpls) names.emplace_back(e.name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace torchcost::rules
