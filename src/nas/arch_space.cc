// AnalyzeArchSpace: closed forms in architecture symbols from concrete
// analyses on a grid, interpolated exactly.
//
// NB: why this is exact. For a fixed graph structure (the same nodes in the
// same order for every value of the symbols), every dim of the families is
// a polynomial in the config's values (hidden = H*D, 3*hidden, S, B, ...), so
// a tensor's bytes, a node's FLOPs and the live bytes at each moment of the
// step are polynomials in the symbols with integer coefficients, as sums of
// products of dims. Each total is then sum_t c_t(arch) * t(B, S), with t the
// terms of the symbolic analysis in the batch and sequence, and each c_t an
// integer polynomial of bounded degree in each architecture symbol, which
// Newton interpolation on integer points recovers exactly from deg + 1 points
// per symbol. The degree in each symbol is found from its divided differences
// (a zero difference of order d + 1 along the symbol's axis), and the closed
// forms are checked against fresh analyses at random points before they are
// returned. The peak is the max over the moments of the step: each moment's
// closed form is interpolated, and moments provably dominated by another for
// every value of the symbols within their ranges are dropped (EvaluatePeak).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "builder/key_values.h"
#include "nas/interpolate.h"
#include "sym/node.h"
#include "torchcost/families.h"
#include "torchcost/loss.h"
#include "torchcost/nas.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

constexpr int kMaxDegree = 6;
constexpr int kVerifyPoints = 2;

// One item of the config: a literal value or an expression in the symbols.
struct ConfigItem {
  std::string key;
  std::string literal;
  bool symbolic = false;
  sym::Expr expr;
};

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Returns the identifiers of `text`.
std::vector<std::string> Identifiers(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (IsIdentStart(text[i]) && (i == 0 || !IsIdentChar(text[i - 1]))) {
      size_t j = i;
      while (j < text.size() && IsIdentChar(text[j])) ++j;
      out.push_back(text.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

// Parses the space's config into items, creating the symbols in `ctx`.
Result<std::vector<ConfigItem>> ParseSpace(const ArchSpace& space,
                                           sym::Context& ctx) {
  std::vector<std::string> names;
  for (const ArchSymbol& s : space.symbols) {
    if (s.name.empty() || !IsIdentStart(s.name[0]) ||
        !std::all_of(s.name.begin(), s.name.end(), IsIdentChar)) {
      return Status::InvalidArgument("arch symbol '" + s.name +
                                     "' is not an identifier");
    }
    if (std::find(names.begin(), names.end(), s.name) != names.end())
      return Status::InvalidArgument("arch symbol '" + s.name +
                                     "' is given twice");
    if (s.lo < 1 || s.hi < s.lo || s.step < 1) {
      return Status::InvalidArgument(
          "arch symbol " + s.name + ": range [" + std::to_string(s.lo) + ", " +
          std::to_string(s.hi) + "] step " + std::to_string(s.step) +
          " must have 1 <= lo <= hi and step >= 1");
    }
    if (ctx.FindSymbol(s.name)) {
      TORCHCOST_RETURN_IF_ERROR(
          ctx.SetRange(s.name, sym::Interval{s.lo, s.hi}));
    } else {
      ctx.Symbol(s.name, sym::Interval{s.lo, s.hi});
    }
    names.push_back(s.name);
  }
  std::vector<ConfigItem> items;
  for (const builder::KeyValueItem& kv :
       builder::SplitKeyValues(space.config)) {
    const std::string& item = kv.text;
    if (kv.key.empty())
      return Status::InvalidArgument("config '" + item +
                                     "': expected KEY=VALUE");
    ConfigItem c;
    c.key = kv.key;
    c.literal = kv.value;
    for (const std::string& id : Identifiers(c.literal)) {
      if (std::find(names.begin(), names.end(), id) != names.end())
        c.symbolic = true;
    }
    if (c.symbolic) {
      Result<sym::Expr> e = sym::Parse(ctx, c.literal);
      if (!e.ok())
        return Status::InvalidArgument("config " + item + ": " +
                                       e.status().message());
      for (const std::string& s : sym::FreeSymbols(*e)) {
        if (std::find(names.begin(), names.end(), s) == names.end())
          return Status::InvalidArgument("config " + item + ": '" + s +
                                         "' is not an arch symbol");
      }
      c.expr = *e;
    }
    items.push_back(std::move(c));
  }
  return items;
}

Result<std::string> RenderConfig(const ArchSpace& space,
                                 const std::vector<ConfigItem>& items,
                                 const std::vector<int64_t>& values) {
  if (values.size() != space.symbols.size()) {
    return Status::InvalidArgument(
        "arch space: " + std::to_string(values.size()) + " values for " +
        std::to_string(space.symbols.size()) + " symbols");
  }
  sym::Bindings bindings;
  for (size_t i = 0; i < values.size(); ++i)
    bindings[space.symbols[i].name] = values[i];
  std::string out;
  for (const ConfigItem& c : items) {
    std::string value = c.literal;
    if (c.symbolic) {
      Result<int64_t> v = sym::Evaluate(c.expr, bindings);
      if (!v.ok())
        return Status::InvalidArgument("config " + c.key + "=" + c.literal +
                                       ": " + v.status().message());
      value = std::to_string(*v);
    }
    out += (out.empty() ? "" : ",") + c.key + "=" + value;
  }
  return out;
}

// What one concrete analysis gives: the quantities to interpolate.
struct Sample {
  uint64_t signature = 0;  // The graph's and the timeline's structure.
  // params, trainable, flops forward, flops backward, then the timeline's
  // totals.
  std::vector<sym::Expr> outputs;
  std::vector<std::string> input_symbols;
};

uint64_t Mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
}

Result<Sample> AnalyzeAt(const ArchSpace& space,
                         const std::vector<ConfigItem>& items,
                         const RuleSet& rules, sym::Context& ctx,
                         const std::vector<int64_t>& values) {
  Result<std::string> config = RenderConfig(space, items, values);
  if (!config.ok()) return config.status();
  Result<builder::BuiltModel> built =
      builder::BuildNamedModel(space.model, *config);
  if (!built.ok())
    return Status::InvalidArgument("arch space at " + *config + ": " +
                                   built.status().message());
  const builder::BuiltModel& m = *built;
  AnalysisOptions options = space.options;
  options.inputs.clear();
  for (const builder::InputDecl& in : m.inputs)
    options.inputs.push_back({builder::ResolveShape(m, in, ctx), in.dtype});
  ir::Graph graph = m.graph;
  if (options.training.mode == StepMode::kTrain) {
    const std::string loss = space.loss.empty() ? m.default_loss : space.loss;
    if (!loss.empty()) {
      Result<LossSpec> spec = ParseLossSpec(loss);
      if (!spec.ok()) return spec.status();
      options.training.loss = *spec;
      Result<ir::Graph> g = ApplyLoss(graph, rules, ctx, &options);
      if (!g.ok()) return g.status();
      graph = std::move(g).value();
    }
  }
  Result<Report> r = Analyze(graph, rules, ctx, options);
  if (!r.ok())
    return Status::InvalidArgument("arch space at " + *config + ": " +
                                   r.status().message());
  const Report& report = *r;
  if (report.lower_bound || report.training.flops_lower_bound ||
      report.training.act_lower_bound)
    return Status::InvalidArgument(
        "arch space at " + *config +
        ": an op has no rule, so the costs are lower bounds");
  Sample s;
  uint64_t h = Mix(0, graph.nodes.size());
  for (const ir::Node& n : graph.nodes)
    h = Mix(h, std::hash<std::string>()(n.op));
  h = Mix(h, report.training.timeline.size());
  for (const TimelinePoint& p : report.training.timeline)
    h = Mix(Mix(h, static_cast<uint64_t>(p.phase)), p.node + 1);
  s.signature = h;
  s.outputs = {report.params, report.trainable_params,
               report.training.flops_forward, report.training.flops_backward};
  for (const TimelinePoint& p : report.training.timeline)
    s.outputs.push_back(p.total);
  s.input_symbols = report.symbols;
  return s;
}

// Maps (output, term) pairs to dense slots: the quantities interpolated.
class Slots {
 public:
  // Returns the sample's coefficients, densely, growing the slot table.
  std::vector<std::pair<int, int64_t>> Sparse(const Sample& s) {
    std::vector<std::pair<int, int64_t>> out;
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      sym::LinView v;
      sym::ViewLinear(s.outputs[o], &v);
      if (v.constant != 0) out.emplace_back(Slot(o, nullptr), v.constant);
      for (size_t t = 0; t < v.num_terms; ++t)
        out.emplace_back(Slot(o, v.terms[t].node), v.terms[t].k);
    }
    return out;
  }
  size_t size() const { return keys_.size(); }
  const std::pair<size_t, const sym::Node*>& key(size_t i) const {
    return keys_[i];
  }

 private:
  int Slot(size_t output, const sym::Node* term) {
    auto [it, added] = index_.emplace(std::make_pair(output, term),
                                      static_cast<int>(keys_.size()));
    if (added) keys_.emplace_back(output, term);
    return it->second;
  }
  struct Hash {
    size_t operator()(const std::pair<size_t, const sym::Node*>& k) const {
      return std::hash<const void*>()(k.second) * 31 + k.first;
    }
  };
  std::unordered_map<std::pair<size_t, const sym::Node*>, int, Hash> index_;
  std::vector<std::pair<size_t, const sym::Node*>> keys_;
};

// The sample points of the grid and their analyses, cached by node indices.
class Sampler {
 public:
  Sampler(const ArchSpace& space, const std::vector<ConfigItem>& items,
          const RuleSet& rules, sym::Context& ctx)
      : space_(space), items_(items), rules_(rules), ctx_(ctx) {}

  int64_t Value(size_t axis, int64_t index) const {
    return space_.symbols[axis].lo + space_.symbols[axis].step * index;
  }
  // Returns true if node `index` of `axis` lies in the symbol's range.
  bool InRange(size_t axis, int64_t index) const {
    const ArchSymbol& s = space_.symbols[axis];
    return index <= (s.hi - s.lo) / s.step;
  }

  // Returns the sparse coefficients at grid indices `at`.
  Result<const std::vector<std::pair<int, int64_t>>*> At(
      const std::vector<int64_t>& at) {
    auto it = cache_.find(at);
    if (it != cache_.end()) return &it->second;
    std::vector<int64_t> values(at.size());
    for (size_t a = 0; a < at.size(); ++a) values[a] = Value(a, at[a]);
    Result<Sample> s = Analyze(values);
    if (!s.ok()) return s.status();
    return &(cache_[at] = slots_.Sparse(*s));
  }

  // Analyses at symbol values `values`, checking the structure.
  Result<Sample> Analyze(const std::vector<int64_t>& values) {
    Result<Sample> s = AnalyzeAt(space_, items_, rules_, ctx_, values);
    if (!s.ok()) return s.status();
    ++analyses_;
    if (analyses_ == 1) {
      signature_ = s->signature;
      first_values_ = values;
      input_symbols_ = s->input_symbols;
    } else if (s->signature != signature_) {
      return Status::InvalidArgument(
          "arch space: the graph's structure differs between " +
          Describe(first_values_) + " and " + Describe(values) +
          "; narrow the symbols' ranges (or make the choice structural)");
    }
    return s;
  }

  std::string Describe(const std::vector<int64_t>& values) const {
    std::string out;
    for (size_t a = 0; a < values.size(); ++a)
      out += (a ? "," : "") + space_.symbols[a].name + "=" +
             std::to_string(values[a]);
    return out;
  }

  Slots& slots() { return slots_; }
  int analyses() const { return analyses_; }
  const std::vector<std::string>& input_symbols() const {
    return input_symbols_;
  }

 private:
  const ArchSpace& space_;
  const std::vector<ConfigItem>& items_;
  const RuleSet& rules_;
  sym::Context& ctx_;
  Slots slots_;
  std::map<std::vector<int64_t>, std::vector<std::pair<int, int64_t>>> cache_;
  uint64_t signature_ = 0;
  std::vector<int64_t> first_values_;
  std::vector<std::string> input_symbols_;
  int analyses_ = 0;
};

// Writes sparse coefficients into a dense row of `width` slots.
void Scatter(const std::vector<std::pair<int, int64_t>>& sparse,
             __int128* row) {
  for (const auto& [slot, k] : sparse) row[slot] = k;
}

// Returns the degree of the costs in symbol `axis`, others at `base`.
Result<int> FindDegree(Sampler& sampler, size_t axis, const std::string& name,
                       const std::vector<int64_t>& base) {
  std::vector<int64_t> at = base;
  std::vector<int64_t> xs;
  std::vector<const std::vector<std::pair<int, int64_t>>*> samples;
  for (int64_t j = 0; j <= kMaxDegree + 1; ++j) {
    // Every point of the range is sampled.
    if (!sampler.InRange(axis, j)) return static_cast<int>(j) - 1;
    at[axis] = j;
    auto s = sampler.At(at);
    if (!s.ok()) return s.status();
    samples.push_back(*s);
    xs.push_back(sampler.Value(axis, j));
    if (j == 0) continue;
    // The order-j divided difference of every slot.
    const size_t width = sampler.slots().size();
    std::vector<__int128> f(samples.size() * width, 0);
    for (size_t p = 0; p < samples.size(); ++p)
      Scatter(*samples[p], f.data() + p * width);
    bool top_zero = true;
    for (size_t w = 0; w < width && top_zero; ++w) {
      Status st =
          nas::DividedDifferences(xs.data(), xs.size(), f.data() + w, width);
      if (!st.ok()) {
        return Status::InvalidArgument(
            "arch space: the costs are no integer polynomial in " + name +
            " (a dim divides it by a constant? write it as a multiple of a "
            "symbol, "
            "head_dim = 2*R): " +
            st.message());
      }
      top_zero = f[(xs.size() - 1) * width + w] == 0;
    }
    if (top_zero) return static_cast<int>(j) - 1;
  }
  return Status::InvalidArgument(
      "arch space: the costs are no polynomial of degree <= " +
      std::to_string(kMaxDegree) + " in " + name);
}

// Returns prod_a symbol_a ^ e_a.
sym::Expr Monomial(const std::vector<sym::Expr>& symbols,
                   const std::vector<int64_t>& exps) {
  sym::Expr m(1);
  for (size_t a = 0; a < symbols.size(); ++a) {
    if (exps[a] > 0) m = m * sym::Pow(symbols[a], exps[a]);
  }
  return m;
}

Result<ArchCosts> AnalyzeOrThrow(const ArchSpace& space, const RuleSet& rules,
                                 sym::Context& ctx) {
  Result<std::vector<ConfigItem>> items = ParseSpace(space, ctx);
  if (!items.ok()) return items.status();
  Sampler sampler(space, *items, rules, ctx);
  const size_t k = space.symbols.size();

  // The degree in each symbol, along its axis through the base point (index 1
  // where the range allows).
  std::vector<int64_t> base(k);
  for (size_t a = 0; a < k; ++a) base[a] = sampler.InRange(a, 1) ? 1 : 0;
  ArchCosts out;
  std::vector<std::vector<int64_t>> nodes(k);
  size_t grid = 1;
  for (size_t a = 0; a < k; ++a) {
    Result<int> d = FindDegree(sampler, a, space.symbols[a].name, base);
    if (!d.ok()) return d.status();
    out.degrees.push_back(*d);
    for (int j = 0; j <= *d; ++j) nodes[a].push_back(sampler.Value(a, j));
    grid *= nodes[a].size();
  }
  if (k == 0) {
    auto s = sampler.At({});
    if (!s.ok()) return s.status();
  }

  // The tensor grid (axis 0 fastest), sampled.
  std::vector<std::vector<int64_t>> points;
  for (size_t g = 0; g < grid; ++g) {
    std::vector<int64_t> at(k);
    size_t rest = g;
    for (size_t a = 0; a < k; ++a) {
      at[a] = static_cast<int64_t>(rest % nodes[a].size());
      rest /= nodes[a].size();
    }
    auto s = sampler.At(at);
    if (!s.ok()) return s.status();
    points.push_back(at);
  }
  const size_t width = sampler.slots().size();
  std::vector<__int128> values(grid * width, 0);
  for (size_t g = 0; g < grid; ++g)
    Scatter(**sampler.At(points[g]), values.data() + g * width);
  TORCHCOST_RETURN_IF_ERROR(nas::InterpolateGrid(nodes, width, &values));

  // The closed forms: sum over slots of poly_slot(arch) * term_slot.
  std::vector<sym::Expr> symbols;
  for (const ArchSymbol& s : space.symbols)
    symbols.push_back(*ctx.FindSymbol(s.name));
  std::vector<sym::Expr> monomials(grid);
  for (size_t g = 0; g < grid; ++g) monomials[g] = Monomial(symbols, points[g]);
  size_t num_outputs = 0;
  for (size_t w = 0; w < width; ++w)
    num_outputs = std::max(num_outputs, sampler.slots().key(w).first + 1);
  std::vector<sym::Expr> exprs(num_outputs, sym::Expr(0));
  for (size_t w = 0; w < width; ++w) {
    const auto& [output, term] = sampler.slots().key(w);
    sym::Expr poly(0);
    for (size_t g = 0; g < grid; ++g) {
      const __int128 c = values[g * width + w];
      if (c == 0) continue;
      if (c > sym::kPosInf || c < sym::kNegInf)
        return Status::OutOfRange(
            "arch space: a coefficient of the closed form overflows int64");
      poly += sym::Expr(static_cast<int64_t>(c)) * monomials[g];
    }
    exprs[output] += term ? poly * sym::Expr::FromNode(term) : poly;
  }

  // Checked at random points off the grid against fresh analyses.
  std::mt19937_64 rng(20261124);
  for (int v = 0; v < kVerifyPoints; ++v) {
    std::vector<int64_t> at(k);
    sym::Bindings bindings;
    for (size_t a = 0; a < k; ++a) {
      const ArchSymbol& s = space.symbols[a];
      const int64_t span = std::min<int64_t>((s.hi - s.lo) / s.step, 24);
      at[a] = s.lo + s.step * static_cast<int64_t>(
                                  rng() % static_cast<uint64_t>(span + 1));
      bindings[s.name] = at[a];
    }
    Result<Sample> s = sampler.Analyze(at);
    if (!s.ok()) return s.status();
    for (size_t o = 0; o < s->outputs.size(); ++o) {
      const sym::Expr want = s->outputs[o];
      const sym::Expr got =
          o < exprs.size() ? sym::Substitute(exprs[o], bindings) : sym::Expr(0);
      if (got != want) {
        return Status::InvalidArgument(
            "arch space: the closed form disagrees with the analysis at " +
            sampler.Describe(at) + " (" + got.ToString() + " vs " +
            want.ToString() +
            "); a config value enters the costs other than polynomially");
      }
    }
  }

  // The peak: the moments that may be largest for some values of the symbols.
  TrainingReport timeline;
  for (size_t o = 4; o < exprs.size(); ++o) {
    TimelinePoint p;
    p.total = exprs[o];
    timeline.timeline.push_back(p);
  }
  const PeakInfo peak = EvaluatePeak(timeline, {}, /*category_max=*/false);
  if (!peak.error.empty())
    return Status::OutOfRange("arch space: " + peak.error);
  exprs.resize(std::max<size_t>(exprs.size(), 4), sym::Expr(0));
  out.costs.params = exprs[0];
  out.costs.trainable_params = exprs[1];
  out.costs.flops_forward = exprs[2];
  out.costs.flops_backward = exprs[3];
  out.costs.peak_candidates = peak.candidates;
  if (out.costs.peak_candidates.empty())
    out.costs.peak_candidates.push_back(sym::Expr(0));
  for (const ArchSymbol& s : space.symbols) out.symbols.push_back(s.name);
  for (const std::string& s : sampler.input_symbols()) {
    if (std::find(out.symbols.begin(), out.symbols.end(), s) !=
        out.symbols.end())
      return Status::InvalidArgument("arch symbol '" + s +
                                     "' is also an input symbol of the model");
    out.symbols.push_back(s);
  }
  out.analyses = sampler.analyses();
  return out;
}

}  // namespace

Result<std::string> ConfigAt(const ArchSpace& space,
                             const std::vector<int64_t>& values) {
  sym::Context ctx;
  Result<std::vector<ConfigItem>> items = ParseSpace(space, ctx);
  if (!items.ok()) return items.status();
  return RenderConfig(space, *items, values);
}

Result<ArchCosts> AnalyzeArchSpace(const ArchSpace& space, const RuleSet& rules,
                                   sym::Context& ctx) {
  try {
    return AnalyzeOrThrow(space, rules, ctx);
  } catch (const sym::Error& e) {
    return Status::OutOfRange(std::string("arch space: ") + e.what());
  }
}

}  // namespace torchcost
