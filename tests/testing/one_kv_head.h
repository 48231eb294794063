// A graph of grouped-query attention's scores with one KV head, whose
// batched matmul copies K (memory::MatmulFoldCopyBytes): the memory and the
// moved-bytes tests read it.
#ifndef TORCHCOST_TESTS_TESTING_ONE_KV_HEAD_H_
#define TORCHCOST_TESTS_TESTING_ONE_KV_HEAD_H_

#include "testing/graph_builder.h"

namespace torchcost::testing {

// The values of BuildOneKvHeadScores' graph.
struct OneKvHeadScores {
  int q, k, kt;
  int matmul = 7;  // The node of the scores' matmul.
};

// One KV head (Hugging Face's repeat_kv with n_rep = heads), with the built-in
// rules and input "B,3,5,4": x [B, 3, 5, 4]; q = x * w; k = x[:, :1] * w
// [B, 1, 5, 4] -> [:, :, None] -> expand [B, 1, 3, 5, 4] -> reshape
// [B, 3, 5, 4] (a view, the heads at stride 0) -> kt = transpose(2, 3)
// [B, 3, 4, 5]; out = matmul(q, kt) [B, 3, 5, 5].
inline OneKvHeadScores BuildOneKvHeadScores(GraphBuilder* b) {
  OneKvHeadScores v;
  int x = b->Input();
  int w = b->Param("w", {4});
  v.q = b->One("aten::mul.Tensor", {x, w}, {"self", "other"});
  int k1 = b->One("aten::slice.Tensor",
                  {x, b->Int(1), b->Int(0), b->Int(1), b->Int(1)},
                  {"self", "dim", "start", "end", "step"});
  v.k = b->One("aten::mul.Tensor", {k1, w}, {"self", "other"});
  int u = b->One("aten::unsqueeze", {v.k, b->Int(2)}, {"self", "dim"});
  int e =
      b->One("aten::expand", {u, b->Ints({-1, -1, 3, -1, -1}), b->Bool(false)},
             {"self", "size", "implicit"});
  int r =
      b->One("aten::reshape", {e, b->Ints({-1, 3, 5, 4})}, {"self", "shape"});
  v.kt = b->One("aten::transpose.int", {r, b->Int(2), b->Int(3)},
                {"self", "dim0", "dim1"});
  b->Output(b->One("aten::matmul", {v.q, v.kt}, {"self", "other"}));
  return v;
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_ONE_KV_HEAD_H_
