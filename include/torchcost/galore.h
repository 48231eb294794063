// GaLore (Zhao et al., ICML 2024): the optimizer sees the gradients of chosen
// 2-D weights projected to rank r, so its states have the projected size.
#ifndef TORCHCOST_GALORE_H_
#define TORCHCOST_GALORE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "torchcost/status.h"

namespace torchcost {

// GaLore's settings, as the reference implementation's param group takes them
// (github.com/jiaweizzhao/GaLore, galore_torch: rank, update_proj_gap, scale,
// proj_type 'std'), plus which weights it projects and how the step runs.
struct GaloreConfig {
  // r: the projected gradient keeps r of min(m, n) dims.
  int64_t rank = 128;
  // T: steps between two SVDs of the gradient (the first step has one).
  int64_t update_proj_gap = 200;
  // Scales the projected-back update (costs one multiply per element).
  double scale = 0.25;
  // ECMAScript regex searched in the path of each Linear module (or a
  // parameter's name); the weights of the matching Linear modules are
  // projected, as the reference README's target_modules ["attn", "mlp"].
  std::string targets = "attn|mlp|attention|self_attn";
  // The per-layer weight update (the reference's *_per_layer optimizers):
  // one optimizer per parameter, stepped when its gradient is accumulated in
  // backward, after which the gradient is freed.
  bool per_layer = false;
  // If true, the modelled step recomputes the projectors (an SVD per projected
  // weight: every T-th step), the worst case of the peak; if false, a step
  // between two SVDs.
  bool svd_step = true;
  // GaLoreAdamW8bit (the reference's adamw8bit.py, on bitsandbytes'
  // Optimizer2State with optim_bits=8): 8-bit block-wise states of the
  // projected gradients, the fused 8-bit step; set for --optimizer adam8bit.
  bool eight_bit = false;
};

// Parses "r=128,gap=200,scale=0.25,targets=attn|mlp,per_layer=true,svd=false"
// (keys optional, in any order).
Result<GaloreConfig> ParseGaloreConfig(std::string_view text);

}  // namespace torchcost

#endif  // TORCHCOST_GALORE_H_
