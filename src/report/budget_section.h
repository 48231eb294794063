// A BudgetAnswer as the reports show it: one line of text, or a JSON object.
#ifndef TORCHCOST_SRC_REPORT_BUDGET_SECTION_H_
#define TORCHCOST_SRC_REPORT_BUDGET_SECTION_H_

#include <nlohmann/json.hpp>
#include <string>

#include "torchcost/budget.h"
#include "torchcost/status.h"

namespace torchcost::report {

// Returns the question a report's renderings ask: Report::budget_bytes, with
// Report::budget_symbol searched unless `search` is false (a sweep's point).
BudgetQuestion QuestionOf(const Report& report, bool search = true);

// Returns "Budget 24.00 GiB: fits at B=8 (...); the largest B that fits: 13",
// newline-terminated; an error's message after "Budget SIZE: ".
std::string BudgetText(int64_t budget_bytes,
                       const Result<BudgetAnswer>& answer);

// Returns the JSON object of an answer (docs/json-schema.md,
// training.memory.budget), or {"bytes", "error"}.
nlohmann::ordered_json BudgetJson(int64_t budget_bytes,
                                  const Result<BudgetAnswer>& answer);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_BUDGET_SECTION_H_
