// Human-readable numbers for reports: counts with SI suffixes, MACs, FLOPs,
// binary byte sizes, percentages, and symbolic values as exact text.
#ifndef TORCHCOST_SRC_REPORT_FORMAT_H_
#define TORCHCOST_SRC_REPORT_FORMAT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/sym.h"

namespace torchcost::report {

// The quantity a number counts, which picks its suffix and its base.
enum class Unit {
  kCount,  // "61.71 K": SI suffixes K, M, G, T, P, E (base 1000).
  kMacs,   // "1.82 GMACs".
  kFlops,  // "3.64 GFLOPs".
  kBytes,  // "44.59 MiB": binary suffixes KiB, MiB, ... (base 1024).
};

// Returns `v` with two decimals and a unit prefix, or the exact integer below
// one prefix step (1000, or 1024 for bytes): "11.69 M", "999", "840 MACs", "512
// B". NB: rounding is exact (integer arithmetic, half away from zero), and a
// mantissa that rounds to 1000.00 moves to the next prefix ("1.00 M", not
// "1000.00 K").
std::string Human(__int128 v, Unit unit);

// Returns "61.71 K (61706)": Human(v), then the exact integer in parentheses
// unless the human form already starts with it ("999").
std::string HumanAndExact(__int128 v, Unit unit);

// Returns HumanAndExact of the value of `e` if it evaluates under `bindings`,
// else the exact text of `e` with the bound symbols substituted.
std::string HumanAndExact(const sym::Expr& e, const sym::Bindings& bindings,
                          Unit unit);

// Returns `fraction` (0.1234) as a percentage with two decimals ("12.34%").
std::string Percent(long double fraction);

// Returns the value of `e` under `bindings` in 128-bit arithmetic, or nullopt
// if a symbol is unbound or the arithmetic overflows.
std::optional<__int128> TryEvaluate(const sym::Expr& e,
                                    const sym::Bindings& bindings);

// Returns `e` with the bound symbols replaced; `e` itself if substitution
// fails.
sym::Expr Bind(const sym::Expr& e, const sym::Bindings& bindings);

// Returns Human(value) if `e` evaluates under `bindings`, else the exact
// canonical text of `e` with the bound symbols substituted ("1819066368*B").
std::string HumanExpr(const sym::Expr& e, const sym::Bindings& bindings,
                      Unit unit);

// Returns part / total as Percent() if both evaluate under `bindings` (and
// total is non-zero), "0.00%" if part is zero; with symbols unbound, the share
// if it is the same for every value of them (checked at two points), else "-".
std::string PercentOf(const sym::Expr& part, const sym::Expr& total,
                      const sym::Bindings& bindings);

// Returns one dim as an integer if it evaluates under `bindings`, else its
// canonical text.
std::string DimText(const sym::Expr& dim, const sym::Bindings& bindings);

// Returns a shape as PyTorch prints sizes: "[B, 3, 224, 224]"; "[]" for a
// scalar.
std::string ShapeText(const sym::Shape& shape, const sym::Bindings& bindings);

// Returns a sort key for `e`: its value under `bindings`, with unbound symbols
// taken as 1 (their smallest dim value); 0 if even that fails.
long double RankValue(const sym::Expr& e, const sym::Bindings& bindings);

// Returns the lower-case name of a diagnostic's severity ("note", "warning",
// "error").
const char* SeverityName(Diagnostic::Severity severity);

// Returns the decimal text of `v` ("-12", "3637321728").
std::string IntText(__int128 v);

// Returns the operands of a nested max in expression text ("max(a, max(b, c))"
// gives a, b, c), in order; the text itself if it is not one max(...) call.
std::vector<std::string_view> MaxOperands(std::string_view text);

// Returns `text` if it has at most `limit` characters; else a nested max as
// its first operands and a count, "max(a, b, ... 9 more)", and other text cut
// with "..." (an operand too long for `limit` is cut the same way).
std::string ShortText(std::string_view text, size_t limit);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_FORMAT_H_
