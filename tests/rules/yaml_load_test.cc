// Tests of LoadYaml: the subset parser where it reads the text, yaml-cpp for
// the rest, yaml-cpp's errors with their positions.
#include "rules/yaml_load.h"

#include <gtest/gtest.h>

namespace torchcost::rules {
namespace {

TEST(YamlLoadTest, WhatTheSubsetLeavesIsReadByYamlCpp) {
  Result<YamlDocument> block = LoadYaml("a: |\n  text\nb: [c,\n  d]\n");
  ASSERT_TRUE(block.ok()) << block.status().message();
  EXPECT_EQ(block->root()["a"].Scalar(),
            "text\n");  // A block scalar keeps its newline.
  EXPECT_EQ(block->root()["b"].size(), 2u);
  Result<YamlDocument> null_value = LoadYaml("a:\nb: ~\n");
  ASSERT_TRUE(null_value.ok());
  EXPECT_TRUE(null_value->root()["a"].IsNull());
  EXPECT_TRUE(null_value->root()["b"].IsNull());
}

TEST(YamlLoadTest, SyntaxErrorsAreYamlCppsWithTheirPosition) {
  YamlMark mark;
  Result<YamlDocument> bad = LoadYaml("a: b\nc: [d, e\nf: g\n", &mark);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kParseError);
  EXPECT_FALSE(bad.status().message().empty());
  EXPECT_GE(mark.line, 1);  // Not before the open flow list (0-based line 1).
}

TEST(YamlLoadTest, BothParsersGiveOneTree) {
  const char* kText = "x: &a [1, 2]\ny:\n  - *a\n  - 'q'\n";
  Result<YamlDocument> either = LoadYaml(kText);
  Result<YamlDocument> reference = LoadYamlWithYamlCpp(kText);
  ASSERT_TRUE(either.ok() && reference.ok());
  std::string difference;
  EXPECT_TRUE(SameYamlTree(either->root(), reference->root(), &difference))
      << difference;
  EXPECT_EQ(reference->root()["y"][0][1].Scalar(), "2");
  EXPECT_EQ(reference->root()["y"][1].Tag(), "!");
}

TEST(YamlLoadTest, DeepNestingAndExpandingAliasesAreRefused) {
  // 100 nested flow sequences: past the 64 levels a rule file could need.
  const std::string deep =
      "a: " + std::string(100, '[') + std::string(100, ']');
  YamlMark mark;
  Result<YamlDocument> nested = LoadYamlWithYamlCpp(deep, &mark);
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("nested deeper than 64 levels"),
            std::string::npos)
      << nested.status().message();
  EXPECT_EQ(mark.line, 0);
  // Aliases of aliases: 10^7 leaves once expanded ("billion laughs").
  std::string laughs = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 6; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    laughs += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) laughs += (j ? ", " : "") + prev;
    laughs += "]\n";
  }
  Result<YamlDocument> expanded = LoadYamlWithYamlCpp(laughs);
  ASSERT_FALSE(expanded.ok());
  EXPECT_NE(expanded.status().message().find("more than 1000000 nodes"),
            std::string::npos)
      << expanded.status().message();
  // The subset parser reads it: its aliases share their anchor's node, so
  // nothing is expanded.
  Result<YamlDocument> shared = LoadYaml(laughs);
  ASSERT_TRUE(shared.ok()) << shared.status().message();
  EXPECT_EQ(shared->root()["l6"][9][9][9][9][9][9][9].Scalar(), "x");
}

}  // namespace
}  // namespace torchcost::rules
