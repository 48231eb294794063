// Benchmarks of torchcost::sym: building and simplifying expressions,
// evaluating them, and the compiled Program.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

// Output size of a conv / pool: floordiv(in + 2*pad - dil*(k - 1) - 1, stride)
// + 1.
Expr ConvOut(const Expr& in, int64_t k, int64_t stride, int64_t pad,
             int64_t dil = 1) {
  return FloorDiv(in + 2 * pad - dil * (k - 1) - 1, stride) + 1;
}

// One conv output-size expression in a warm context (nodes already interned).
void BM_ConvOutputSizeWarm(benchmark::State& state) {
  Context ctx;
  Expr H = ctx.Symbol("H");
  for (auto _ : state) {
    Expr out = ConvOut(H, 3, 2, 1);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_ConvOutputSizeWarm);

// The same in a fresh context, so every node is new (includes Context setup).
void BM_ConvOutputSizeCold(benchmark::State& state) {
  for (auto _ : state) {
    Context ctx;
    Expr out = ConvOut(ctx.Symbol("H"), 3, 2, 1);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_ConvOutputSizeCold);

// A ResNet-50-like stem and stages with symbolic B, H, W: output sizes and
// the conv FLOPs 2*B*K*C*R*S*OH*OW summed over 53 convs, in a fresh context.
Expr ResNetFlops(Context& ctx) {
  Expr B = ctx.Symbol("B"), H = ctx.Symbol("H"), W = ctx.Symbol("W");
  Expr total = 0;
  auto conv = [&](int64_t c, int64_t k, int64_t r, int64_t stride,
                  int64_t pad) {
    H = ConvOut(H, r, stride, pad);
    W = ConvOut(W, r, stride, pad);
    total += 2 * B * (k * c * r * r) * H * W;  // 2 FLOPs per FMA.
  };
  conv(3, 64, 7, 2, 3);
  H = ConvOut(H, 3, 2, 1);  // Max pool.
  W = ConvOut(W, 3, 2, 1);
  int64_t c = 64;
  const int64_t blocks[4] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    int64_t width = 64 << stage;
    for (int64_t i = 0; i < blocks[stage]; ++i) {
      int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      conv(c, width, 1, 1, 0);
      conv(width, width, 3, stride, 1);
      conv(width, 4 * width, 1, 1, 0);
      c = 4 * width;
    }
  }
  return total;
}

void BM_ResNet50FlopsBuild(benchmark::State& state) {
  for (auto _ : state) {
    Context ctx;
    Expr total = ResNetFlops(ctx);
    benchmark::DoNotOptimize(total);
  }
}
BENCHMARK(BM_ResNet50FlopsBuild)->Unit(benchmark::kMicrosecond);

// A transformer-style polynomial 24*B*S*H^2 + 4*B*S^2*H + ... evaluated by the
// tree walker.
void BM_EvaluatePolynomial(benchmark::State& state) {
  Context ctx;
  Result<Expr> e = Parse(
      ctx, "24*L*B*S*H^2 + 4*L*B*S^2*H + 2*B*S*H*V + 9*L*B*S*H + 3*B*S*V");
  Bindings bindings = {
      {"L", 32}, {"B", 8}, {"S", 4096}, {"H", 4096}, {"V", 32000}};
  for (auto _ : state) {
    Result<int64_t> v = Evaluate(*e, bindings);
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(BM_EvaluatePolynomial);

void BM_Evaluate128ResNet(benchmark::State& state) {
  Context ctx;
  Expr total = ResNetFlops(ctx);
  Bindings bindings = {{"B", 256}, {"H", 224}, {"W", 224}};
  for (auto _ : state) {
    Result<__int128> v = Evaluate128(total, bindings);
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(BM_Evaluate128ResNet);

// Ten totals re-evaluated for a new batch size: the batch-size-curve use case.
void BM_ProgramRunTenTotals(benchmark::State& state) {
  Context ctx;
  Expr flops = ResNetFlops(ctx);
  Expr B = ctx.Symbol("B"), H = ctx.Symbol("H"), W = ctx.Symbol("W");
  std::vector<Expr> totals;
  for (int64_t i = 1; i <= 10; ++i)
    totals.push_back(i * flops + (i - 1) * B * H * W);
  Result<Program> prog = Program::Compile(totals, {"B", "H", "W"});
  int64_t values[3] = {1, 224, 224};
  __int128 out[10];
  for (auto _ : state) {
    values[0] = values[0] % 512 + 1;
    Status s = prog->Run(values, out);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_ProgramRunTenTotals);

void BM_ParsePrintRoundTrip(benchmark::State& state) {
  Context ctx;
  Expr total = ResNetFlops(ctx);
  std::string text = total.ToString();
  for (auto _ : state) {
    Result<Expr> e = Parse(ctx, text);
    benchmark::DoNotOptimize(e);
  }
  state.counters["chars"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParsePrintRoundTrip)->Unit(benchmark::kMicrosecond);

void BM_ProveLe(benchmark::State& state) {
  Context ctx;
  Expr H = ctx.Symbol("H");
  Expr a = ConvOut(ConvOut(H, 3, 2, 1), 3, 2, 1);
  for (auto _ : state) {
    Truth t = ctx.ProveLe(a, H + 1);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_ProveLe);

}  // namespace
}  // namespace torchcost::sym

BENCHMARK_MAIN();
