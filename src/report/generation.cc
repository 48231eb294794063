// The generation report: text section, JSON object and sweeps
// (generation_report.h).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "report/budget_section.h"
#include "report/format.h"
#include "report/json_values.h"
#include "report/text_sections.h"
#include "torchcost/budget.h"
#include "torchcost/generation_allocator.h"
#include "torchcost/generation_report.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using Json = nlohmann::ordered_json;
using report::HumanAndExact;
using report::JsonInteger;
using report::JsonSymbolic;
using report::TryEvaluate;
using report::Unit;

Json PeakJson(const GenerationPeak& p, const sym::Bindings& b) {
  Json j;
  j["peak_bytes"] = JsonSymbolic(p.peak, b);
  if (!p.decided) {
    j["at_peak"] = nullptr;
    return j;
  }
  j["at_peak"] = {{"param", JsonSymbolic(p.param, b)},
                  {"buffer", JsonSymbolic(p.buffer, b)},
                  {"act", JsonSymbolic(p.act, b)},
                  {"temp", JsonSymbolic(p.temp, b)},
                  {"oth", JsonSymbolic(p.other, b)},
                  {"kv_cache", JsonSymbolic(p.kv_cache, b)}};
  return j;
}

std::string PeakText(const GenerationPeak& p, const sym::Bindings& b) {
  std::string out = HumanAndExact(p.peak, b, Unit::kBytes);
  if (!p.decided) return out + " (its moment depends on unbound symbols)";
  auto part = [&](const char* name, const sym::Expr& e) {
    return std::string(name) + " " + HumanAndExact(e, b, Unit::kBytes);
  };
  return out + "\n      " + part("param", p.param) + ", " +
         part("buffer", p.buffer) + ", " + part("act", p.act) + "\n      " +
         part("temp", p.temp) + ", " + part("oth", p.other) + ", " +
         part("kv_cache", p.kv_cache);
}

// A phase's peak at many bindings: the timeline's distinct totals compiled
// once into a sym::Program, the peak being the largest of them at a point.
class PeakProgram {
 public:
  explicit PeakProgram(const StepAnalysis& phase) {
    std::vector<sym::Expr> totals;
    std::unordered_set<sym::Expr> seen;
    for (const TimelinePoint& p : phase.report.training.timeline) {
      if (seen.insert(p.total).second) totals.push_back(p.total);
    }
    symbols_ = sym::FreeSymbols(totals);
    Result<sym::Program> program = sym::Program::Compile(totals, symbols_);
    if (program.ok()) program_ = std::move(program).value();
    out_.resize(totals.size());
  }

  // Returns the peak at `b`; nullopt where a symbol is unbound or a total
  // overflows int64 (PhasePeak then gives the error).
  std::optional<int64_t> At(const sym::Bindings& b) {
    if (!program_) return std::nullopt;
    values_.clear();
    for (const std::string& name : symbols_) {
      auto it = b.find(name);
      if (it == b.end()) return std::nullopt;
      values_.push_back(it->second);
    }
    if (!program_->Run64(values_.data(), out_.data())) return std::nullopt;
    int64_t peak = 0;
    for (int64_t v : out_) peak = std::max(peak, v);
    return peak;
  }

 private:
  std::vector<std::string> symbols_;
  std::optional<sym::Program> program_;
  std::vector<int64_t> values_, out_;
};

// Where the decode FLOPs are not linear in the cache length: the prefill's
// plus the steps' sum, under `b`.
std::optional<__int128> SummedTotal(const GenerationAnalysis& g,
                                    const sym::Bindings& b) {
  if (!g.decode_flops_summed) return std::nullopt;
  Result<__int128> prefill = sym::Evaluate128(g.prefill_flops, b);
  if (!prefill.ok()) return std::nullopt;
  return *prefill + *g.decode_flops_summed;
}

// {"expr": null, "value": v}: a number summed at the bindings, with no closed
// form.
Json Summed(__int128 v) {
  Json j;
  j["expr"] = nullptr;
  j["value"] = JsonInteger(v);
  return j;
}

// The time section: the prefill, the decode steps, the whole call.
std::string TimeText(const GenerationTime& t) {
  using report::SecondsText;
  std::string out = "  Time   (" + report::TimeSourceLabel(t.source) + ")\n";
  out += "         prefill " + SecondsText(t.prefill_seconds) +
         " (to the first new token)\n";
  const bool decodes = t.decode_steps > 0;
  out += decodes ? "         decode, per token: first " +
                       SecondsText(t.first_step_seconds) + ", last " +
                       SecondsText(t.last_step_seconds) + "; T - 1 steps " +
                       SecondsText(t.decode_seconds) + "\n"
                 : "         decode: no step (T = 1: the prefill makes the one "
                   "new token)\n";
  out += fmt::format("         generate() {}: {} new tokens/s ({:.0f} = B x T)",
                     SecondsText(t.total_seconds),
                     report::RateText(t.tokens_per_second), t.new_tokens);
  if (decodes) {
    out += "; decode alone " + report::RateText(t.decode_tokens_per_second) +
           " tokens/s";
  }
  out += "\n";
  if (!t.communication_untimed.empty()) {
    out +=
        "         NB: lower bounds (tokens/s upper bounds): collectives not "
        "timed: " +
        t.communication_untimed + "\n";
  }
  return out;
}

Json TimeJson(const GenerationTime& t) {
  if (!t.present) return nullptr;
  return {
      {"source", t.source},
      {"prefill_seconds", t.prefill_seconds},
      {"decode_first_step_seconds", t.first_step_seconds},
      {"decode_last_step_seconds", t.last_step_seconds},
      {"decode_seconds", t.decode_seconds},
      {"decode_steps", t.decode_steps},
      {"total_seconds", t.total_seconds},
      {"new_tokens", t.new_tokens},
      {"tokens_per_second", t.tokens_per_second},
      {"decode_tokens_per_second", t.decode_tokens_per_second},
      {"communication_untimed", report::JsonUntimed(t.communication_untimed)}};
}

// The caching allocator model over each phase, and over the whole
// generation (nullopt without it).
struct PhaseAllocators {
  AllocatorPeak prefill, decode;
  // The larger phase's reserved peak plus the context.
  int64_t device_peak = 0;
  GenerationAllocatorPeak whole;
  std::string device;  // The GPU whose memory limits `whole`; empty: none.
};

// The bytes the allocator's segments may take on the GPU the generation is
// timed on: its memory (NB: the datasheet's GB read as GiB, as nvidia-smi's
// totals nearly are: 81920 MiB on an A100 80GB) less the context; unlimited
// without a GPU.
// NB: a calibration file's device measured without a GPU of the table has no
// memory size: no limit either.
int64_t MemoryLimit(const GenerationAnalysis& g) {
  if (!g.decode.timed_on || !g.decode.report.training.cuda_allocator ||
      g.decode.timed_on->gpu.memory_gb <= 0)
    return std::numeric_limits<int64_t>::max();
  const double gib = g.decode.timed_on->gpu.memory_gb;
  return static_cast<int64_t>(gib * (int64_t{1} << 30)) -
         g.decode.report.training.cuda_allocator->context_bytes;
}

std::optional<PhaseAllocators> Allocators(const GenerationAnalysis& g,
                                          const sym::Bindings& b) {
  if (!g.prefill.report.training.cuda_allocator) return std::nullopt;
  PhaseAllocators a;
  a.prefill = EvaluateAllocator(g.prefill.report.training, b);
  a.decode = EvaluateAllocator(g.decode.report.training, b);
  a.device_peak = std::max(a.prefill.device_peak, a.decode.device_peak);
  a.whole = EvaluateGenerationAllocator(
      g.prefill.report.training, g.decode.report.training, b, MemoryLimit(g));
  if (a.whole.memory_limit != std::numeric_limits<int64_t>::max())
    a.device = g.decode.timed_on->gpu.name;
  return a;
}

// "prefill" or "decode step j".
std::string StepName(int64_t step) {
  return step == 0 ? "prefill" : "decode step " + std::to_string(step);
}

std::string WholeGenerationText(const PhaseAllocators& a) {
  const GenerationAllocatorPeak& w = a.whole;
  std::string out =
      "         whole generate() (the prefill, then each decode step, the "
      "cache's blocks carried):\n";
  if (!w.error.empty()) return out + "           " + w.error + "\n";
  out += "           allocated " +
         HumanAndExact(w.allocated_peak, Unit::kBytes) + " at " +
         StepName(w.allocated_peak_step) + "; reserved " +
         HumanAndExact(w.reserved_peak, Unit::kBytes) + " at " +
         StepName(w.reserved_peak_step) + "; device (+ context) " +
         HumanAndExact(w.device_peak, Unit::kBytes) + "\n";
  if (a.device.empty()) {
    out +=
        "           NB: no device limit (name a GPU): past the device's "
        "memory PyTorch releases its cached segments instead\n";
  } else if (w.out_of_memory_step >= 0) {
    out += "           out of memory on " + a.device + " (" +
           HumanAndExact(w.memory_limit, Unit::kBytes) + " for segments) " +
           (w.out_of_memory_in_weights
                ? "loading the weights: the parameters and buffers alone do "
                  "not fit\n"
                : "at " + StepName(w.out_of_memory_step) +
                      ", after releasing the cached segments\n");
  } else {
    out += "           fits " + a.device + " (" +
           HumanAndExact(w.memory_limit, Unit::kBytes) +
           " for segments); cached segments released " +
           std::to_string(w.releases) + " times to make room\n";
  }
  return out;
}

std::string AllocatorText(const PhaseAllocators& a) {
  auto phase = [](const char* name, const AllocatorPeak& p) {
    if (!p.error.empty())
      return std::string("         ") + name + " " + p.error + "\n";
    return std::string("         ") + name + " allocated " +
           HumanAndExact(p.allocated_peak, Unit::kBytes) + ", reserved " +
           HumanAndExact(p.reserved_peak, Unit::kBytes) + "\n";
  };
  return "  CUDA caching allocator (each phase alone, from an empty cache)\n" +
         phase("prefill", a.prefill) + phase("decode (last step)", a.decode) +
         "         device (the larger reserved + context " +
         HumanAndExact(a.prefill.context_bytes, Unit::kBytes) +
         "): " + HumanAndExact(a.device_peak, Unit::kBytes) + "\n" +
         WholeGenerationText(a);
}

Json AllocatorJson(const std::optional<PhaseAllocators>& a) {
  if (!a) return nullptr;
  auto phase = [](const AllocatorPeak& p) -> Json {
    if (!p.error.empty()) return {{"error", p.error}};
    return {{"allocated_peak", p.allocated_peak},
            {"reserved_peak", p.reserved_peak},
            {"fragmentation", p.fragmentation},
            {"segments", p.segments}};
  };
  const GenerationAllocatorPeak& w = a->whole;
  Json whole;
  if (!w.error.empty()) {
    whole = {{"error", w.error}};
  } else {
    const bool limited = !a->device.empty();
    whole = {{"allocated_peak", w.allocated_peak},
             {"allocated_peak_step", w.allocated_peak_step},
             {"reserved_peak", w.reserved_peak},
             {"reserved_peak_step", w.reserved_peak_step},
             {"device_peak", w.device_peak},
             {"device", limited ? Json(a->device) : Json(nullptr)},
             {"memory_limit", limited ? Json(w.memory_limit) : Json(nullptr)},
             {"releases", w.releases},
             {"out_of_memory_step", w.out_of_memory_step >= 0
                                        ? Json(w.out_of_memory_step)
                                        : Json(nullptr)},
             {"out_of_memory_in_weights", w.out_of_memory_in_weights}};
  }
  return {{"prefill", phase(a->prefill)},
          {"decode", phase(a->decode)},
          {"context_bytes", a->prefill.context_bytes},
          {"device_peak", a->device_peak},
          {"generate", whole}};
}

}  // namespace

GenerationPeak PhasePeak(const StepAnalysis& phase,
                         const sym::Bindings& bindings) {
  GenerationPeak out;
  const PeakInfo pi =
      EvaluatePeak(phase.report.training, bindings, /*category_max=*/false);
  out.error = pi.error;
  out.peak = pi.peak;
  out.decided = pi.decided && pi.error.empty();
  if (!out.decided) return out;
  const auto& at = pi.at_peak;
  out.param = at[static_cast<int>(MemCategory::kParam)];
  // NB: the cache's storages count as BUFFER in the simulation
  // (TrainingOptions::cache_inputs_from).
  out.buffer = sym::Expr(phase.report.buffer_bytes);
  out.kv_cache = at[static_cast<int>(MemCategory::kBuffer)] - out.buffer;
  out.act = at[static_cast<int>(MemCategory::kAct)];
  out.temp = at[static_cast<int>(MemCategory::kTemp)];
  out.other = at[static_cast<int>(MemCategory::kOther)] +
              at[static_cast<int>(MemCategory::kGrad)] +
              at[static_cast<int>(MemCategory::kOpt)];
  return out;
}

std::string RenderGenerationText(const GenerationAnalysis& g,
                                 const sym::Bindings& b) {
  const GenerationPeak pp = PhasePeak(g.prefill, b),
                       dp = PhasePeak(g.decode, b);
  // The model: its name, parameters (quantized weights as out x in) and
  // their stored bytes.
  const Report& model = g.prefill.report;
  std::string out;
  if (!model.model.empty()) out += "Model:  " + model.model + "\n";
  out += "Params: " + HumanAndExact(model.params, Unit::kCount) + ", " +
         HumanAndExact(model.param_bytes, Unit::kBytes);
  if (model.quantized_params != 0) {
    out += "; " + HumanAndExact(model.quantized_params, Unit::kCount) +
           " of them stored quantized";
  }
  out += "\nGeneration (greedy, KV cache; prompt S, T new tokens, batch B)\n";
  out += "  KV cache at the end (" +
         report::Bind(g.kv_cache_tokens, b).ToString() + " tokens, " +
         g.cache_dtype +
         (g.window > 0 ? ", sliding window " + std::to_string(g.window) : "") +
         (g.window > 0 && g.windowed_layers < g.layers
              ? " on " + std::to_string(g.windowed_layers) + " of " +
                    std::to_string(g.layers) + " layers, the others S + T"
              : "") +
         "): " + HumanAndExact(g.kv_cache_bytes, b, Unit::kBytes) + "\n";
  out += "  FLOPs  prefill " + HumanAndExact(g.prefill_flops, b, Unit::kFlops) +
         "\n";
  out += "         decode, per token: first " +
         HumanAndExact(g.decode_flops_first, b, Unit::kFlops) + ", last " +
         HumanAndExact(g.decode_flops_last, b, Unit::kFlops) + "\n";
  if (g.decode_linear) {
    out += "         decode, T - 1 steps " +
           HumanAndExact(g.decode_flops_total, b, Unit::kFlops) + "\n";
    out += "         total " + HumanAndExact(g.total_flops, b, Unit::kFlops) +
           "\n";
  } else if (const std::optional<__int128> total = SummedTotal(g, b)) {
    out += "         decode, T - 1 steps " +
           HumanAndExact(*g.decode_flops_summed, Unit::kFlops) +
           " (each step at its cache length)\n";
    out += "         total " + HumanAndExact(*total, Unit::kFlops) + "\n";
  }
  out += "  Peak   prefill " + PeakText(pp, b) + "\n";
  out += "         decode (last step) " + PeakText(dp, b) + "\n";
  if (const std::optional<PhaseAllocators> a = Allocators(g, b))
    out += AllocatorText(*a);
  if (g.time.present) out += TimeText(g.time);
  if (const int64_t budget = g.prefill.report.budget_bytes; budget > 0) {
    out += "  " + report::BudgetText(
                      budget, BudgetEvaluator(g).Answer(
                                  b, report::QuestionOf(g.prefill.report)));
  }
  // The prefill's diagnostics (the builder's notes among them), then the
  // decode step's that the prefill did not give.
  std::vector<const Diagnostic*> said;
  for (const StepAnalysis* phase : {&g.prefill, &g.decode}) {
    for (const Diagnostic& d : phase->report.diagnostics) {
      if (std::any_of(said.begin(), said.end(), [&](const Diagnostic* e) {
            return e->severity == d.severity && e->message == d.message;
          }))
        continue;
      said.push_back(&d);
      out += "  " + std::string(report::SeverityName(d.severity)) + ": " +
             d.message + "\n";
    }
  }
  return out;
}

std::string RenderGenerationJson(const GenerationAnalysis& g,
                                 const sym::Bindings& b, int indent) {
  Json j;
  j["cache_dtype"] = g.cache_dtype;
  j["sliding_window"] = g.window;
  j["layers"] = g.layers;
  j["windowed_layers"] = g.windowed_layers;
  j["kv_bytes_per_token"] = g.kv_bytes_per_token;
  j["kv_cache_tokens"] = JsonSymbolic(g.kv_cache_tokens, b);
  j["kv_cache_bytes"] = JsonSymbolic(g.kv_cache_bytes, b);
  j["flops"] = {
      {"prefill", JsonSymbolic(g.prefill_flops, b)},
      {"decode_first_token", JsonSymbolic(g.decode_flops_first, b)},
      {"decode_last_token", JsonSymbolic(g.decode_flops_last, b)},
      {"decode_total", g.decode_linear ? JsonSymbolic(g.decode_flops_total, b)
                       : SummedTotal(g, b) ? Summed(*g.decode_flops_summed)
                                           : Json(nullptr)},
      {"total", g.decode_linear     ? JsonSymbolic(g.total_flops, b)
                : SummedTotal(g, b) ? Summed(*SummedTotal(g, b))
                                    : Json(nullptr)}};
  j["prefill"] = PeakJson(PhasePeak(g.prefill, b), b);
  j["decode"] = PeakJson(PhasePeak(g.decode, b), b);
  j["allocator"] = AllocatorJson(Allocators(g, b));
  j["time"] = TimeJson(g.time);
  const int64_t budget = g.prefill.report.budget_bytes;
  j["budget"] = budget > 0
                    ? report::BudgetJson(
                          budget, BudgetEvaluator(g).Answer(
                                      b, report::QuestionOf(g.prefill.report)))
                    : Json(nullptr);
  std::string text = j.dump(2), out;
  const std::string pad(indent, ' ');
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

Result<std::string> RenderGenerationSweep(const GenerationAnalysis& g,
                                          const std::vector<SweepSpec>& sweeps,
                                          const sym::Bindings& base, bool json,
                                          const TimedOn* time) {
  const int64_t budget_bytes = g.prefill.report.budget_bytes;
  const bool allocator = g.decode.report.training.cuda_allocator.has_value();
  const BudgetEvaluator budget(g);
  // Each point says whether it fits; no search.
  const BudgetQuestion question =
      report::QuestionOf(g.prefill.report, /*search=*/false);
  Json rows = Json::array();
  std::string text =
      "B, S, T, kv_cache, prefill peak, decode peak" +
      std::string(allocator ? ", device (whole generate)" : "") +
      std::string(budget_bytes > 0
                      ? ", fits " + report::Human(budget_bytes, Unit::kBytes)
                      : "") +
      (time ? ", to 1st token, decode step, tokens/s (" +
                  report::TimeSourceLabel(time->source) + ")"
            : "") +
      "\n";
  std::string untimed;  // Why a point's collectives are not timed.
  std::vector<size_t> at(sweeps.size(), 0);
  // NB: each point evaluates the two phases' timeline totals, compiled once,
  // rather than binding every expression of the timeline per point.
  PeakProgram prefill_peak(g.prefill), decode_peak(g.decode);
  for (bool more = true; more;) {
    sym::Bindings b = base;
    for (size_t i = 0; i < sweeps.size(); ++i)
      b[sweeps[i].symbol] = sweeps[i].values[at[i]];
    auto kv = TryEvaluate(g.kv_cache_bytes, b);
    std::optional<__int128> p1, p2;
    if (std::optional<int64_t> a = prefill_peak.At(b), d = decode_peak.At(b);
        a && d) {
      p1 = *a;
      p2 = *d;
    } else {
      // A symbol unbound or an overflow: as PhasePeak says it.
      const GenerationPeak pp = PhasePeak(g.prefill, b),
                           dp = PhasePeak(g.decode, b);
      if (!pp.error.empty()) return Status::InvalidArgument(pp.error);
      if (!dp.error.empty()) return Status::InvalidArgument(dp.error);
      p1 = TryEvaluate(pp.peak, b);
      p2 = TryEvaluate(dp.peak, b);
    }
    if (!kv || !p1 || !p2) {
      return Status::InvalidArgument(
          "sweep: B, S and T must all be bound (by a sweep or a value)");
    }
    Json row = {{"B", b["B"]},
                {"S", b["S"]},
                {"T", b["T"]},
                {"kv_cache_bytes", JsonInteger(*kv)},
                {"prefill_peak_bytes", JsonInteger(*p1)},
                {"decode_peak_bytes", JsonInteger(*p2)}};
    std::optional<BudgetAnswer> answer;
    if (budget_bytes > 0) {
      Result<BudgetAnswer> a = budget.Answer(b, question);
      if (!a.ok()) return a.status().WithPrefix("sweep: budget");
      answer = std::move(a).value();
    }
    std::string device;
    if (allocator) {
      // NB: the budget's answer holds the whole generate()'s device total
      // already (needed_bytes); replay only without one.
      int64_t device_peak = answer ? answer->needed_bytes : 0;
      if (!answer) {
        const GenerationAllocatorPeak w = EvaluateGenerationAllocator(
            g.prefill.report.training, g.decode.report.training, b);
        if (!w.error.empty())
          return Status::InvalidArgument("sweep: " + w.error);
        device_peak = w.device_peak;
      }
      row["device_peak_bytes"] = device_peak;
      device = ", " + report::Human(device_peak, Unit::kBytes);
    }
    const bool fits = !answer || answer->fits;
    if (answer) row["fits"] = fits;
    std::string timed;
    if (time) {
      Result<GenerationTime> t = EstimateGenerationTime(g, time->gpu, b);
      if (!t.ok()) return t.status().WithPrefix("sweep: time");
      const std::string& why = t->communication_untimed;
      row["time"] = report::JsonGenerationRate(
          t->prefill_seconds, t->last_step_seconds, t->tokens_per_second, why);
      const std::string at_least = report::BoundMark(why, true),
                        at_most = report::BoundMark(why, false);
      timed = ", " + at_least + report::SecondsText(t->prefill_seconds) + ", " +
              at_least + report::SecondsText(t->last_step_seconds) + ", " +
              at_most + report::RateText(t->tokens_per_second);
      if (untimed.empty()) untimed = why;
    }
    rows.push_back(row);
    text += std::to_string(b["B"]) + ", " + std::to_string(b["S"]) + ", " +
            std::to_string(b["T"]) + ", " + report::Human(*kv, Unit::kBytes) +
            ", " + report::Human(*p1, Unit::kBytes) + ", " +
            report::Human(*p2, Unit::kBytes) + device +
            (budget_bytes > 0 ? (fits ? ", yes" : ", no") : "") + timed + "\n";
    more = false;
    for (size_t i = sweeps.size(); i-- > 0;) {
      if (++at[i] < sweeps[i].values.size()) {
        more = true;
        break;
      }
      at[i] = 0;
    }
  }
  text += report::UntimedCommunicationNote(untimed, "every point");
  if (!json) return text;
  Json doc = {
      {"schema", "torchcost.sweep"}, {"version", 1}, {"generation", true}};
  if (budget_bytes > 0) doc["budget_bytes"] = budget_bytes;
  if (time) doc["time_source"] = report::TimeSourceLabel(time->source);
  doc["rows"] = rows;
  return doc.dump(2) + "\n";
}

}  // namespace torchcost
