// torch.einsum equation parsing; see einsum.h.
#include "rules/einsum.h"

#include <array>
#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/value.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules {
namespace {

// One operand's (or the output's) subscripts: letters, and where "..." sits
// (-1: absent).
struct Subscripts {
  std::string letters;
  int ellipsis = -1;  // Index into `letters` before which the "..." dims go.
};

Status Fail(const std::string& m) {
  return Status::InvalidArgument("einsum: " + m);
}

Result<Subscripts> ParseTerm(std::string_view t, const std::string& what) {
  Subscripts s;
  for (size_t i = 0; i < t.size(); ++i) {
    const char ch = t[i];
    if (ch == ' ') continue;
    if (ch == '.') {
      if (t.substr(i, 3) != "..." || s.ellipsis >= 0)
        return Fail("bad '...' in " + what + " '" + std::string(t) + "'");
      s.ellipsis = static_cast<int>(s.letters.size());
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch))) {
      return Fail("invalid subscript '" + std::string(1, ch) + "' in " + what +
                  " '" + std::string(t) + "'");
    }
    s.letters.push_back(ch);
  }
  return s;
}

}  // namespace

Result<EinsumInfo> ParseEinsum(std::string_view equation,
                               const std::vector<sym::Shape>& shapes,
                               sym::Context& ctx) {
  EinsumInfo info;
  const size_t arrow = equation.find("->");
  std::string_view lhs = equation.substr(0, arrow);
  std::vector<Subscripts> ops;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    std::string_view term = lhs.substr(start, comma == std::string_view::npos
                                                  ? std::string_view::npos
                                                  : comma - start);
    Result<Subscripts> s =
        ParseTerm(term, "operand " + std::to_string(ops.size()));
    if (!s.ok()) return s.status();
    ops.push_back(*s);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (ops.size() != shapes.size()) {
    return Fail("the equation '" + std::string(equation) + "' has " +
                std::to_string(ops.size()) + " operands but " +
                std::to_string(shapes.size()) + " tensors were given");
  }
  std::array<std::optional<sym::Expr>, 128> size;
  std::array<int, 128> count{};
  std::string order;  // Distinct letters in order of first appearance.
  sym::Shape ell;     // Broadcast "..." dims.
  bool any_ellipsis = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    const Subscripts& s = ops[k];
    const sym::Shape& shape = shapes[k];
    const size_t nl = s.letters.size();
    if (s.ellipsis < 0 ? shape.size() != nl : shape.size() < nl) {
      return Fail(
          "operand " + std::to_string(k) + " has shape " +
          ShapeToString(shape) + " (rank " + std::to_string(shape.size()) +
          ") but subscripts '" + s.letters + "'" +
          (s.ellipsis >= 0 ? " with '...' need rank >= " : " need rank ") +
          std::to_string(nl));
    }
    const size_t n_ell = shape.size() - nl;
    sym::Shape mine;
    size_t pos = 0;
    for (size_t i = 0; i <= nl; ++i) {
      if (static_cast<int>(i) == s.ellipsis) {
        any_ellipsis = true;
        for (size_t e = 0; e < n_ell; ++e) mine.push_back(shape[pos++]);
      }
      if (i == nl) break;
      const unsigned char ch = static_cast<unsigned char>(s.letters[i]);
      const sym::Expr& d = shape[pos++];
      ++count[ch];
      if (!size[ch]) {
        size[ch] = d;
        order.push_back(static_cast<char>(ch));
      } else if (*size[ch] != d) {
        // a size 1 broadcasts
        if (ctx.ProveEq(d, 1) == sym::Truth::kTrue) continue;
        if (ctx.ProveEq(*size[ch], 1) == sym::Truth::kTrue) {
          size[ch] = d;
          continue;
        }
        sym::Truth t = ctx.ProveEq(*size[ch], d);
        if (t == sym::Truth::kFalse) {
          return Fail("subscript '" + std::string(1, static_cast<char>(ch)) +
                      "' has size " + size[ch]->ToString() +
                      " and, in operand " + std::to_string(k) + ", size " +
                      d.ToString());
        }
        if (t == sym::Truth::kUnknown) {
          info.assumptions.push_back(
              {*size[ch], d,
               "einsum: sizes of subscript '" +
                   std::string(1, static_cast<char>(ch)) + "' must be equal"});
        }
      }
    }
    // Broadcast the "..." dims, aligned on the right.
    if (mine.size() > ell.size())
      ell.insert(ell.begin(), mine.size() - ell.size(), sym::Expr(1));
    for (size_t i = 0; i < mine.size(); ++i) {
      sym::Expr& a = ell[ell.size() - mine.size() + i];
      const sym::Expr& b = mine[i];
      if (a == b || ctx.ProveEq(b, 1) == sym::Truth::kTrue) continue;
      if (ctx.ProveEq(a, 1) == sym::Truth::kTrue) {
        a = b;
        continue;
      }
      sym::Truth t = ctx.ProveEq(a, b);
      if (t == sym::Truth::kFalse) {
        return Fail("'...' dims " + a.ToString() + " and " + b.ToString() +
                    " (operand " + std::to_string(k) + ") do not broadcast");
      }
      if (t == sym::Truth::kUnknown) {
        info.assumptions.push_back({a, b, "einsum: '...' dims must be equal"});
      }
    }
  }
  Subscripts out;
  if (arrow == std::string_view::npos) {
    // Implicit output: "..." first, then the letters used once, sorted.
    if (any_ellipsis) out.ellipsis = 0;
    for (int ch = 0; ch < 128; ++ch) {
      if (count[ch] == 1) out.letters.push_back(static_cast<char>(ch));
    }
  } else {
    Result<Subscripts> s = ParseTerm(equation.substr(arrow + 2), "output");
    if (!s.ok()) return s.status();
    out = *s;
    std::array<bool, 128> seen{};
    for (char ch : out.letters) {
      const unsigned char u = static_cast<unsigned char>(ch);
      if (!size[u])
        return Fail("output subscript '" + std::string(1, ch) +
                    "' appears in no operand");
      if (seen[u])
        return Fail("output subscript '" + std::string(1, ch) +
                    "' appears more than once");
      seen[u] = true;
    }
    if (out.ellipsis < 0 && !ell.empty()) {
      // NB: torch requires "..." in the output when an operand has broadcast
      // dims; reduce them here.
      bool all_one = true;
      for (const auto& e : ell)
        all_one = all_one && ctx.ProveEq(e, 1) == sym::Truth::kTrue;
      if (!all_one)
        return Fail("the output lacks '...' but the operands have '...' dims " +
                    ShapeToString(ell));
    }
  }
  for (size_t i = 0; i <= out.letters.size(); ++i) {
    if (static_cast<int>(i) == out.ellipsis)
      info.out.insert(info.out.end(), ell.begin(), ell.end());
    if (i == out.letters.size()) break;
    info.out.push_back(*size[static_cast<unsigned char>(out.letters[i])]);
  }
  info.sizes = ell;
  for (char ch : order)
    info.sizes.push_back(*size[static_cast<unsigned char>(ch)]);
  return info;
}

}  // namespace torchcost::rules
