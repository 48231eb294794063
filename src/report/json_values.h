// The report's exact numbers as JSON values, shared by its JSON documents (the
// analysis report, the generation report, the sweep, the comparison).
#ifndef TORCHCOST_SRC_REPORT_JSON_VALUES_H_
#define TORCHCOST_SRC_REPORT_JSON_VALUES_H_

#include <nlohmann/json.hpp>
#include <string>

#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost::report {

// Returns `v` as a JSON number where it fits int64 or uint64, else as its
// decimal text (JSON numbers past 64 bits lose digits in most readers).
nlohmann::ordered_json JsonInteger(__int128 v);

// Returns {"expr": the canonical text of `e`, "value": its value under
// `bindings` (JsonInteger) or null where a symbol is unbound}.
nlohmann::ordered_json JsonSymbolic(const sym::Expr& e,
                                    const sym::Bindings& bindings);

// Returns why a collective is not timed (TimeReport::communication_untimed),
// or null where every one is.
nlohmann::ordered_json JsonUntimed(const std::string& untimed);

// Returns a training sweep point's or comparison row's time:
// {"step_seconds", "items_per_second", "unit", "mfu", "communication_untimed"
// (JsonUntimed)}.
nlohmann::ordered_json JsonStepRate(const StepRate& rate);

// Returns a generation sweep point's or comparison row's time:
// {"prefill_seconds", "decode_step_seconds", "tokens_per_second",
// "communication_untimed" (JsonUntimed)}.
nlohmann::ordered_json JsonGenerationRate(double prefill_seconds,
                                          double decode_step_seconds,
                                          double tokens_per_second,
                                          const std::string& untimed);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_JSON_VALUES_H_
