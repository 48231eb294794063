// The LLaMA family's mixture of experts: the sparse MoE block's forward
// (Hugging Face's MixtralSparseMoeBlock and Qwen2MoeSparseMoeBlock) under
// balanced routing, with Megatron-core's capacity factor and expert
// parallelism.
#include "builder/llama_moe.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "torchcost/builder.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

// One expert's gated MLP on x: down(act(gate(x)) * up(x)), scoped by the names
// the reference uses.
Ref ExpertMlp(GraphBuilder& b, const LlamaConfig& c,
              const std::array<Ref, 3>& w, Ref x, bool mixtral) {
  Ref gate, up;
  {
    ScopeGuard s(b, mixtral ? "w1" : "gate_proj", "Linear");
    gate = b.Linear(x, w[0]);
  }
  gate = Act(b, c, gate);
  {
    ScopeGuard s(b, mixtral ? "w3" : "up_proj", "Linear");
    up = b.Linear(x, w[1]);
  }
  Ref h = b.Mul(gate, up);
  ScopeGuard s(b, mixtral ? "w2" : "down_proj", "Linear");
  return b.Linear(h, w[2]);
}

// The decimal fraction p / q that `v` is written as (up to 6 decimals),
// reduced.
std::pair<int64_t, int64_t> Fraction(double v) {
  int64_t q = 1000000, p = std::llround(v * static_cast<double>(q));
  const int64_t g = std::gcd(p, q);
  return {p / g, q / g};
}

// The rows one rank routes to expert `e` (a graph int of `tokens` rows):
// balanced routing's share, then Megatron-core's capacity (get_capacity:
// ceil(tokens * top_k / experts * c)) caps it, or sets it when padded.
Ref ExpertRows(GraphBuilder& b, const LlamaConfig& c, Ref tokens, int64_t e,
               bool decode) {
  const int64_t k = c.top_k, n = c.experts;
  Ref assigned = b.Mul(b.NumToTensor(tokens), b.ScalarTensorInt(k));
  // Dealt one by one (decode): expert e gets (tokens * k + n - 1 - e) // n;
  // else (tokens * k) // n.
  Ref routed =
      decode ? b.FloorDivide(b.Add(assigned, b.ScalarTensorInt(n - 1 - e)),
                             b.ScalarTensorInt(n))
             : b.FloorDivide(assigned, b.ScalarTensorInt(n));
  if (c.capacity_factor > 0) {
    // ceil(tokens * k * p / (n * q)) = (tokens * k * p + n * q - 1) // (n * q),
    // with c = p / q.
    const auto [p, q] = Fraction(c.capacity_factor);
    Ref capacity = b.FloorDivide(b.Add(b.Mul(assigned, b.ScalarTensorInt(p)),
                                       b.ScalarTensorInt(n * q - 1)),
                                 b.ScalarTensorInt(n * q));
    routed = c.pad_to_capacity ? capacity
                               : b.Op1("aten::minimum", "",
                                       {{"self", routed}, {"other", capacity}});
  }
  return b.IntOf(routed);
}

}  // namespace

// Mixtral names its experts' projections w1 (gate), w3 (up), w2 (down) under
// block_sparse_moe.
bool MixtralNames(const LlamaConfig& c) { return c.classes == "Mixtral"; }

// MixtralSparseMoeBlock / Qwen2MoeSparseMoeBlock.forward on x [B, S, h]:
// router softmax (float32), top-k, renormalized; then per expert, with
// balanced routing, its n = (B*S*top_k) // experts tokens (ExpertRows: dealt
// one by one when decoding, capped by the capacity) gathered
// (hidden_states[top_x]), its output scaled by their routing weights
// (routing_weights[top_x, idx, None]) and index_add_-ed into a zero [B*S, h];
// Qwen2-MoE adds sigmoid(shared_expert_gate(x)) * shared_expert(x).
// NB: the one_hot expert mask and torch.where's index computation (integer
// bookkeeping, data-dependent) are left out: the token indices are arange(n),
// their slots 0. With ep > 1, Megatron-core's all-to-all dispatcher instead:
// the rank's experts * n routed rows gathered (permute), all-to-all-ed to the
// experts' ranks, each local expert on its ep * n received rows (a slice),
// their outputs concatenated, all-to-all-ed back, scaled by the routing weights
// and index_add_-ed (unpermute).
Ref MoeBlock(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x,
             bool decode) {
  const bool mixtral = MixtralNames(c);
  Ref bsz = b.Size(x, 0), seq = b.Size(x, 1);
  Ref x2 = b.View(x, b.IntList({-1, c.hidden}));
  Ref logits;
  {
    ScopeGuard s(b, "gate", "Linear");
    logits = b.Linear(x2, l.router);
  }
  Ref rw = b.Softmax(logits, 1, Arg::ScalarType(DType::kFloat32));
  std::vector<Ref> top = b.Op("aten::topk", "",
                              {{"self", rw},
                               {"k", c.top_k},
                               {"dim", -1},
                               {"largest", true},
                               {"sorted", true}},
                              2);
  rw = top[0];
  if (c.norm_topk) {
    Ref sum = b.Op1("aten::sum", "dim_IntList",
                    {{"self", rw},
                     {"dim", b.IntList({-1})},
                     {"keepdim", true},
                     {"dtype", Arg::None()}});
    rw = b.Op1("aten::div_", "Tensor", {{"self", rw}, {"other", sum}});
  }
  rw = b.ToDtype(rw, c.dtype);
  Ref tokens = b.Size(x2, 0);
  Ref final_states = b.Op1("aten::zeros", "",
                           {{"size", b.IntList({tokens, c.hidden})},
                            {"dtype", Arg::ScalarType(c.dtype)},
                            {"layout", Arg::None()},
                            {"device", Arg::Device("cpu")},
                            {"pin_memory", false}});
  Ref n;  // Rows per expert, the same for every expert unless decoding.
  if (!decode) n = ExpertRows(b, c, tokens, 0, false);
  if (c.ep > 1) {
    // Sent: experts * n rows; each local expert receives n from each of the ep
    // ranks.
    Ref sent = b.IntOf(b.Mul(b.NumToTensor(n), b.ScalarTensorInt(c.experts)));
    Ref rows = b.IntOf(b.Mul(b.NumToTensor(n), b.ScalarTensorInt(c.ep)));
    Ref order = b.Arange(sent, Arg::ScalarType(DType::kInt64));
    Ref permuted = b.Op1("aten::index_select", "",
                         {{"self", x2}, {"dim", 0}, {"index", order}});
    Ref received =
        b.Op1("torchcost::all_to_all", "",
              {{"self", permuted}, {"world", c.ep}, {"purpose", "dispatch"}});
    std::vector<Ref> outs;
    {
      ScopeGuard list(b, "experts", "ModuleList");
      for (int64_t e = 0; e < c.experts / c.ep; ++e) {
        Ref start = b.IntOf(b.Mul(b.NumToTensor(rows), b.ScalarTensorInt(e)));
        Ref end = b.IntOf(b.Mul(b.NumToTensor(rows), b.ScalarTensorInt(e + 1)));
        Ref current = b.Slice(received, 0, start, end);
        ScopeGuard expert(
            b, std::to_string(e),
            mixtral ? "MixtralBlockSparseTop2MLP" : c.classes + "MLP");
        outs.push_back(ExpertMlp(b, c, l.experts[e], current, mixtral));
      }
    }
    Ref combined = b.Op1("torchcost::all_to_all", "",
                         {{"self", b.Cat(b.TensorList(outs), 0)},
                          {"world", c.ep},
                          {"purpose", "combine"}});
    Ref weight = b.Op1("aten::index_select", "",
                       {{"self", b.Reshape(rw, b.IntList({-1}))},
                        {"dim", 0},
                        {"index", order}});
    Ref y = b.Mul(combined, b.Unsqueeze(weight, -1));
    final_states = b.Op1("aten::index_add_", "",
                         {{"self", final_states},
                          {"dim", 0},
                          {"index", order},
                          {"source", y},
                          {"alpha", 1}});
  } else {
    ScopeGuard list(b, "experts", "ModuleList");
    for (int64_t e = 0; e < c.experts; ++e) {
      Ref rows = decode ? ExpertRows(b, c, tokens, e, true) : n;
      Ref top_x = b.Arange(rows, Arg::ScalarType(DType::kInt64));
      // The top-k slot of each token (the reference's idx, values in [0,
      // top_k)).
      Ref slot = b.Op1("aten::zeros", "",
                       {{"size", b.IntList({rows})},
                        {"dtype", Arg::ScalarType(DType::kInt64)},
                        {"layout", Arg::None()},
                        {"device", Arg::None()},
                        {"pin_memory", Arg::None()}});
      Ref current = b.Op1("aten::index_select", "",
                          {{"self", x2}, {"dim", 0}, {"index", top_x}});
      Ref y;
      {
        ScopeGuard expert(
            b, std::to_string(e),
            mixtral ? "MixtralBlockSparseTop2MLP" : c.classes + "MLP");
        y = ExpertMlp(b, c, l.experts[e], current, mixtral);
      }
      Ref weight =
          b.Op1("aten::index", "Tensor",
                {{"self", rw}, {"indices", b.TensorList({top_x, slot})}});
      y = b.Mul(y, b.Unsqueeze(weight, -1));
      final_states = b.Op1("aten::index_add_", "",
                           {{"self", final_states},
                            {"dim", 0},
                            {"index", top_x},
                            {"source", y},
                            {"alpha", 1}});
    }
  }
  if (c.shared_intermediate > 0) {
    Ref shared;
    {
      ScopeGuard e(b, "shared_expert", c.classes + "MLP");
      shared = ExpertMlp(b, c, {l.shared_gate, l.shared_up, l.shared_down}, x2,
                         false);
    }
    Ref scale;
    {
      ScopeGuard s(b, "shared_expert_gate", "Linear");
      scale = b.Linear(x2, l.shared_scale);
    }
    shared = b.Mul(b.Op1("aten::sigmoid", "", {{"self", scale}}), shared);
    final_states = b.Add(final_states, shared);
  }
  return b.Reshape(final_states, b.IntList({bsz, seq, c.hidden}));
}

}  // namespace torchcost::builder
