// Tests of the fast YAML subset parser: on every built-in rule file, whole and
// chunk by chunk, it builds yaml-cpp's tree (kinds, scalars, quoting, marks);
// what it does not read it leaves to yaml-cpp instead of misreading.
#include "rules/yaml_subset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules/builtin_rules_data.h"
#include "rules/rule_chunks.h"
#include "rules/yaml_load.h"

namespace torchcost::rules {
namespace {

using ::testing::HasSubstr;

// Expects the subset parser to read `text` as yaml-cpp does.
void ExpectSameAsYamlCpp(const std::string& text, const std::string& what) {
  Result<YamlDocument> fast = ParseYamlSubset(text);
  ASSERT_TRUE(fast.ok()) << what << ": " << fast.status().message();
  Result<YamlDocument> reference = LoadYamlWithYamlCpp(text);
  ASSERT_TRUE(reference.ok()) << what << ": " << reference.status().message();
  std::string difference;
  EXPECT_TRUE(SameYamlTree(fast->root(), reference->root(), &difference))
      << what << ": " << difference;
}

TEST(YamlSubsetTest, BuiltinRuleFilesReadAsYamlCppReadsThem) {
  for (const EmbeddedRuleFile& f : BuiltinRuleFiles())
    ExpectSameAsYamlCpp(f.text, f.path);
}

TEST(YamlSubsetTest, BuiltinRuleChunksReadAsYamlCppReadsThem) {
  int chunks = 0;
  for (const EmbeddedRuleFile& f : BuiltinRuleFiles()) {
    Result<SplitFile> split = SplitRuleFile(f.text);
    ASSERT_TRUE(split.ok()) << f.path;
    for (const RuleChunk& c : split->chunks) {
      std::vector<int> line_of;
      ExpectSameAsYamlCpp(
          ChunkAsFile(f.text, *split, &c, false, &line_of),
          std::string(f.path) + " rule " + c.rules.back().ops[0]);
      ++chunks;
    }
  }
  EXPECT_GT(chunks, 100);
}

TEST(YamlSubsetTest, ConstructsOfTheSubset) {
  ExpectSameAsYamlCpp(R"yaml(
version: 1
rules:
- op: [a::b, "c::d",   # a flow list over lines
         'e''f']    # quoted items
  let: &lets
    X: a + b   # a comment
    Y: "q \" \\ r"
  saved: {out: {needed_for: [self, other]}, x: y, z: a::b}
  cases:
    - when: not x
      let: *lets
    -
      when: y
  k: -1
  url: a#b
empty_flow: []
empty_map: {}
anchored_scalar: &s text
alias: *s
)yaml",
                      "subset");
}

TEST(YamlSubsetTest, WhatItDoesNotReadIsLeftToYamlCpp) {
  const char* kOutside[] = {
      "a:\n\tb: 1\n",    // a tab
      "a: |\n  text\n",  // a block scalar
      "a: b\n  c\n",     // a multi-line plain scalar
      "a: [b,\nc]\n",    // a flow list going on at the key's indent
      "a:\n",            // a null value
      "a: ~\n",          // a null scalar
      "a: \"x\\ty\"\n",  // an escape
      "a: !!str b\n",    // a tag
      "---\na: b\n",     // a document marker
      "a: b: c\n",       // an illegal plain scalar
      "\"a\": b\n",      // a quoted key
      "a: *missing\n",   // an unknown alias
      "a: [b, ]\n",      // a trailing comma
      "a: 'x\n",         // an open quote
      "- - a\n",         // a nested compact sequence
      "a: \xc3\xa9\n",   // a byte that is not ASCII
      // What fuzzing against yaml-cpp found it must leave to yaml-cpp:
      "a:\n  null: [b]\n",  // a null key
      "a: [b?]\n",          // '?' in a flow scalar
      "a: &x &y b\n",       // two anchors
      "a: &x;y b\n",        // an anchor name with other characters
  };
  for (const char* text : kOutside) {
    Result<YamlDocument> fast = ParseYamlSubset(text);
    ASSERT_FALSE(fast.ok()) << text;
    EXPECT_EQ(fast.status().code(), Status::Code::kUnimplemented) << text;
    EXPECT_THAT(fast.status().message(), HasSubstr("outside the YAML subset"))
        << text;
  }
}

}  // namespace
}  // namespace torchcost::rules
