// Regular expressions typed by users (--freeze, --checkpoint, --fsdp-unit,
// targets= and skip= of the PEFT and GaLore specs), compiled so that matching
// takes time polynomial in the text however the pattern is written.
#ifndef TORCHCOST_SRC_PASSES_USER_REGEX_H_
#define TORCHCOST_SRC_PASSES_USER_REGEX_H_

#include <cctype>
#include <cstddef>
#include <regex>
#include <string>
#include <utility>

namespace torchcost::passes {

// Limits on a user's pattern (a documented limit: module-path patterns are
// short).
inline constexpr size_t kMaxRegexLength = 512;  // Characters.
inline constexpr int kMaxRegexNesting = 32;     // Depth of ( and [.
inline constexpr long kMaxRegexRepeat = 100;    // n and m of {n,m}.

// A pattern over the limits: a std::regex_error whose what() says which.
class RegexLimitError : public std::regex_error {
 public:
  explicit RegexLimitError(std::string what)
      : std::regex_error(std::regex_constants::error_complexity),
        what_(std::move(what)) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

// Compiles `pattern` as an ECMAScript regular expression; throws
// std::regex_error if it is not one or exceeds the limits above.
// NB: libstdc++'s default matcher backtracks (exponential time on "h**" or
// "(a|a)*", recursion as deep as the text); the polynomial flag selects its
// breadth-first (Thompson) matcher, which refuses back-references instead. The
// limits keep the compiler's recursion and the automaton small.
inline std::regex UserRegex(const std::string& pattern) {
  if (pattern.size() > kMaxRegexLength) {
    throw RegexLimitError("longer than " + std::to_string(kMaxRegexLength) +
                          " characters");
  }
  int depth = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      // NB: refused here rather than by the polynomial matcher, because
      // libstdc++ reads a back-reference's number with unchecked arithmetic
      // ("\\3879461168601942738790" overflows a long).
      if (i + 1 < pattern.size() && pattern[i + 1] >= '1' &&
          pattern[i + 1] <= '9') {
        throw RegexLimitError("back-references are not supported");
      }
      ++i;
    } else if (c == '(' || c == '[') {
      if (++depth > kMaxRegexNesting) {
        throw RegexLimitError("groups nested deeper than " +
                              std::to_string(kMaxRegexNesting));
      }
    } else if (c == ')' || c == ']') {
      if (depth > 0) --depth;
    } else if (c == '{') {
      // Each number of a {n} or {n,m}: a count over the limit multiplies the
      // automaton.
      for (size_t j = i + 1; j < pattern.size() && pattern[j] != '}'; ++j) {
        long n = 0;
        while (j < pattern.size() &&
               std::isdigit(static_cast<unsigned char>(pattern[j]))) {
          n = n * 10 + (pattern[j++] - '0');
          if (n > kMaxRegexRepeat)
            throw RegexLimitError("a repeat count above " +
                                  std::to_string(kMaxRegexRepeat));
        }
        if (j >= pattern.size() || pattern[j] == '}') break;
      }
    }
  }
#ifdef __GLIBCXX__
  return std::regex(
      pattern, std::regex::ECMAScript | std::regex_constants::__polynomial);
#else
  return std::regex(pattern, std::regex::ECMAScript);
#endif
}

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_PASSES_USER_REGEX_H_
