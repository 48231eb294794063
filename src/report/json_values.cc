#include "report/json_values.h"

#include <cstdint>
#include <limits>

#include "report/format.h"

namespace torchcost::report {

nlohmann::ordered_json JsonInteger(__int128 v) {
  if (v >= std::numeric_limits<int64_t>::min() &&
      v <= std::numeric_limits<int64_t>::max()) {
    return static_cast<int64_t>(v);
  }
  if (v > 0 &&
      v <= static_cast<__int128>(std::numeric_limits<uint64_t>::max())) {
    return static_cast<uint64_t>(v);
  }
  return IntText(v);
}

nlohmann::ordered_json JsonSymbolic(const sym::Expr& e,
                                    const sym::Bindings& bindings) {
  nlohmann::ordered_json j;
  j["expr"] = e.ToString();
  auto v = TryEvaluate(e, bindings);
  j["value"] = v ? JsonInteger(*v) : nlohmann::ordered_json(nullptr);
  return j;
}

nlohmann::ordered_json JsonUntimed(const std::string& untimed) {
  return untimed.empty() ? nlohmann::ordered_json(nullptr)
                         : nlohmann::ordered_json(untimed);
}

nlohmann::ordered_json JsonStepRate(const StepRate& rate) {
  return {{"step_seconds", rate.step_seconds},
          {"items_per_second", rate.items_per_second},
          {"unit", rate.items_unit},
          {"mfu", rate.mfu},
          {"communication_untimed", JsonUntimed(rate.communication_untimed)}};
}

nlohmann::ordered_json JsonGenerationRate(double prefill_seconds,
                                          double decode_step_seconds,
                                          double tokens_per_second,
                                          const std::string& untimed) {
  return {{"prefill_seconds", prefill_seconds},
          {"decode_step_seconds", decode_step_seconds},
          {"tokens_per_second", tokens_per_second},
          {"communication_untimed", JsonUntimed(untimed)}};
}

}  // namespace torchcost::report
