// Tests of YamlNode's accessors, which follow yaml-cpp's YAML::Node: missing
// keys are undefined, a collection's Scalar() is empty, a scalar's size is 0.
#include "rules/yaml_node.h"

#include <gtest/gtest.h>

#include <string>

namespace torchcost::rules {
namespace {

// {k: v, k: w, s: [a, "b"]} built by hand.
YamlDocument Sample() {
  YamlDocument doc;
  auto scalar = [&](const char* text, bool quoted, int line) {
    YamlNode::Data* d = doc.NewNode(YamlNode::Kind::kScalar, YamlMark{line, 4});
    d->scalar = text;
    d->quoted = quoted;
    return YamlNode(d);
  };
  YamlNode::Data* seq = doc.NewNode(YamlNode::Kind::kSequence, YamlMark{2, 3});
  seq->items.emplace_back(scalar("a", false, 2));
  seq->items.emplace_back(scalar("b", true, 2));
  YamlNode::Data* map = doc.NewNode(YamlNode::Kind::kMap, YamlMark{0, 0});
  map->items.emplace_back(scalar("k", false, 0), scalar("v", false, 0));
  map->items.emplace_back(scalar("k", false, 1), scalar("w", false, 1));
  map->items.emplace_back(scalar("s", false, 2), YamlNode(seq));
  doc.set_root(YamlNode(map));
  return doc;
}

TEST(YamlNodeTest, AccessorsFollowYamlCpp) {
  const YamlDocument doc = Sample();
  const YamlNode root = doc.root();
  EXPECT_TRUE(root.IsMap());
  EXPECT_EQ(root.size(), 3u);
  EXPECT_EQ(root.Scalar(), "");        // A map has no scalar.
  EXPECT_EQ(root["k"].Scalar(), "v");  // The first of duplicate keys.
  EXPECT_FALSE(root["missing"]);       // Undefined, and so false.
  EXPECT_FALSE(root["missing"].IsNull());
  EXPECT_EQ(root["missing"].Mark().line, -1);
  EXPECT_EQ(root["k"]["x"].IsDefined(), false);  // A scalar has no keys.
  EXPECT_EQ(root["k"].size(), 0u);
  EXPECT_EQ(root["s"][1].Scalar(), "b");
  EXPECT_EQ(root["s"][1].Tag(), "!");
  EXPECT_EQ(root["s"][0].Tag(), "?");
  EXPECT_FALSE(root["s"][2]);
  EXPECT_FALSE(root["s"][-1]);
  EXPECT_EQ(root["s"].Mark().column, 3);
}

TEST(YamlNodeTest, IterationGivesItemsOrEntries) {
  const YamlDocument doc = Sample();
  std::string keys, items;
  for (const auto& kv : doc.root()) keys += kv.first.Scalar();
  for (const auto& item : doc.root()["s"]) items += item.Scalar();
  for (const auto& none : doc.root()["k"])
    items += none.Scalar();  // A scalar iterates nothing.
  EXPECT_EQ(keys, "kks");
  EXPECT_EQ(items, "ab");
}

TEST(YamlNodeTest, SameYamlTreeSaysWhereTreesDiffer) {
  const YamlDocument a = Sample();
  YamlDocument b = Sample();
  std::string difference;
  EXPECT_TRUE(SameYamlTree(a.root(), b.root(), &difference));
  const_cast<YamlNode::Data*>(b.root()["s"][0].data())->scalar = "z";
  EXPECT_FALSE(SameYamlTree(a.root(), b.root(), &difference));
  EXPECT_EQ(difference, "scalar 'a' vs 'z' at 2:4 vs 2:4");
}

}  // namespace
}  // namespace torchcost::rules
