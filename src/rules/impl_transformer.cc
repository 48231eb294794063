// Shape functions of transformer ops: einsum and the flash-attention op whose
// returns include SymInts (rules/attention.yaml, rules/indexing.yaml).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rules/builtin.h"
#include "rules/einsum.h"
#include "rules/impl_util.h"
#include "rules/impls.h"
#include "rules/value.h"
#include "torchcost/dtype.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules::impl {

Status Einsum(ImplContext& c, std::vector<RValue>* outputs) {
  const RValue& eq = c.Arg("equation");
  if (eq.kind != RValue::Kind::kString)
    return Bad("einsum: argument 'equation' must be a string");
  const RValue& l = c.Arg("tensors");
  std::vector<TensorType> ts;
  if (l.kind == RValue::Kind::kTensorList) {
    ts = l.tensors;
  } else if (l.kind == RValue::Kind::kList) {
    for (const RValue& item : l.items) {
      if (item.kind != RValue::Kind::kTensor)
        return Bad("einsum: argument 'tensors' must be a list of tensors");
      ts.push_back(item.t);
    }
  } else {
    return Bad("einsum: argument 'tensors' must be a list of tensors");
  }
  std::vector<Shape> shapes;
  ResultTypeState state;
  for (const TensorType& t : ts) {
    shapes.push_back(t.shape);
    RValue v = RValue::Tensor(t);
    v.t.shape.assign(1, 1);
    state.Add(v);
  }
  TORCHCOST_ASSIGN_OR_RETURN(EinsumInfo info,
                             ParseEinsum(eq.s, shapes, c.ctx()));
  for (const EinsumInfo::Assumed& a : info.assumptions)
    TORCHCOST_RETURN_IF_ERROR(c.RequireEq(a.a, a.b, a.what));
  TensorType out;
  out.shape = std::move(info.out);
  out.dtype = state.Result();
  outputs->push_back(RValue::Tensor(std::move(out)));
  return Status::Ok();
}

Status SdpaFlash(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType q, TensorArg(c, "query"));
  TORCHCOST_ASSIGN_OR_RETURN(TensorType k, TensorArg(c, "key"));
  TORCHCOST_ASSIGN_OR_RETURN(TensorType v, TensorArg(c, "value"));
  if (q.shape.size() < 2 || k.shape.size() != q.shape.size() ||
      v.shape.size() != q.shape.size()) {
    return Bad(
        "flash attention: query, key and value must have one rank >= 2; got " +
        ShapeToString(q.shape) + ", " + ShapeToString(k.shape) + " and " +
        ShapeToString(v.shape));
  }
  const size_t r = q.shape.size();
  Shape batch(q.shape.begin(), q.shape.end() - 2);
  for (size_t i = 0; i + 2 < r; ++i) {
    if (i + 3 == r) {
      // The heads: grouped K/V (torch >= 2.5's enable_gqa) have Hk dividing H,
      // K and V alike.
      TORCHCOST_RETURN_IF_ERROR(
          c.RequireEq(sym::Mod(q.shape[i], k.shape[i]), sym::Expr(0),
                      "flash attention: key's heads must divide query's"));
      TORCHCOST_RETURN_IF_ERROR(
          c.RequireEq(v.shape[i], k.shape[i],
                      "flash attention: value's heads must equal key's"));
      continue;
    }
    TORCHCOST_RETURN_IF_ERROR(c.RequireEq(k.shape[i], q.shape[i],
                                          "flash attention: key dim " +
                                              std::to_string(i) +
                                              " must equal query's"));
    TORCHCOST_RETURN_IF_ERROR(c.RequireEq(v.shape[i], q.shape[i],
                                          "flash attention: value dim " +
                                              std::to_string(i) +
                                              " must equal query's"));
  }
  const Expr L = q.shape[r - 2], S = k.shape[r - 2], EV = v.shape[r - 1];
  TORCHCOST_RETURN_IF_ERROR(
      c.RequireEq(k.shape[r - 1], q.shape[r - 1],
                  "flash attention: key's head dim must equal query's"));
  TORCHCOST_RETURN_IF_ERROR(c.RequireEq(
      v.shape[r - 2], S, "flash attention: value's length must equal key's"));
  TORCHCOST_ASSIGN_OR_RETURN(bool debug,
                             BoolArg(c, "return_debug_mask", false));
  auto tensor = [](Shape s, DType d) {
    TensorType t;
    t.shape = std::move(s);
    t.dtype = d;
    return RValue::Tensor(std::move(t));
  };
  Shape out = batch;
  out.push_back(L);
  out.push_back(EV);
  Shape lse = batch;
  lse.push_back(L);
  Shape dbg = batch;
  dbg.push_back(L);
  dbg.push_back(S);
  outputs->push_back(tensor(out, q.dtype));          // output
  outputs->push_back(tensor(lse, DType::kFloat32));  // logsumexp
  // cum_seq_q (empty: not nested)
  outputs->push_back(tensor({Expr(0)}, DType::kInt32));
  outputs->push_back(tensor({Expr(0)}, DType::kInt32));  // cum_seq_k
  outputs->push_back(RValue::Int(L));                    // max_q
  outputs->push_back(RValue::Int(S));                    // max_k
  outputs->push_back(tensor({}, DType::kInt64));         // philox_seed
  // philox_offset
  outputs->push_back(tensor({}, DType::kInt64));
  // debug_attn_mask
  outputs->push_back(tensor(debug ? dbg : Shape{Expr(0)}, q.dtype));
  return Status::Ok();
}

}  // namespace torchcost::rules::impl
