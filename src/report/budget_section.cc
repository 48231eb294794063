#include "report/budget_section.h"

#include "report/format.h"

namespace torchcost::report {
namespace {

// What needed_bytes measures.
const char* NeededWhat(const BudgetAnswer& a) {
  return a.allocator ? "the CUDA caching allocator's reserved peak + context"
                     : "the peak of tensor bytes; no allocator rounding, "
                       "fragmentation or CUDA context";
}

}  // namespace

BudgetQuestion QuestionOf(const Report& report, bool search) {
  BudgetQuestion q;
  q.budget_bytes = report.budget_bytes;
  q.symbol = search ? report.budget_symbol : "";
  return q;
}

std::string BudgetText(int64_t budget_bytes,
                       const Result<BudgetAnswer>& answer) {
  std::string out = "Budget " + Human(budget_bytes, Unit::kBytes) + ": ";
  if (!answer.ok()) return out + answer.status().message() + "\n";
  const BudgetAnswer& a = *answer;
  const std::string at =
      a.symbol.empty() ? "" : " at " + a.symbol + "=" + std::to_string(a.at);
  const std::string needed =
      HumanAndExact(a.needed_bytes, Unit::kBytes) + " (" + NeededWhat(a) + ")";
  if (!a.fits) {
    out += "does NOT fit" + at + ": it needs " + needed;
  } else if (a.releases > 0) {
    out += "fits" + at + " once the allocator releases its cached segments (" +
           std::to_string(a.releases) + (a.releases == 1 ? " time" : " times") +
           "); it would hold " + needed + " if nothing were released";
  } else {
    out += "fits" + at + ": it needs " + needed;
  }
  if (!a.symbol.empty()) {
    out += "; the largest " + a.symbol + " that fits: ";
    out += a.largest == 0 ? std::string("none (") + a.symbol + "=1 does not)"
           : a.search_stopped
               ? std::to_string(a.largest) + " or more (the search stops there)"
               : std::to_string(a.largest);
  }
  return out + "\n";
}

nlohmann::ordered_json BudgetJson(int64_t budget_bytes,
                                  const Result<BudgetAnswer>& answer) {
  using Json = nlohmann::ordered_json;
  if (!answer.ok())
    return {{"bytes", budget_bytes}, {"error", answer.status().message()}};
  const BudgetAnswer& a = *answer;
  Json j = {{"bytes", a.budget_bytes},
            {"fits", a.fits},
            {"needed_bytes", a.needed_bytes},
            {"decided_by", a.allocator ? "cuda_allocator" : "tensor_peak"},
            {"releases", a.releases}};
  if (a.symbol.empty()) {
    j["at"] = nullptr;
    j["largest"] = nullptr;
  } else {
    j["at"] = {{a.symbol, a.at}};
    j["largest"] = {{"symbol", a.symbol},
                    {"value", a.largest},
                    {"search_stopped", a.search_stopped}};
  }
  return j;
}

}  // namespace torchcost::report
