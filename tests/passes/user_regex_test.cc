// Tests of user regular expressions: what std::regex's backtracking matcher
// takes exponential time on (fuzz/cli_spec_fuzz.cc found "h***...*" on
// --checkpoint) matches in polynomial time, and the limits are errors.
#include "passes/user_regex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>

namespace torchcost::passes {
namespace {

const char kFound[] =
    "h******************************[0Se,\xcd\xca"
    "3C,32:flo\"tt5ctypeIcE/9]+";

TEST(UserRegexTest, MatchesAsECMAScript) {
  EXPECT_TRUE(std::regex_search("transformer.h.11.attn",
                                UserRegex(R"(h\.[0-9]+\.attn$)")));
  EXPECT_FALSE(std::regex_search("transformer.h.11.mlp",
                                 UserRegex(R"(h\.[0-9]+\.attn$)")));
  EXPECT_TRUE(std::regex_search("model.layers.0.self_attn.q_proj",
                                UserRegex("q_proj|v_proj")));
  EXPECT_TRUE(
      std::regex_search("encoder_layer_3", UserRegex("layer_[0-9]{1,2}")));
}

TEST(UserRegexTest, NestedQuantifiersMatchInPolynomialTime) {
  // A backtracking matcher tries ~2^n ways to split n characters among
  // (a|a)* or a**; the breadth-first matcher visits each state once per
  // character.
  const std::string text(40, 'a');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(std::regex_search(text + "!", UserRegex("^(a|a)*$")));
  EXPECT_FALSE(std::regex_search(text + "!", UserRegex("^(a*)*$")));
  // The fuzzer's pattern, verbatim (--checkpoint; it hung on GPT-2's module
  // paths).
  try {
    (void)std::regex_search("transformer.h.0.attn.c_attn", UserRegex(kFound));
  } catch (const std::regex_error&) {
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 2.0);
}

TEST(UserRegexTest, LimitsAreRegexErrors) {
  EXPECT_THROW(UserRegex(std::string(kMaxRegexLength + 1, 'a')),
               std::regex_error);
  EXPECT_THROW(UserRegex(std::string(kMaxRegexNesting + 1, '(') +
                         std::string(kMaxRegexNesting + 1, ')')),
               std::regex_error);
  EXPECT_THROW(UserRegex("a{101}"), std::regex_error);
  EXPECT_THROW(UserRegex("a{1,1000000}"), std::regex_error);
  EXPECT_NO_THROW(UserRegex("a{1,100}"));
  // Back-references need backtracking.
  EXPECT_THROW(UserRegex("(a)\\1"), std::regex_error);
  // A back-reference number beyond a long: libstdc++'s compiler overflowed
  // (UBSan, found by fuzz_cli_spec).
  EXPECT_THROW(UserRegex("(a)\\3879461168601942738790"), std::regex_error);
  EXPECT_NO_THROW(UserRegex("a\\0"));
  EXPECT_THROW(UserRegex("(unclosed"), std::regex_error);
}

}  // namespace
}  // namespace torchcost::passes
