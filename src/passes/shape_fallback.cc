#include "passes/shape_fallback.h"

#include <map>

namespace torchcost::passes {
namespace {

using rules::RValue;

// Runs the inference once with `bindings`.
bool RunOnce(const ir::Graph& g, int ni, const std::vector<RValue>& values,
             const sym::Bindings& bindings, std::vector<ir::ExampleValue>* outs,
             std::string* why) {
  auto example_of = [&](int v) { return ToExample(values[v], bindings); };
  if (!g.infer_shapes(g.nodes[ni].origin, example_of, outs, why)) return false;
  if (outs->size() != g.nodes[ni].outputs.size()) {
    *why = "the inference gave " + std::to_string(outs->size()) +
           " outputs for " + std::to_string(g.nodes[ni].outputs.size());
    return false;
  }
  return true;
}

// One integer an output holds (a dim or an int), at the base and at each
// perturbed binding.
struct Sample {
  int64_t base = 0;
  // Per symbol, at twice its example; nullopt if that run failed.
  std::vector<std::optional<int64_t>> moved;
  // Per symbol, at three times its example (verifies the fit).
  std::vector<std::optional<int64_t>> checked;
};

// Returns false if the run at three times symbol k's example contradicts `fit`.
bool Verified(const Sample& s, size_t k, const sym::Expr& fit,
              const std::string& name, const sym::Bindings& examples) {
  // NB: that run failed: the two-point fit stands (an assumption).
  if (!s.checked[k]) return true;
  sym::Bindings b = examples;
  b[name] = 3 * examples.at(name);
  Result<int64_t> v = sym::Evaluate(fit, b);
  return v.ok() && *v == *s.checked[k];
}

// Writes one integer in the symbols (see InferFallbackShapes); nullopt if no
// form fits.
std::optional<sym::Expr> Fit(const Sample& s,
                             const std::vector<std::string>& names,
                             const sym::Bindings& examples, sym::Context& ctx) {
  std::vector<size_t> changed;
  for (size_t k = 0; k < names.size(); ++k) {
    if (s.moved[k] && *s.moved[k] != s.base) changed.push_back(k);
  }
  if (changed.empty()) {
    // NB: where the run at twice a symbol failed, a dim equal to its example is
    // taken as the symbol.
    for (size_t k = 0; k < names.size(); ++k) {
      if (!s.moved[k] && examples.at(names[k]) == s.base)
        return ctx.Symbol(names[k]);
    }
    return sym::Expr(s.base);
  }
  if (changed.size() == 1) {
    const size_t k = changed[0];
    const int64_t e = examples.at(names[k]);
    // The dim's change when the symbol goes from e to 2e.
    const int64_t delta = *s.moved[k] - s.base;
    const sym::Expr x = ctx.Symbol(names[k]);
    std::optional<sym::Expr> fit;
    if (delta % e == 0) {
      const int64_t a = delta / e;  // d = a*s + c: d(2e) - d(e) = a*e.
      fit = sym::Expr(a) * x + sym::Expr(s.base - a * e);
    } else if (delta > 0 && e % delta == 0) {
      const int64_t q = e / delta;  // d = s/q + c: d(2e) - d(e) = e/q.
      fit = sym::FloorDiv(x, sym::Expr(q)) + sym::Expr(s.base - e / q);
    }
    if (fit && !Verified(s, k, *fit, names[k], examples)) fit.reset();
    return fit;
  }
  // Several symbols: d = k * product, which doubles with each of them.
  int64_t product = 1;
  sym::Expr term(1);
  for (size_t k : changed) {
    if (*s.moved[k] != 2 * s.base) return std::nullopt;
    product *= examples.at(names[k]);
    term *= ctx.Symbol(names[k]);
  }
  if (product == 0 || s.base % product != 0) return std::nullopt;
  const sym::Expr fit = sym::Expr(s.base / product) * term;
  for (size_t k : changed) {
    if (!Verified(s, k, fit, names[k], examples)) return std::nullopt;
  }
  return fit;
}

}  // namespace

ir::ExampleValue ToExample(const RValue& v, const sym::Bindings& examples) {
  ir::ExampleValue out;
  auto eval = [&](const sym::Expr& e, int64_t* x) {
    Result<int64_t> r = sym::Evaluate(e, examples);
    if (!r.ok()) return false;
    *x = *r;
    return true;
  };
  switch (v.kind) {
    case RValue::Kind::kTensor:
      out.shape.resize(v.t.shape.size());
      for (size_t i = 0; i < v.t.shape.size(); ++i) {
        if (!eval(v.t.shape[i], &out.shape[i])) return ir::ExampleValue();
      }
      out.dtype = v.t.dtype;
      out.kind = ir::ValueKind::kTensor;
      break;
    case RValue::Kind::kInt:
      if (!eval(v.i, &out.i)) return ir::ExampleValue();
      out.kind = ir::ValueKind::kInt;
      break;
    case RValue::Kind::kFloat:
      out.kind = ir::ValueKind::kFloat;
      out.f = v.f;
      break;
    case RValue::Kind::kBool:
      if (v.unknown) return out;
      out.kind = ir::ValueKind::kBool;
      out.b = v.b;
      break;
    case RValue::Kind::kNone:
      out.kind = ir::ValueKind::kNone;
      break;
    case RValue::Kind::kIntList:
      out.ints.resize(v.ints.size());
      for (size_t i = 0; i < v.ints.size(); ++i) {
        if (!eval(v.ints[i], &out.ints[i])) return ir::ExampleValue();
      }
      out.kind = ir::ValueKind::kList;
      break;
    default:
      break;
  }
  return out;
}

InferredShapes InferFallbackShapes(const ir::Graph& g, int ni,
                                   const std::vector<RValue>& values,
                                   const sym::Bindings& examples,
                                   sym::Context& ctx) {
  InferredShapes result;
  if (!g.infer_shapes) {
    result.why = "the model's frontend has no shape inference";
    return result;
  }
  if (g.nodes[ni].origin < 0) {
    result.why = "the node was added by a rewrite";
    return result;
  }
  std::vector<ir::ExampleValue> base;
  if (!RunOnce(g, ni, values, examples, &base, &result.why)) return result;
  result.note = std::move(result.why);
  result.why.clear();
  // The runs at twice each symbol's example (sorted by name: deterministic).
  std::map<std::string, int64_t> sorted(examples.begin(), examples.end());
  std::vector<std::string> names;
  std::vector<std::optional<std::vector<ir::ExampleValue>>> moved, checked;
  for (const auto& [name, e] : sorted) {
    names.push_back(name);
    for (int times : {2, 3}) {
      sym::Bindings b = examples;
      b[name] = times * e;
      std::vector<ir::ExampleValue> outs;
      std::string ignored;
      auto& runs = times == 2 ? moved : checked;
      if (RunOnce(g, ni, values, b, &outs, &ignored)) {
        runs.emplace_back(std::move(outs));
      } else {
        runs.emplace_back(std::nullopt);
      }
    }
  }
  auto sample = [&](size_t o, int d) {  // d < 0: the int output itself.
    Sample s;
    s.base = d < 0 ? base[o].i : base[o].shape[d];
    auto read = [&](const auto& runs,
                    std::vector<std::optional<int64_t>>* into) {
      for (const auto& m : runs) {
        if (!m || (*m)[o].kind != base[o].kind ||
            (d >= 0 && (*m)[o].shape.size() != base[o].shape.size())) {
          into->push_back(std::nullopt);
        } else {
          into->push_back(d < 0 ? (*m)[o].i : (*m)[o].shape[d]);
        }
      }
    };
    read(moved, &s.moved);
    read(checked, &s.checked);
    return s;
  };
  for (size_t o = 0; o < base.size(); ++o) {
    const ir::ExampleValue& ex = base[o];
    RValue out;
    if (ex.kind == ir::ValueKind::kTensor) {
      rules::TensorType t;
      t.dtype = ex.dtype;
      for (size_t d = 0; d < ex.shape.size(); ++d) {
        std::optional<sym::Expr> e =
            Fit(sample(o, static_cast<int>(d)), names, examples, ctx);
        if (!e) {
          result.why = "dim " + std::to_string(d) + " of output " +
                       std::to_string(o) +
                       " does not follow the symbols linearly";
          return result;
        }
        if (!e->IsConstant()) result.fitted = "fitted to the symbols";
        t.shape.push_back(*e);
      }
      out = RValue::Tensor(std::move(t));
    } else if (ex.kind == ir::ValueKind::kInt) {
      std::optional<sym::Expr> e = Fit(sample(o, -1), names, examples, ctx);
      if (e) out = RValue::Int(*e);
    } else if (ex.kind == ir::ValueKind::kFloat) {
      out = RValue::Float(ex.f);
    } else if (ex.kind == ir::ValueKind::kBool) {
      out = RValue::Bool(ex.b);
    } else if (ex.kind == ir::ValueKind::kNone) {
      out = RValue::None();
    }
    result.outputs.push_back(std::move(out));
  }
  if (!result.fitted.empty()) {
    std::string at;
    for (const auto& [name, e] : sorted) {
      at += (at.empty() ? "" : ", ") + name + " = " + std::to_string(e) + ", " +
            std::to_string(2 * e) + " and " + std::to_string(3 * e);
    }
    result.fitted = "LibTorch's shapes at " + at;
  }
  result.ok = true;
  return result;
}

}  // namespace torchcost::passes
