// The sharding block of the reports: the strategy, one rank's model states
// beside one device's, and the collectives' payload per step.
#ifndef TORCHCOST_SRC_REPORT_SHARDING_REPORT_H_
#define TORCHCOST_SRC_REPORT_SHARDING_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "torchcost/training.h"

namespace torchcost::report {

// Returns the text block ("Sharding: zero3 over 8 ranks ..."), or "" when the
// step is not sharded and has no master weights.
std::string RenderSharding(const TrainingReport& training);

// Returns the JSON "sharding" object (docs/json-schema.md).
nlohmann::ordered_json ShardingJson(const TrainingReport& training);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_SHARDING_REPORT_H_
