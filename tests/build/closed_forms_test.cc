// Scratch: dumps the saved tensors of one GPT-2 block (replaced by the real test).
#include <gtest/gtest.h>

#include <iostream>

#include "torchcost/analysis.h"
#include "torchcost/families.h"
#include "torchcost/rules.h"

namespace torchcost::build {
namespace {

TEST(Scratch, Dump) {
  static const RuleSet rules = std::move(RuleSet::Builtin()).value();
  Gpt2Config c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 100;
  c.context = 128;
  Result<BuiltModel> m = BuildGpt2(c);
  ASSERT_TRUE(m.ok());
  sym::Context ctx;
  AnalysisOptions o;
  o.param_dtype = DType::kFloat16;
  o.device = "cuda";
  for (const InputDecl& in : m->inputs) o.inputs.push_back({ResolveShape(*m, in, ctx), in.dtype});
  Result<Report> r = Analyze(m->graph, rules, ctx, o);
  ASSERT_TRUE(r.ok());
  for (const SavedTensorInfo& s : r->training.saved) {
    const ir::Node& n = m->graph.nodes[s.node];
    std::cout << m->graph.scopes[n.scope].path << " " << n.op << " " << s.what << " " << s.bytes.ToString()
              << " storage=" << s.storage << (s.counted ? " counted" : "") << "\n";
  }
}

}  // namespace
}  // namespace torchcost::build
