#include "builder/llama_layer.h"

namespace torchcost::builder {

// The per-head dim: head_dim when given, else hidden / heads.
int64_t HeadDim(const LlamaConfig& c) {
  return c.head_dim > 0 ? c.head_dim : c.hidden / c.heads;
}

// An optional bias argument.
Arg BiasArg(Ref bias) { return bias.id >= 0 ? Arg(bias) : Arg::None(); }

// LlamaRMSNorm: input_dtype = x.dtype; xf = x.to(float32);
// variance = xf.pow(2).mean(-1, keepdim=True); xf = xf * rsqrt(variance + eps);
// weight * xf.to(input_dtype).
// GemmaRMSNorm instead: xf = x.float(); xf * rsqrt(xf.pow(2).mean(-1,
// keepdim=True) + eps)
// * (1.0 + weight.float()), then type_as(x) (the weight applied in float32).
NormOut RmsNorm(GraphBuilder& b, const LlamaConfig& c, Ref weight, Ref x) {
  Ref xf = b.ToDtype(x, DType::kFloat32);
  Ref var = b.MeanDim(b.PowScalar(xf, 2), b.IntList({-1}), /*keepdim=*/true);
  Ref r = b.Rsqrt(b.Add(var, b.ScalarTensor(c.eps)));
  Ref residual = c.dtype == DType::kFloat32 ? xf : x;
  if (c.gemma) {
    Ref scale = b.Add(b.ToDtype(weight, DType::kFloat32), b.ScalarTensor(1.0));
    return {b.ToDtype(b.Mul(b.Mul(xf, r), scale), c.dtype), residual};
  }
  Ref xn = b.ToDtype(b.Mul(xf, r), c.dtype);
  return {b.Mul(weight, xn), residual};
}

// Whether Megatron's sequence parallelism applies (it is off at tp = 1).
bool Sp(const LlamaConfig& c) { return c.sp && c.tp > 1; }

// Megatron's row-parallel output (and the vocabulary-parallel embedding):
// the ranks' partial results summed by torchcost::all_reduce, in place; with
// sp, reduce-scattered to this rank's S/t of the sequence.
Ref AllReduceIf(GraphBuilder& b, const LlamaConfig& c, Ref partial) {
  if (c.tp == 1) return partial;
  return Sp(c) ? b.Op1("torchcost::reduce_scatter", "",
                       {{"self", partial}, {"world", c.tp}})
               : b.Op1("torchcost::all_reduce", "",
                       {{"self", partial}, {"world", c.tp}});
}

Ref CopyToTpRegionIf(GraphBuilder& b, const LlamaConfig& c, Ref x) {
  if (c.tp == 1 || Sp(c)) return x;
  return b.Op1("torchcost::copy_to_tp_region", "",
               {{"self", x}, {"world", c.tp}});
}

// A column-parallel linear: with sp, on the sequence-parallel shard
// (rules/distributed.yaml).
Ref ColumnLinear(GraphBuilder& b, const LlamaConfig& c, Ref x, Ref weight) {
  return Sp(c) ? b.Op1("torchcost::sp_linear", "",
                       {{"input", x}, {"weight", weight}, {"world", c.tp}})
               : b.Linear(x, weight);
}

// cap * tanh(x / cap) (Gemma-2's soft-capping: x / cap; tanh; * cap).
Ref SoftCap(GraphBuilder& b, Ref x, double cap) {
  Ref t = b.Op1("aten::tanh", "", {{"self", b.Div(x, b.ScalarTensor(cap))}});
  return b.Mul(t, b.ScalarTensor(cap));
}

}  // namespace torchcost::builder
