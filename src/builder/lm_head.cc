// The output projection of a language model, tied or not.
#include "builder/lm_head.h"

namespace torchcost::builder {

Ref DeclareLmHead(GraphBuilder& b, const std::string& name, Ref embedding,
                  bool tie, int64_t vocab, int64_t hidden, DType dtype) {
  ScopeGuard s(b, name, "Linear");
  if (!tie) return b.Param(b.Qualify("weight"), {vocab, hidden}, dtype);
  b.Alias(embedding, b.Qualify("weight"));  // Tied: one storage, two names.
  return embedding;
}

}  // namespace torchcost::builder
