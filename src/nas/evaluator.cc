// CostsOf and the Evaluator: symbolic totals compiled to one flat program.
#include "torchcost/evaluator.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "nas/dominance.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

// params, trainable, flops forward, flops backward.
constexpr int kFixedOutputs = 4;

bool FitsInt64(__int128 v) {
  return v >= std::numeric_limits<int64_t>::min() &&
         v <= std::numeric_limits<int64_t>::max();
}

}  // namespace

Result<SymbolicCosts> CostsOf(const Report& report) {
  SymbolicCosts c;
  c.params = report.params;
  c.trainable_params = report.trainable_params;
  c.flops_forward = report.training.flops_forward;
  c.flops_backward = report.training.flops_backward;
  const PeakInfo peak =
      EvaluatePeak(report.training, {}, /*category_max=*/false);
  if (!peak.error.empty()) return Status::OutOfRange(peak.error);
  c.peak_candidates = peak.candidates;
  if (c.peak_candidates.empty()) c.peak_candidates.push_back(peak.peak);
  return c;
}

Result<Evaluator> Evaluator::Compile(const SymbolicCosts& costs,
                                     const std::vector<std::string>& symbols) {
  std::vector<sym::Expr> exprs = {costs.params, costs.trainable_params,
                                  costs.flops_forward, costs.flops_backward};
  // NB: candidates dominated for every value at or above the symbols' lower
  // bounds never decide the max.
  for (int i : nas::UndominatedCandidates(costs.peak_candidates))
    exprs.push_back(costs.peak_candidates[i]);
  if (costs.peak_candidates.empty()) exprs.push_back(sym::Expr(0));
  Result<sym::Program> program = sym::Program::Compile(exprs, symbols);
  if (!program.ok())
    return Status::InvalidArgument("evaluator: " + program.status().message());
  Evaluator e;
  e.symbols_ = symbols;
  e.program_ = std::move(program).value();
  e.num_peak_ = exprs.size() - kFixedOutputs;
  return e;
}

void Evaluator::Evaluate(const int64_t* values, size_t count,
                         CandidateCosts* out) const {
  const size_t k = symbols_.size();
  const size_t n = program_.num_outputs();
  // NB: one buffer per thread, so a warm batch never allocates.
  thread_local std::vector<__int128> results;
  thread_local std::vector<int64_t> results64;
  if (results.size() < n) results.resize(n);
  if (results64.size() < n) results64.resize(n);
  for (size_t i = 0; i < count; ++i) {
    CandidateCosts& c = out[i];
    c = CandidateCosts();
    // Checked int64 first; on overflow the exact 128-bit program decides.
    if (program_.Run64(values + i * k, results64.data())) {
      int64_t peak = results64[kFixedOutputs];
      for (size_t j = kFixedOutputs + 1; j < n; ++j)
        peak = results64[j] > peak ? results64[j] : peak;
      c.params = results64[0];
      c.trainable_params = results64[1];
      c.flops_forward = results64[2];
      c.flops_backward = results64[3];
      c.peak_bytes = peak;
      c.ok = true;
      continue;
    }
    if (!program_.Run(values + i * k, results.data()).ok()) continue;
    // The peak is the largest candidate moment.
    __int128 peak = results[kFixedOutputs];
    for (size_t j = kFixedOutputs + 1; j < n; ++j)
      peak = results[j] > peak ? results[j] : peak;
    bool fits = FitsInt64(peak);
    for (int j = 0; j < kFixedOutputs; ++j)
      fits = fits && FitsInt64(results[j]);
    if (!fits) continue;
    c.params = static_cast<int64_t>(results[0]);
    c.trainable_params = static_cast<int64_t>(results[1]);
    c.flops_forward = static_cast<int64_t>(results[2]);
    c.flops_backward = static_cast<int64_t>(results[3]);
    c.peak_bytes = static_cast<int64_t>(peak);
    c.ok = true;
  }
}

CandidateCosts Evaluator::Evaluate(const std::vector<int64_t>& values) const {
  CandidateCosts c;
  if (values.size() != symbols_.size()) return c;
  Evaluate(values.data(), 1, &c);
  return c;
}

}  // namespace torchcost
