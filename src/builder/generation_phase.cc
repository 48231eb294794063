// A family's generation phases: the cache's dtype, the past inputs and the
// cache updates (generation_phase.h).
#include "builder/generation_phase.h"

#include <algorithm>

namespace torchcost::builder {

GenState ReadPhase(Validator& v, const std::string& phase,
                   const std::string& cache_dtype, DType compute) {
  v.Require(phase.empty() || phase == "prefill" || phase == "decode",
            "phase=" + phase +
                " must be prefill or decode (empty: the plain forward)");
  GenState g;
  g.generating = !phase.empty();
  g.decode = phase == "decode";
  g.compute = compute;
  g.cache_dtype = compute;
  if (cache_dtype == "fp8" || cache_dtype == "float8_e4m3fn" ||
      cache_dtype == "float8_e5m2") {
    g.cache_dtype = DType::kUInt8;
  } else if (!cache_dtype.empty()) {
    Result<DType> d = ParseDType(cache_dtype);
    v.Require(
        d.ok() && (*d == DType::kFloat32 || *d == DType::kBFloat16 ||
                   *d == DType::kFloat16),
        "cache_dtype=" + cache_dtype + " must be fp32, bf16, fp16 or fp8");
    if (d.ok()) g.cache_dtype = *d;
  }
  return g;
}

void DeclarePasts(GraphBuilder& b, GenState& g, int64_t vocab, int64_t kv_heads,
                  int64_t head_dim, const std::vector<std::string>& pasts) {
  // NB: no node reads it; a graph input, it is held through the step.
  b.Input("next_token_logits", {"B", vocab}, DType::kFloat32);
  for (size_t i = 0; i < pasts.size(); ++i) {
    for (const char* kv : {"past_key.", "past_value."}) {
      g.pasts.push_back(b.Input(kv + std::to_string(i),
                                {"B", kv_heads, pasts[i], head_dim},
                                g.cache_dtype));
    }
  }
}

Ref CacheUpdate(GraphBuilder& b, GenState& g, Ref x) {
  Ref stored = g.cache_dtype != g.compute ? b.ToDtype(x, g.cache_dtype) : x;
  Ref full = g.decode ? b.Cat(b.TensorList({g.pasts[g.next_past++], stored}), 2)
                      : b.Cat(b.TensorList({stored}), 2);
  g.caches.push_back(full);
  return g.cache_dtype != g.compute ? b.ToDtype(full, g.compute) : full;
}

void OutputCaches(GraphBuilder& b, const GenState& g) {
  for (Ref cache : g.caches) b.Output(cache);
}

BuiltModel FinishCausalLm(GraphBuilder& b, Ref logits, const GenState& g,
                          const std::vector<int64_t>& layer_windows) {
  b.Output(logits);
  if (g.generating) {
    b.Output(b.Op1("aten::to", "dtype",
                   {{"self", b.Select(logits, 1, -1)},
                    {"dtype", Arg::ScalarType(DType::kFloat32)},
                    {"non_blocking", false},
                    {"copy", true},
                    {"memory_format", Arg::None()}}));
  }
  OutputCaches(b, g);
  b.DefaultLoss("causal_lm");
  BuiltModel m = b.Finish();
  if (g.generating) {
    m.default_loss.clear();
    for (int64_t w : layer_windows)
      m.cache_windows.insert(m.cache_windows.end(), 2, w);
    // Where the cache starts among the inputs and outputs: after the token ids
    // and the held float32 logits, after the logits and their copy.
    auto index_of = [](const std::vector<int>& values, Ref r) {
      auto it = std::find(values.begin(), values.end(), r.id);
      return it == values.end() ? -1 : static_cast<int>(it - values.begin());
    };
    if (!g.pasts.empty())
      m.cache_inputs_from = index_of(m.graph.inputs, g.pasts.front());
    if (!g.caches.empty())
      m.cache_outputs_from = index_of(m.graph.outputs, g.caches.front());
  }
  return m;
}

std::vector<std::string> FullPasts(int64_t layers) {
  return std::vector<std::string>(layers, "S+T-2");
}

}  // namespace torchcost::builder
