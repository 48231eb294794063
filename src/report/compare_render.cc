// The comparison's renderings as text and JSON (RenderCompareText,
// RenderCompareJson); RenderCompareSvg is compare_svg.cc.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "report/format.h"
#include "report/json_values.h"
#include "report/table.h"
#include "report/text_sections.h"
#include "torchcost/compare.h"

namespace torchcost {
namespace {

std::string BindingsText(const sym::Bindings& b, const CompareOptions& o,
                         bool batch_free) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : b) parts.push_back(k + "=" + std::to_string(v));
  std::sort(parts.begin(), parts.end());
  if (batch_free) parts.insert(parts.begin(), o.batch_symbol + "=1");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

// True if some row was timed (CompareOptions::gpu).
bool Timed(const std::vector<CompareRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const CompareRow& r) {
    return r.error.empty() &&
           (r.step_rate.step_seconds >= 0 || r.prefill_seconds >= 0);
  });
}

// Adds a row that failed to `t` (its notes follow the table) and returns
// true; false for a row that evaluated.
bool AddFailedRow(report::Table& t, const CompareRow& r) {
  if (r.error.empty()) return false;
  t.AddRow({r.label, "error: see below"});
  return true;
}

// "predicted: roofline on H100-SXM", or a calibration's own label.
std::string TimeSourceText(const CompareOptions& options) {
  return options.time ? report::TimeSourceLabel(options.time->source) : "";
}

// The lines after the table that every rendering prints: lower bounds and
// failed rows.
std::string RowNotes(const std::vector<CompareRow>& rows) {
  std::string out;
  for (const CompareRow& r : rows) {
    if (!r.error.empty() || r.unknown_ops.empty()) continue;
    std::string ops;
    for (const UnknownOp& u : r.unknown_ops)
      ops += (ops.empty() ? "" : ", ") + u.op + " x" + std::to_string(u.count);
    out += "lower bounds (>=): no rule for " + r.label + ": " + ops +
           "; their cost counts 0 (StepConfig.strict fails on them)\n";
  }
  // Rows whose collectives are untimed for the same reason share one note.
  std::vector<std::pair<std::string, std::string>> untimed;  // (why, labels)
  for (const CompareRow& r : rows) {
    const std::string& why = r.step_rate.communication_untimed;
    if (!r.error.empty() || why.empty()) continue;
    auto same = std::find_if(untimed.begin(), untimed.end(),
                             [&](const auto& u) { return u.first == why; });
    if (same == untimed.end())
      untimed.push_back({why, r.label});
    else
      same->second += ", " + r.label;
  }
  for (const auto& [why, labels] : untimed)
    out += report::UntimedCommunicationNote(why, labels);
  for (const CompareRow& r : rows) {
    if (!r.error.empty()) out += "error: " + r.label + ": " + r.error + "\n";
  }
  return out;
}

// The generation comparison's table: weights, KV cache, each phase's peak, what
// fits, FLOPs.
std::string GenerationCompareText(const std::string& model,
                                  const std::vector<CompareRow>& rows,
                                  const CompareOptions& options,
                                  const std::string& setting) {
  using report::Human;
  using report::Table;
  using report::Unit;
  const std::string& x = options.batch_symbol;
  const bool free = !options.bindings.count(x) && options.budget_bytes > 0;
  std::string out = "torchcost compare: " + model + " (generation)\n";
  const std::string at = BindingsText(options.bindings, options, free);
  out += "  " +
         (at.empty() ? std::string("at the inputs' shapes") : "at " + at) +
         (setting.empty() ? "" : "; " + setting) + "\n";
  if (options.budget_bytes > 0) {
    out += "  budget " + Human(options.budget_bytes, Unit::kBytes) + " (" +
           std::to_string(options.budget_bytes) + " bytes); Max " + x +
           ": the largest " + x + " whose generation fits (up to " +
           std::to_string(options.max_batch_limit) + ")\n";
  }
  std::vector<Table::Column> cols = {{"Config", Table::Align::kLeft}};
  // A sweep's rows: a column per swept symbol.
  const std::vector<std::pair<std::string, int64_t>> swept =
      rows.empty() ? std::vector<std::pair<std::string, int64_t>>()
                   : rows.front().point;
  for (const auto& [name, value] : swept) cols.push_back({name});
  for (const char* h :
       {"Weights", "KV cache", "Prefill peak", "Decode peak", "Peak"})
    cols.push_back({h});
  const bool allocator =
      std::any_of(rows.begin(), rows.end(),
                  [](const CompareRow& r) { return r.device_peak >= 0; });
  if (allocator) cols.push_back({"+context"});
  if (options.budget_bytes > 0) {
    cols.push_back({"Fits", Table::Align::kLeft});
    cols.push_back({"Max " + x});
  }
  cols.push_back({"Prefill FLOPs"});
  cols.push_back({"Decode FLOPs/token"});
  const bool timed = Timed(rows);
  if (timed) {
    for (const char* h : {"To 1st token", "Decode step", "Tokens/s"})
      cols.push_back({h});
  }
  Table t(cols);
  for (const CompareRow& r : rows) {
    if (AddFailedRow(t, r)) continue;
    std::vector<std::string> cells{r.label};
    for (const auto& [name, value] : r.point)
      cells.push_back(std::to_string(value));
    const std::string mem = r.memory_lower_bound ? ">= " : "",
                      fl = r.flops_lower_bound ? ">= " : "";
    cells.push_back(Human(r.param_bytes, Unit::kBytes));
    cells.push_back(Human(r.kv_cache_bytes, Unit::kBytes));
    cells.push_back(mem + Human(r.prefill_peak, Unit::kBytes));
    cells.push_back(mem + Human(r.decode_peak, Unit::kBytes));
    cells.push_back(mem + Human(r.peak, Unit::kBytes));
    if (allocator) cells.push_back(mem + Human(r.device_peak, Unit::kBytes));
    if (options.budget_bytes > 0) {
      cells.push_back(r.fits ? "yes" : "NO");
      cells.push_back(r.max_batch < 0 ? "-" : std::to_string(r.max_batch));
    }
    cells.push_back(fl + Human(r.flops_prefill, Unit::kFlops));
    cells.push_back(fl + Human(r.flops_decode_token, Unit::kFlops));
    if (timed) {
      const std::string& why = r.step_rate.communication_untimed;
      const std::string at_least = report::BoundMark(why, true),
                        at_most = report::BoundMark(why, false);
      cells.push_back(at_least + report::SecondsText(r.prefill_seconds));
      cells.push_back(at_least + report::SecondsText(r.decode_step_seconds));
      cells.push_back(at_most + report::RateText(r.tokens_per_second));
    }
    t.AddRow(cells);
  }
  out += t.Render();
  out +=
      "KV cache: at the end of generation (S + T tokens). Peak: the larger of "
      "the prefill's and the last decode\n"
      "step's (its cache at S + T - 1 tokens). Decode FLOPs: the last decode "
      "step's.\n";
  out += "At the peak, by part (the parts that are not 0):\n";
  for (const CompareRow& r : rows) {
    if (!r.error.empty()) continue;
    out += "  " + r.label;
    for (const auto& [name, value] : r.point)
      out += " " + name + "=" + std::to_string(value);
    out += ":";
    std::string parts;
    for (int k = 0; k < kNumMemCategories; ++k) {
      const auto c = static_cast<MemCategory>(k);
      if (r.at_peak[k] != 0) {
        parts += (parts.empty() ? " " : ", ") +
                 std::string(MemCategoryName(c)) + " " +
                 Human(r.at_peak[k], Unit::kBytes);
      }
      if (c == MemCategory::kBuffer) {
        parts += (parts.empty() ? " " : ", ") + std::string("kv_cache ") +
                 Human(r.kv_cache_at_peak, Unit::kBytes);
      }
    }
    out += parts + "\n";
  }
  if (allocator) {
    out +=
        "CUDA caching allocator model (docs/allocator.md): +context is the "
        "whole generate()'s reserved peak plus\n"
        "the CUDA context (every step through one allocator); what fits is "
        "the whole generation replayed within\n"
        "the budget less the context, cached segments released as PyTorch "
        "releases them before giving up.\n";
  }
  if (timed) {
    out += "Time (" + TimeSourceText(options) +
           "): the prefill, the last decode step, and B x T new tokens per "
           "second of the whole\ngenerate() call (docs/generation.md).\n";
  }
  return out + RowNotes(rows);
}

}  // namespace

std::string RenderCompareText(const std::string& model,
                              const std::vector<CompareRow>& rows,
                              const CompareOptions& options,
                              const std::string& setting) {
  if (options.generation)
    return GenerationCompareText(model, rows, options, setting);
  using report::Human;
  using report::Table;
  using report::Unit;
  const bool batch_free =
      !options.bindings.count(options.batch_symbol) &&
      std::any_of(rows.begin(), rows.end(),
                  [](const CompareRow& r) { return r.max_batch >= 0; });
  std::string out = "torchcost compare: " + model + "\n";
  const std::string at = BindingsText(options.bindings, options, batch_free);
  out += "  " +
         (at.empty() ? std::string("at the inputs' shapes") : "at " + at) +
         (setting.empty() ? "" : "; " + setting) + "\n";
  if (options.budget_bytes > 0) {
    out += "  budget " + Human(options.budget_bytes, Unit::kBytes) + " (" +
           std::to_string(options.budget_bytes) + " bytes); Max " +
           options.batch_symbol + ": the largest " + options.batch_symbol +
           " whose peak fits (up to " +
           std::to_string(options.max_batch_limit) + ")\n";
  }
  std::vector<Table::Column> cols = {{"Config", Table::Align::kLeft},
                                     {"Trainable"}};
  for (int k = 0; k < kNumMemCategories; ++k) {
    std::string name(MemCategoryName(static_cast<MemCategory>(k)));
    name[0] = static_cast<char>(std::toupper(name[0]));
    cols.push_back({name});
  }
  cols.push_back({"Peak"});
  const bool allocator =
      std::any_of(rows.begin(), rows.end(),
                  [](const CompareRow& r) { return r.device_peak >= 0; });
  if (allocator) {
    cols.push_back({"Reserved"});
    cols.push_back({"+context"});
  }
  if (options.budget_bytes > 0) {
    cols.push_back({"Fits", Table::Align::kLeft});
    cols.push_back({"Max " + options.batch_symbol});
  }
  for (const char* h : {"Fwd FLOPs", "Bwd FLOPs", "Step FLOPs"})
    cols.push_back({h});
  const bool timed = Timed(rows);
  std::string unit;
  for (const CompareRow& r : rows) {
    if (!r.step_rate.items_unit.empty()) unit = r.step_rate.items_unit;
  }
  if (timed) {
    for (const std::string& h : report::StepTimeHeaders(unit))
      cols.push_back({h});
  }
  Table t(cols);
  for (const CompareRow& r : rows) {
    if (AddFailedRow(t, r)) continue;
    std::vector<std::string> cells{r.label};
    cells.push_back(Human(r.trainable_params, Unit::kCount));
    // NB: ">= " marks lower bounds (ops without rules), as in the analysis
    // report.
    const std::string mem = r.memory_lower_bound ? ">= " : "",
                      fl = r.flops_lower_bound ? ">= " : "";
    for (int k = 0; k < kNumMemCategories; ++k)
      cells.push_back(Human(r.at_peak[k], Unit::kBytes));
    cells.push_back(mem + Human(r.peak, Unit::kBytes));
    if (allocator) {
      cells.push_back(mem + Human(r.reserved_peak, Unit::kBytes));
      cells.push_back(mem + Human(r.device_peak, Unit::kBytes));
    }
    if (options.budget_bytes > 0) {
      cells.push_back(r.fits ? "yes" : "NO");
      cells.push_back(r.max_batch < 0 ? "-" : std::to_string(r.max_batch));
    }
    cells.push_back(fl + Human(r.flops_forward, Unit::kFlops));
    cells.push_back(fl + Human(r.flops_backward, Unit::kFlops));
    cells.push_back(fl + Human(r.flops_step, Unit::kFlops));
    if (timed) {
      for (std::string& c : report::StepTimeCells(r.step_rate))
        cells.push_back(std::move(c));
    }
    t.AddRow(cells);
  }
  out += t.Render();
  out +=
      "Memory is the breakdown at each configuration's peak (it sums to Peak); "
      "FLOPs: forward and backward per\n"
      "micro-batch, step = micro-batches x (forward + backward) + optimizer.\n";
  if (allocator) {
    out +=
        "CUDA caching allocator model (docs/allocator.md): Peak is the "
        "allocated blocks' (max_memory_allocated),\n"
        "Reserved max_memory_reserved, +context adds the CUDA context; what "
        "fits is the step replayed within the\n"
        "budget less the context, cached segments released as PyTorch "
        "releases them before giving up.\n";
  }
  if (timed) {
    out += "Time (" + TimeSourceText(options) +
           "): one step = micro-batches x (forward + backward) + optimizer + "
           "the collectives it waits for, at the bindings above.\n";
  }
  return out + RowNotes(rows);
}

std::string RenderCompareJson(const std::string& model,
                              const std::vector<CompareRow>& rows,
                              const CompareOptions& options,
                              const std::string& setting) {
  nlohmann::ordered_json j;
  j["schema"] = "torchcost.compare";
  j["version"] = 1;
  j["model"] = model;
  j["setting"] = setting;
  nlohmann::ordered_json b = nlohmann::ordered_json::object();
  std::vector<std::pair<std::string, int64_t>> sorted(options.bindings.begin(),
                                                      options.bindings.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [k, v] : sorted) b[k] = v;
  j["bindings"] = b;
  j["batch_symbol"] = options.batch_symbol;
  j["budget_bytes"] = options.budget_bytes > 0
                          ? nlohmann::ordered_json(options.budget_bytes)
                          : nullptr;
  if (options.generation) j["mode"] = "generate";
  if (options.time) j["time_source"] = TimeSourceText(options);
  nlohmann::ordered_json out_rows = nlohmann::ordered_json::array();
  for (const CompareRow& r : rows) {
    nlohmann::ordered_json o;
    o["config"] = r.label;
    if (!r.point.empty()) {
      nlohmann::ordered_json point = nlohmann::ordered_json::object();
      for (const auto& [name, value] : r.point) point[name] = value;
      o["at"] = point;
    }
    if (!r.error.empty()) {
      o["error"] = r.error;
      out_rows.push_back(o);
      continue;
    }
    o["params"] = r.params;
    if (!r.generation) o["trainable_params"] = r.trainable_params;
    o["param_bytes"] = r.param_bytes;
    if (r.generation) {
      o["kv_cache_bytes"] = r.kv_cache_bytes;
      o["prefill_peak"] = r.prefill_peak;
      o["decode_peak"] = r.decode_peak;
    }
    nlohmann::ordered_json cats;
    for (int k = 0; k < kNumMemCategories; ++k)
      cats[std::string(MemCategoryName(static_cast<MemCategory>(k)))] =
          r.at_peak[k];
    // As the generation report's at_peak: the cache apart from buffer.
    if (r.generation) cats["kv_cache"] = r.kv_cache_at_peak;
    o["at_peak"] = cats;
    o["peak"] = r.peak;
    if (r.device_peak >= 0) {
      o["reserved_peak"] = r.reserved_peak;
      o["device_peak"] = r.device_peak;
    }
    o["fits"] = r.fits;
    o["max_batch"] =
        r.max_batch >= 0 ? nlohmann::ordered_json(r.max_batch) : nullptr;
    if (r.generation) {
      o["flops"] = {{"prefill", r.flops_prefill},
                    {"decode_token", r.flops_decode_token}};
    } else {
      o["flops"] = {{"forward", r.flops_forward},
                    {"backward", r.flops_backward},
                    {"step", r.flops_step}};
    }
    if (r.generation && r.prefill_seconds >= 0) {
      o["time"] = report::JsonGenerationRate(
          r.prefill_seconds, r.decode_step_seconds, r.tokens_per_second,
          r.step_rate.communication_untimed);
    } else if (!r.generation && r.step_rate.step_seconds >= 0) {
      o["time"] = report::JsonStepRate(r.step_rate);
    }
    o["lower_bound"] = {{"flops", r.flops_lower_bound},
                        {"memory", r.memory_lower_bound}};
    nlohmann::ordered_json unknown = nlohmann::ordered_json::array();
    for (const UnknownOp& u : r.unknown_ops)
      unknown.push_back({{"op", u.op}, {"count", u.count}});
    o["unknown_ops"] = unknown;
    out_rows.push_back(o);
  }
  j["rows"] = out_rows;
  return j.dump(2) + "\n";
}

}  // namespace torchcost
