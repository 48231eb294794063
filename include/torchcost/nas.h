// Architecture search spaces: model families whose config values are
// expressions in architecture symbols (closed forms of params, FLOPs and the
// peak, for the Evaluator), and structural spaces whose candidates differ in
// depth and kernel sizes, composed from cached per-block analyses. docs/nas.md
// explains both.
#ifndef TORCHCOST_NAS_H_
#define TORCHCOST_NAS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/evaluator.h"
#include "torchcost/rules.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost {

// One architecture symbol: a name the config's values may use, and its range.
struct ArchSymbol {
  std::string name;
  int64_t lo = 1;             // Smallest value (>= 1).
  int64_t hi = sym::kPosInf;  // Largest value.
  // Sample points are lo, lo + step, lo + 2 * step, ... (e.g. step 2 keeps a
  // RoPE head dim even).
  int64_t step = 1;
};

// A family (or preset) whose config values may be expressions in symbols:
// "layers=4,heads=H,hidden=H*D,intermediate=I". NB: write exact divisions as
// products (hidden = heads * head_dim, heads = kv_heads * groups), so every
// candidate passes the family's divisibility checks.
struct ArchSpace {
  std::string model;  // "gpt2", "llama", "vit", "resnet" or a preset.
  std::string config;
  std::vector<ArchSymbol> symbols;
  // The step analysed (its inputs are set from the model's declared ones).
  AnalysisOptions options;
  // The loss (ParseLossSpec); empty: the family's default.
  std::string loss;
};

// The closed forms of a space, and what learning them took.
struct ArchCosts {
  SymbolicCosts costs;
  // The architecture symbols, then the model's input symbols (B, S), sorted:
  // the order to give Evaluator::Compile.
  std::vector<std::string> symbols;
  // Per architecture symbol: the degree of the costs in it.
  std::vector<int> degrees;
  int analyses = 0;  // Concrete analyses run.
};

// Returns the space's config at `values` (one per ArchSpace::symbols, in
// order), the expressions evaluated: "heads=12,hidden=768".
Result<std::string> ConfigAt(const ArchSpace& space,
                             const std::vector<int64_t>& values);

// Returns the costs of the space as closed forms in its symbols and the
// batch/sequence: concrete analyses on a grid of sample points, interpolated
// exactly (integer Newton interpolation), checked at further random points.
// Expressions live in `ctx` (the symbols get their ranges there). Errors: a
// value outside the integers, a config whose graph's structure changes with a
// symbol, costs that are no polynomial of degree <= 6 in a symbol, or a
// verification point that disagrees with its closed form.
Result<ArchCosts> AnalyzeArchSpace(const ArchSpace& space, const RuleSet& rules,
                                   sym::Context& ctx);

// A ResNet space whose candidates choose, per stage, the number of blocks
// (torchvision's layers=[n1, n2, n3, n4]) and the kernel size of the stage's
// 3x3 convolutions: composed from per-block analyses cached by block
// configuration, never re-analysing a whole graph per candidate. NB: the block
// (basic or bottleneck) is the base config's; a space over both blocks is one
// composer per block, as their caches share nothing.
struct ResnetStructureSpace {
  // The base: the block (depth=18/34: basic, 50+: bottleneck, or block=),
  // width, classes, image size, dtype. blocks= and kernels= are the
  // candidates'.
  std::string config = "depth=50";
  // The kernel sizes a stage may choose (odd); the first is the base's.
  std::vector<int64_t> kernels = {3};
  int64_t batch = 1;        // The batch B, fixed.
  AnalysisOptions options;  // The step (inputs set from the model).
};

// A structural candidate's costs. Params, FLOPs and saved activations compose
// exactly; the peak is bracketed (docs/nas.md derives both bounds).
struct StructuralCosts {
  int64_t params = 0;
  int64_t trainable_params = 0;
  int64_t flops_forward = 0;
  int64_t flops_backward = 0;
  // Bytes autograd saves (TrainingReport::saved_bytes).
  int64_t act_bytes = 0;
  // <= the peak: parameters, buffers and optimizer states, inputs, and ACT.
  int64_t peak_lower = 0;
  // >= the peak: plus every gradient and the probes' largest transient.
  int64_t peak_upper = 0;
};

// Composes the costs of ResNets from a cache of per-block contributions.
class ResnetStructureComposer {
 public:
  // Analyses the probes the cache needs: 1 + 4 * (2K - 1) whole graphs for K
  // kernel sizes.
  static Result<ResnetStructureComposer> Create(
      const ResnetStructureSpace& space, const RuleSet& rules);
  // Returns the costs of the ResNet with `blocks[s]` >= 1 blocks in stage s,
  // each stage with the space's first kernel size.
  Result<StructuralCosts> Evaluate(const std::array<int64_t, 4>& blocks) const;
  // Returns the costs with `blocks[s]` blocks of kernel size `kernels[s]` (one
  // of the space's) in stage s.
  Result<StructuralCosts> Evaluate(const std::array<int64_t, 4>& blocks,
                                   const std::array<int64_t, 4>& kernels) const;
  // Returns the number of whole-graph analyses run to fill the cache.
  int analyses() const { return analyses_; }

  // The additive quantities of a probe (params, trainable params, FLOPs
  // forward and backward, ACT, setup bytes, gradient bytes).
  struct Additive {
    std::array<__int128, 7> v{};
  };

 private:
  // The kernel sizes' slots: kernel k is slot slot_[k] (-1: not in the space).
  static constexpr int kMaxKernel = 31;
  // The probe with base_blocks_, every stage at the first kernel size.
  Additive base_;
  // Per stage s and kernel slot j: the change from the base when stage s
  // takes kernel j (its first two blocks), and one more block of it.
  std::vector<std::array<Additive, 4>> first_, repeated_;
  std::array<int, kMaxKernel + 1> slot_{};
  std::array<int64_t, 4> base_blocks_{};
  int64_t base_kernel_ = 3;
  // The largest transient of the probes' moments (docs/nas.md).
  int64_t transient_ = 0;
  int analyses_ = 0;
};

}  // namespace torchcost

#endif  // TORCHCOST_NAS_H_
