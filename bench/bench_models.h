// What the benchmarks share: the built-in rules and the llama-7b-like preset,
// each made once per process.
#ifndef TORCHCOST_BENCH_BENCH_MODELS_H_
#define TORCHCOST_BENCH_BENCH_MODELS_H_

#include <cstdio>
#include <cstdlib>

#include "torchcost/families.h"
#include "torchcost/rules.h"

namespace torchcost::bench {

// Returns the built-in rules (aborts if they do not load).
inline const RuleSet& Rules() {
  static RuleSet* rules = [] {
    auto r = RuleSet::Builtin();
    if (!r.ok()) std::abort();
    return new RuleSet(std::move(r).value());
  }();
  return *rules;
}

// Returns the llama-7b-like preset, built once (aborts if it does not build).
inline const builder::BuiltModel& Llama7b() {
  static builder::BuiltModel* m = [] {
    auto r = builder::BuildNamedModel("llama-7b-like", "");
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().message().c_str());
      std::abort();
    }
    return new builder::BuiltModel(std::move(r).value());
  }();
  return *m;
}

}  // namespace torchcost::bench

#endif  // TORCHCOST_BENCH_BENCH_MODELS_H_
