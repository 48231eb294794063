#include "report/format.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torchcost::report {
namespace {

// The prefixes of one unit, from the plain number up, and the base between
// them.
struct Scale {
  __int128 base;
  std::vector<const char*>
      prefixes;      // prefixes[0] is the plain number's suffix.
  const char* word;  // Appended after the prefix ("MACs"), may be empty.
};

const Scale& ScaleOf(Unit unit) {
  static const Scale kCount{1000, {"", " K", " M", " G", " T", " P", " E"}, ""};
  static const Scale kMacs{
      1000, {" ", " K", " M", " G", " T", " P", " E"}, "MACs"};
  static const Scale kFlops{
      1000, {" ", " K", " M", " G", " T", " P", " E"}, "FLOPs"};
  static const Scale kBytes{
      1024, {" ", " Ki", " Mi", " Gi", " Ti", " Pi", " Ei"}, "B"};
  switch (unit) {
    case Unit::kMacs:
      return kMacs;
    case Unit::kFlops:
      return kFlops;
    case Unit::kBytes:
      return kBytes;
    case Unit::kCount:
    default:
      return kCount;
  }
}

// Returns round(num / den) for num >= 0, den > 0, rounding halves up.
__int128 RoundDiv(__int128 num, __int128 den) { return (num + den / 2) / den; }

}  // namespace

const char* SeverityName(Diagnostic::Severity severity) {
  switch (severity) {
    case Diagnostic::Severity::kNote:
      return "note";
    case Diagnostic::Severity::kError:
      return "error";
    case Diagnostic::Severity::kWarning:
    default:
      return "warning";
  }
}

std::string IntText(__int128 v) { return sym::Int128ToString(v); }

std::vector<std::string_view> MaxOperands(std::string_view text) {
  // NB: one pass pairs the parentheses, so a chain of n nested max costs
  // O(text), not O(n * text).
  std::vector<size_t> close(text.size(), std::string_view::npos), open;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') {
      open.push_back(i);
    } else if (text[i] == ')' && !open.empty()) {
      close[open.back()] = i;
      open.pop_back();
    }
  }
  std::vector<std::string_view> out;
  // [begin, end) is one operand; a max(...) spanning all of it is split at its
  // top-level comma.
  std::vector<std::pair<size_t, size_t>> todo = {{0, text.size()}};
  while (!todo.empty()) {
    const auto [begin, end] = todo.back();
    todo.pop_back();
    const std::string_view operand = text.substr(begin, end - begin);
    size_t comma = std::string_view::npos;
    if (operand.substr(0, 4) == "max(" && close[begin + 3] == end - 1) {
      for (size_t i = begin + 4; i < end - 1; ++i) {
        if (text[i] == '(' && close[i] != std::string_view::npos) {
          i = close[i];
        } else if (text[i] == ',') {
          comma = i;
          break;
        }
      }
    }
    if (comma == std::string_view::npos || comma + 2 > end - 1) {
      out.push_back(operand);
      continue;
    }
    // The right operand is pushed first, so the left one comes out first.
    todo.push_back({comma + 2, end - 1});
    todo.push_back({begin + 4, comma});
  }
  return out;
}

std::string ShortText(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  // Cuts `t` to at most n characters, at the last " + " or " - " outside
  // parentheses that leaves room for " ...".
  auto cut = [](std::string_view t, size_t n) {
    if (t.size() <= n) return std::string(t);
    size_t at = std::string_view::npos;
    int depth = 0;
    for (size_t i = 0; i + 4 <= n && i + 3 <= t.size(); ++i) {
      if (t[i] == '(') ++depth;
      if (t[i] == ')') --depth;
      if (depth == 0 && i > 0 &&
          (t.substr(i, 3) == " + " || t.substr(i, 3) == " - "))
        at = i;
    }
    if (at != std::string_view::npos)
      return std::string(t.substr(0, at)) + " ...";
    return std::string(t.substr(0, n > 3 ? n - 3 : 0)) + "...";
  };
  const std::vector<std::string_view> operands = MaxOperands(text);
  if (operands.size() < 2) return cut(text, limit);
  // "max(" + operands + ", ... N more)": room is kept for the count.
  const size_t tail = std::string(", ...  more)").size() +
                      std::to_string(operands.size()).size();
  std::string out = "max(";
  size_t shown = 0;
  for (; shown < operands.size(); ++shown) {
    const std::string_view op = operands[shown];
    const size_t sep = shown == 0 ? 0 : 2;
    if (out.size() + sep + op.size() + tail > limit) {
      if (shown == 0) {
        out +=
            cut(op, limit > out.size() + tail ? limit - out.size() - tail : 4);
        ++shown;
      }
      break;
    }
    out += std::string(sep ? ", " : "") + std::string(op);
  }
  if (shown == operands.size()) return out + ")";
  return out + ", ... " + std::to_string(operands.size() - shown) + " more)";
}

std::string Human(__int128 v, Unit unit) {
  const Scale& scale = ScaleOf(unit);
  // NB: the most negative __int128 has no absolute value; no count comes near
  // it.
  const bool negative = v < 0;
  const __int128 mag = negative ? -v : v;
  const std::string sign = negative ? "-" : "";
  if (mag < scale.base)
    return sign + IntText(mag) + scale.prefixes[0] + scale.word;
  // Pick the largest prefix whose divisor is <= mag; then round to hundredths,
  // moving up one prefix when the mantissa rounds to `base` (999.995 K -> 1.00
  // M).
  size_t k = 0;
  __int128 div = 1;
  while (k + 1 < scale.prefixes.size() && mag / div >= scale.base) {
    div *= scale.base;
    ++k;
  }
  __int128 hundredths = RoundDiv(mag * 100, div);
  if (hundredths >= scale.base * 100 && k + 1 < scale.prefixes.size()) {
    div *= scale.base;
    ++k;
    hundredths = RoundDiv(mag * 100, div);
  }
  const __int128 whole = hundredths / 100;
  const int frac = static_cast<int>(hundredths % 100);
  char frac_text[4];
  std::snprintf(frac_text, sizeof(frac_text), "%02d", frac);
  return sign + IntText(whole) + "." + frac_text + scale.prefixes[k] +
         scale.word;
}

std::string HumanAndExact(__int128 v, Unit unit) {
  std::string human = Human(v, unit);
  std::string exact = IntText(v);
  return human.rfind(exact, 0) == 0 ? human : human + " (" + exact + ")";
}

std::string HumanAndExact(const sym::Expr& e, const sym::Bindings& bindings,
                          Unit unit) {
  if (auto v = TryEvaluate(e, bindings)) return HumanAndExact(*v, unit);
  return Bind(e, bindings).ToString();
}

std::string Percent(long double fraction) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2Lf%%", fraction * 100.0L);
  return buf;
}

std::optional<__int128> TryEvaluate(const sym::Expr& e,
                                    const sym::Bindings& bindings) {
  if (auto c = e.AsConstant()) return static_cast<__int128>(*c);
  try {
    Result<__int128> r = sym::Evaluate128(e, bindings);
    if (r.ok()) return r.value();
  } catch (const std::exception&) {
    // Evaluation is documented not to throw; a report never fails on it anyway.
  }
  return std::nullopt;
}

sym::Expr Bind(const sym::Expr& e, const sym::Bindings& bindings) {
  if (e.IsConstant() || bindings.empty()) return e;
  try {
    return sym::Substitute(e, bindings);
  } catch (const std::exception&) {
    return e;  // Overflow while substituting: the unbound text is still exact.
  }
}

std::string HumanExpr(const sym::Expr& e, const sym::Bindings& bindings,
                      Unit unit) {
  if (auto v = TryEvaluate(e, bindings)) return Human(*v, unit);
  return Bind(e, bindings).ToString();
}

std::string PercentOf(const sym::Expr& part, const sym::Expr& total,
                      const sym::Bindings& bindings) {
  std::optional<__int128> p = TryEvaluate(part, bindings);
  if (p && *p == 0) return Percent(0);
  std::optional<__int128> t = TryEvaluate(total, bindings);
  if (p && t && *t != 0)
    return Percent(static_cast<long double>(*p) / static_cast<long double>(*t));
  // NB: with symbols unbound, the share is shown when it does not depend on
  // them (costs proportional to the batch): it must agree at two points.
  std::string shares[2];
  const int64_t points[2] = {1, 97};
  for (int i = 0; i < 2; ++i) {
    sym::Bindings at = bindings;
    try {
      for (const std::string& s : sym::FreeSymbols(part))
        at.emplace(s, points[i]);
      for (const std::string& s : sym::FreeSymbols(total))
        at.emplace(s, points[i]);
    } catch (const std::exception&) {
      return "-";
    }
    std::optional<__int128> pp = TryEvaluate(part, at),
                            tt = TryEvaluate(total, at);
    if (!pp || !tt || *tt == 0) return "-";
    shares[i] =
        Percent(static_cast<long double>(*pp) / static_cast<long double>(*tt));
  }
  return shares[0] == shares[1] ? shares[0] : "-";
}

long double RankValue(const sym::Expr& e, const sym::Bindings& bindings) {
  if (auto v = TryEvaluate(e, bindings)) return static_cast<long double>(*v);
  sym::Bindings all = bindings;
  try {
    for (const std::string& s : sym::FreeSymbols(e)) all.emplace(s, 1);
  } catch (const std::exception&) {
    return 0;
  }
  if (auto v = TryEvaluate(e, all)) return static_cast<long double>(*v);
  return 0;
}

std::string DimText(const sym::Expr& dim, const sym::Bindings& bindings) {
  if (auto v = TryEvaluate(dim, bindings)) return IntText(*v);
  return Bind(dim, bindings).ToString();
}

std::string ShapeText(const sym::Shape& shape, const sym::Bindings& bindings) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += DimText(shape[i], bindings);
  }
  return out + "]";
}

}  // namespace torchcost::report
