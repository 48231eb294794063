// Tests of the module tree the TorchScript reader without LibTorch reads, on
// tools/make_fixtures.py's Tied: embed = Embedding(16, 8), proj = Linear(8, 8),
// decoder = Linear(8, 16, bias=False) whose weight is embed's.
#include "import/ts_module_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>

#include "testing/fixtures.h"

namespace torchcost::import::ts {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TsModuleTreeTest, ScopesPreOrderAndTablesDeduplicatedByStorage) {
  ASSERT_TRUE(torchcost::testing::EnsureFixtures("tied"));
  Result<ZipArchive> zip =
      ZipArchive::OpenFile(torchcost::testing::FixturePath("tied.pt"));
  ASSERT_TRUE(zip.ok()) << zip.status().message();
  Result<std::string> data = zip->Read(zip->root() + "data.pkl");
  ASSERT_TRUE(data.ok()) << data.status().message();
  Result<PickleRef> top_object = Unpickle(*data);
  ASSERT_TRUE(top_object.ok()) << top_object.status().message();

  ModuleTree tree(*zip);
  Result<Module> top = tree.ModuleOf(**top_object);
  ASSERT_TRUE(top.ok()) << top.status().message();
  ir::Graph g;
  std::unordered_map<std::string, int> scope_index;
  std::unordered_map<std::string, TensorSlot> slots;
  Status s = tree.Build(*top, &g, &scope_index, &slots);
  ASSERT_TRUE(s.ok()) << s.message();

  // Modules in registration order after the root, each path's scope recorded.
  ASSERT_EQ(g.scopes.size(), 4u);
  EXPECT_EQ(g.scopes[0].type, "Tied");
  EXPECT_EQ(g.scopes[1].path, "embed");
  EXPECT_EQ(g.scopes[1].type, "Embedding");
  EXPECT_EQ(g.scopes[2].path, "proj");
  EXPECT_EQ(g.scopes[3].path, "decoder");
  EXPECT_EQ(g.scopes[3].type, "Linear");
  EXPECT_EQ(scope_index.at("decoder"), 3);
  EXPECT_EQ(scope_index.at(""), 0);
  // embed.weight [16, 8], proj.weight [8, 8], proj.bias [8]; decoder.weight is
  // embed.weight's storage: an alias, not an entry.
  ASSERT_EQ(g.params.size(), 3u);
  EXPECT_EQ(g.params[0].name, "embed.weight");
  EXPECT_THAT(g.params[0].shape, ElementsAre(16, 8));
  EXPECT_THAT(g.params[0].aliases, ElementsAre("decoder.weight"));
  EXPECT_EQ(g.params[2].name, "proj.bias");
  EXPECT_TRUE(g.buffers.empty());
  EXPECT_EQ(slots.at("decoder.weight"), (TensorSlot{true, 0}));
  EXPECT_EQ(slots.at("proj.bias"), (TensorSlot{true, 2}));

  ASSERT_NE(tree.Find("proj"), nullptr);
  EXPECT_EQ(tree.Find("proj")->cls->parameters.size(), 2u);
  EXPECT_EQ(tree.Find("proj.weight"), nullptr);  // A tensor, not a module.
  Result<const PickleValue*> missing = tree.Attribute(*top, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kUnimplemented);
  EXPECT_THAT(missing.status().message(), HasSubstr("has no attribute 'nope'"));
}

TEST(TsModuleTreeTest, DeclinesAStorageTheArchiveLacksOrHoldsShort) {
  ASSERT_TRUE(torchcost::testing::EnsureFixtures("tied"));
  Result<ZipArchive> zip =
      ZipArchive::OpenFile(torchcost::testing::FixturePath("tied.pt"));
  ASSERT_TRUE(zip.ok()) << zip.status().message();
  Result<std::string> data = zip->Read(zip->root() + "data.pkl");
  ASSERT_TRUE(data.ok()) << data.status().message();
  Result<PickleRef> top = Unpickle(*data);
  ASSERT_TRUE(top.ok()) << top.status().message();
  const PickleValue* weight = (*top)->Attr("embed")->Attr("weight");
  ASSERT_NE(weight, nullptr);
  ModuleTree tree(*zip);
  PickledTensor t = weight->tensor;
  // Embedding(16, 8)'s own storage, float32: 512 bytes.
  EXPECT_EQ(t.storage_numel, 16 * 8);
  EXPECT_TRUE(tree.CheckStorage(t, "data/").ok());
  auto declined = [&](const PickledTensor& bad, const std::string& dir,
                      const char* why) {
    Status s = tree.CheckStorage(bad, dir);
    EXPECT_EQ(s.code(), Status::Code::kUnimplemented) << why;
    EXPECT_THAT(s.message(), HasSubstr(why));
  };
  PickledTensor longer = t;
  longer.storage_numel = 16 * 8 + 1;  // 516 bytes wanted, 512 stored.
  declined(longer, "data/", "is shorter than its tensors need");
  // The archive has no constants/ entries.
  declined(t, "constants/", "is not in the archive");
  PickledTensor unknown = t;
  unknown.scalar_type = -1;
  declined(unknown, "data/", "of an unknown size");
}

}  // namespace
}  // namespace torchcost::import::ts
