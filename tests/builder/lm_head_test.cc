// DeclareLmHead: the tied head adds a name to the embedding's parameter, the
// untied one a parameter of its own; both register a Linear module.
#include "builder/lm_head.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost::builder {
namespace {

TEST(LmHeadTest, TiedHeadNamesTheEmbeddingInItsScope) {
  GraphBuilder b("Net");
  Ref embed;
  {
    ScopeGuard s(b, "wte", "Embedding");
    embed = b.Param(b.Qualify("weight"), {11, 4});
  }
  Ref head;
  {
    ScopeGuard s(b, "cls", "Head");
    head = DeclareLmHead(b, "decoder", embed, /*tie=*/true, 11, 4,
                         DType::kBFloat16);
  }
  EXPECT_EQ(head.id, embed.id);
  BuiltModel m = b.Finish();
  ASSERT_EQ(m.graph.params.size(), 1u);  // No storage of its own.
  EXPECT_EQ(m.graph.params[0].aliases,
            std::vector<std::string>{"cls.decoder.weight"});
  ASSERT_EQ(m.graph.scopes.size(), 4u);  // Root, wte, cls, cls.decoder.
  EXPECT_EQ(m.graph.scopes[3].path, "cls.decoder");
  EXPECT_EQ(m.graph.scopes[3].type, "Linear");
}

TEST(LmHeadTest, UntiedHeadOwnsAVocabByHiddenWeight) {
  GraphBuilder b("Net");
  Ref embed;
  {
    ScopeGuard s(b, "wte", "Embedding");
    embed = b.Param(b.Qualify("weight"), {11, 4});
  }
  Ref head = DeclareLmHead(b, "lm_head", embed, /*tie=*/false, 11, 4,
                           DType::kBFloat16);
  EXPECT_NE(head.id, embed.id);
  BuiltModel m = b.Finish();
  ASSERT_EQ(m.graph.params.size(), 2u);
  EXPECT_TRUE(m.graph.params[0].aliases.empty());
  EXPECT_EQ(m.graph.params[1].name, "lm_head.weight");
  EXPECT_EQ(m.graph.params[1].shape, (std::vector<int64_t>{11, 4}));
  EXPECT_EQ(m.graph.params[1].dtype, DType::kBFloat16);
  EXPECT_TRUE(m.graph.params[1].requires_grad);
  EXPECT_EQ(m.graph.scopes.back().path, "lm_head");
  EXPECT_EQ(m.graph.scopes.back().type, "Linear");
}

}  // namespace
}  // namespace torchcost::builder
