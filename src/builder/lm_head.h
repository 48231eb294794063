// The output projection of a language model (lm_head, embed_out, BERT's
// decoder): a bias-free Linear whose weight is either the token embedding's
// (tied) or its own.
#ifndef TORCHCOST_SRC_BUILDER_LM_HEAD_H_
#define TORCHCOST_SRC_BUILDER_LM_HEAD_H_

#include <cstdint>
#include <string>

#include "torchcost/builder.h"

namespace torchcost::builder {

// Declares the Linear module `name` in the current scope and returns the
// weight it reads: with `tie`, the parameter `embedding` reads, under the
// further name `name`.weight (one storage, two names); else its own
// [vocab, hidden] parameter `name`.weight of `dtype`.
Ref DeclareLmHead(GraphBuilder& b, const std::string& name, Ref embedding,
                  bool tie, int64_t vocab, int64_t hidden, DType dtype);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_LM_HEAD_H_
