// BudgetEvaluator: whether a step or a whole generation fits a budget, from
// the peak's candidate moments, or from replays of the allocations through the
// CUDA caching allocator model limited to the budget.
#include "torchcost/budget.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "ir/int_math.h"
#include "report/peak_candidates.h"
#include "torchcost/generation_allocator.h"

namespace torchcost {
namespace {

using ir::ClampToInt64;

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// The largest v in [1, limit] with fits(v), or 0. NB: fits must not turn true
// again once false; doubling then bisecting finds the boundary in O(log v)
// calls.
template <typename Fits>
int64_t LargestByDoubling(Fits fits, int64_t limit) {
  if (limit < 1 || !fits(1)) return 0;
  int64_t lo = 1, hi = std::min<int64_t>(2, limit);  // fits(lo); hi unknown.
  for (;;) {
    if (!fits(hi)) break;
    if (hi == limit) return limit;
    lo = hi;
    hi = hi > limit / 2 ? limit : hi * 2;
  }
  while (hi - lo > 1) {  // fits(lo), !fits(hi).
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

// The largest v in [1, upper] with fits(v), or 0, where the answer is likely
// close to `upper`: steps of 1, 2, 4, ... down from it, then bisection. NB:
// a replay per call, so few calls where the allocator's rounding costs a few
// values of the symbol.
template <typename Fits>
int64_t LargestBelow(Fits fits, int64_t upper) {
  if (upper < 1) return 0;
  if (fits(upper)) return upper;
  int64_t bad = upper, good = 0;  // !fits(bad); fits(good) where good > 0.
  for (int64_t d = 1; bad > 1; d = d > upper / 2 ? upper : d * 2) {
    const int64_t v = std::max<int64_t>(upper - d, 1);
    if (fits(v)) {
      good = v;
      break;
    }
    bad = v;
  }
  if (good == 0) return 0;
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    (fits(mid) ? good : bad) = mid;
  }
  return good;
}

// One replay's outcome under a memory limit.
struct Replayed {
  std::string error;
  bool fits = false;
  int64_t releases = 0;
  int64_t device_peak = 0;  // Reserved + context, as far as it got.
};

}  // namespace

struct BudgetEvaluator::Impl {
  // One step: its report; a generation: the prefill's, then the decode's.
  std::vector<report::PeakCandidates> phases;
  std::vector<std::string> symbols;
  const std::optional<CudaAllocatorOptions>* allocator = nullptr;

  // The largest peak of tensor bytes over the phases, or nullopt if a symbol
  // is unbound or a value overflows.
  std::optional<__int128> TensorPeak(const sym::Bindings& b) const {
    std::optional<__int128> most;
    for (const report::PeakCandidates& p : phases) {
      auto v = p.At(b);
      if (!v) return std::nullopt;
      if (!most || v->first > *most) most = v->first;
    }
    return most;
  }

  // The allocations replayed with the segments limited to `limit` bytes.
  Replayed Replay(const sym::Bindings& b, int64_t limit) const {
    Replayed out;
    if (phases.size() == 2) {
      const GenerationAllocatorPeak w = EvaluateGenerationAllocator(
          phases[0].training(), phases[1].training(), b, limit);
      out.error = w.error;
      out.fits = w.out_of_memory_step < 0;
      out.releases = w.releases;
      out.device_peak = w.device_peak;
    } else {
      const AllocatorPeak a = EvaluateAllocator(phases[0].training(), b, limit);
      out.error = a.error;
      out.fits = a.out_of_memory_point < 0;
      out.releases = a.releases;
      out.device_peak = a.device_peak;
    }
    return out;
  }
};

BudgetEvaluator::BudgetEvaluator(const Report& report)
    : impl_(std::make_unique<Impl>()) {
  impl_->phases.emplace_back(report);
  impl_->symbols = report.symbols;
  impl_->allocator = &report.training.cuda_allocator;
}

BudgetEvaluator::BudgetEvaluator(const GenerationAnalysis& generation)
    : impl_(std::make_unique<Impl>()) {
  impl_->phases.reserve(2);
  impl_->phases.emplace_back(generation.prefill.report);
  impl_->phases.emplace_back(generation.decode.report);
  impl_->symbols = {"B", "S", "T"};
  impl_->allocator = &generation.decode.report.training.cuda_allocator;
}

BudgetEvaluator::~BudgetEvaluator() = default;
BudgetEvaluator::BudgetEvaluator(BudgetEvaluator&&) noexcept = default;
BudgetEvaluator& BudgetEvaluator::operator=(BudgetEvaluator&&) noexcept =
    default;

Result<BudgetAnswer> BudgetEvaluator::Answer(
    const sym::Bindings& bindings, const BudgetQuestion& question) const {
  const Impl& m = *impl_;
  if (question.budget_bytes <= 0)
    return Status::InvalidArgument(
        "BudgetQuestion.budget_bytes must be positive");
  for (const report::PeakCandidates& p : m.phases) {
    if (!p.error().empty()) return Status::OutOfRange(p.error());
  }
  BudgetAnswer out;
  out.budget_bytes = question.budget_bytes;
  const std::string& symbol = question.symbol;
  const bool search =
      !symbol.empty() &&
      std::find(m.symbols.begin(), m.symbols.end(), symbol) != m.symbols.end();
  sym::Bindings b = bindings;
  if (search) {
    out.symbol = symbol;
    out.at = b.emplace(symbol, 1).first->second;
  }
  const std::optional<__int128> tensor = m.TensorPeak(b);
  if (!tensor) {
    std::string missing;
    for (const std::string& s : m.symbols) {
      if (!b.count(s)) missing += (missing.empty() ? "" : ", ") + s;
    }
    return Status::InvalidArgument(
        "the budget needs the peak's value: bind every symbol" +
        (search ? " but " + symbol : std::string()) +
        " with StepConfig.bindings" +
        (missing.empty() ? std::string(" (a value overflows)")
                         : " (unbound: " + missing + ")"));
  }
  const int64_t budget = question.budget_bytes;
  // The bytes the segments may take: the budget less the context. NB: a budget
  // below the context leaves the segments nothing.
  const int64_t limit =
      m.allocator->has_value()
          ? std::max<int64_t>(budget - (*m.allocator)->context_bytes, 0)
          : 0;
  if (!m.allocator->has_value()) {
    out.needed_bytes = ClampToInt64(*tensor);
    out.fits = *tensor <= budget;
  } else {
    out.allocator = true;
    const Replayed r = m.Replay(b, limit);
    if (!r.error.empty()) return Status::InvalidArgument(r.error);
    out.fits = r.fits;
    out.releases = r.fits ? r.releases : 0;
    // Without releases the limited replay is the unlimited one.
    out.needed_bytes = r.fits && r.releases == 0
                           ? r.device_peak
                           : m.Replay(b, kUnlimited).device_peak;
  }
  if (!search) return out;
  sym::Bindings at = b;
  int64_t& value = at[symbol];
  auto tensor_fits = [&](int64_t v) {
    value = v;
    const std::optional<__int128> p = m.TensorPeak(at);
    return p && *p <= budget;
  };
  out.largest = LargestByDoubling(tensor_fits, question.search_limit);
  if (m.allocator->has_value()) {
    // NB: the allocator's blocks are never smaller than the tensors they
    // hold, so the tensor bytes' answer bounds the allocator's from above.
    auto replay_fits = [&](int64_t v) {
      value = v;
      const Replayed r = m.Replay(at, limit);
      return r.error.empty() && r.fits;
    };
    out.largest = LargestBelow(replay_fits, out.largest);
  }
  out.search_stopped = out.largest == question.search_limit;
  return out;
}

}  // namespace torchcost
