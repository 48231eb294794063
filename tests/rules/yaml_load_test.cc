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

}  // namespace
}  // namespace torchcost::rules
