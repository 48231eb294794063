// Tests of the module attributes file (tools/export/module_attrs.py's format).
#include "import/module_attrs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace torchcost::import {
namespace {

using ::testing::HasSubstr;

TEST(ModuleAttrs, ReadsNumbersBoolsAndStrings) {
  const std::string text =
      R"({"format": "torchcost.modules", "version": 1, "modules": {
      "": {"type": "Net", "training": false, "attrs": {}},
      "enc.self_attn": {"type": "MultiheadAttention", "training": false,
                        "attrs": {"dropout": 0.25, "batch_first": true, "num_heads": 2}},
      "sd": {"type": "StochasticDepth", "training": true, "attrs": {"p": 0.1, "mode": "row"}}}})";
  Result<ModuleAttrsMap> got = ParseModuleAttrs(text, "m.pt: x");
  ASSERT_TRUE(got.ok()) << got.status().message();
  const ModuleAttrsMap& m = got.value();
  ASSERT_EQ(m.size(), 3u);
  const ModuleAttrs& mha = m.at("enc.self_attn");
  EXPECT_EQ(mha.type, "MultiheadAttention");
  EXPECT_FALSE(mha.training);
  EXPECT_DOUBLE_EQ(mha.numbers.at("dropout"), 0.25);
  EXPECT_DOUBLE_EQ(mha.numbers.at("batch_first"), 1.0);
  EXPECT_DOUBLE_EQ(mha.numbers.at("num_heads"), 2.0);
  EXPECT_TRUE(m.at("sd").training);
  EXPECT_EQ(m.at("sd").strings.at("mode"), "row");
}

TEST(ModuleAttrs, BadInputNamesTheFileAndKey) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"{", "m.pt: x: not valid JSON"},
      {R"({"format": "other", "version": 1, "modules": {}})", "key 'format'"},
      {R"({"format": 7, "version": 1, "modules": {}})", "key 'format'"},
      {"[1, 2]", "key 'format'"},
      {R"({"format": "torchcost.modules", "version": 2, "modules": {}})",
       "key 'version'"},
      {R"({"format": "torchcost.modules", "version": 1})", "key 'modules'"},
      {R"({"format": "torchcost.modules", "version": 1, "modules": {"a": 3}})",
       "module 'a': expected an object"},
      {R"({"format": "torchcost.modules", "version": 1, "modules": {"a": {"training": 1}}})",
       "key 'training'"},
      {R"({"format": "torchcost.modules", "version": 1, "modules": {"a": {"attrs": {"p": [1]}}}})",
       "attribute 'p'"},
  };
  for (const Case& c : cases) {
    Result<ModuleAttrsMap> got = ParseModuleAttrs(c.text, "m.pt: x");
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_THAT(got.status().message(), HasSubstr(c.says)) << c.text;
  }
}

}  // namespace
}  // namespace torchcost::import
