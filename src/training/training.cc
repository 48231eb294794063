// The training step's options by name: modes, optimizers and their settings,
// memory categories and step phases (training.h).
#include "torchcost/training.h"

#include <string>
#include <string_view>

#include "training/optimizer_model.h"

namespace torchcost {

Result<StepMode> ParseStepMode(std::string_view text) {
  if (text == "train") return StepMode::kTrain;
  if (text == "infer" || text == "inference") return StepMode::kInfer;
  return Status::InvalidArgument("unknown mode '" + std::string(text) +
                                 "'; expected train, infer or generate");
}

Result<OptimizerKind> ParseOptimizer(std::string_view text) {
  if (text == "sgd") return OptimizerKind::kSgd;
  if (text == "sgd_momentum" || text == "momentum")
    return OptimizerKind::kSgdMomentum;
  if (text == "sgd_nesterov" || text == "nesterov")
    return OptimizerKind::kSgdNesterov;
  if (text == "adam") return OptimizerKind::kAdam;
  if (text == "adamw") return OptimizerKind::kAdamW;
  if (text == "adagrad") return OptimizerKind::kAdagrad;
  if (text == "rmsprop") return OptimizerKind::kRmsprop;
  if (text == "lion") return OptimizerKind::kLion;
  if (text == "adafactor") return OptimizerKind::kAdafactor;
  if (text == "adafactor_beta1") return OptimizerKind::kAdafactorBeta1;
  if (text == "adam8bit") return OptimizerKind::kAdam8bit;
  return Status::InvalidArgument(
      "unknown optimizer '" + std::string(text) +
      "'; expected sgd, sgd_momentum, sgd_nesterov, adam, adamw, adagrad, "
      "rmsprop, lion, adafactor, "
      "adafactor_beta1 or adam8bit");
}

std::string_view OptimizerName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kSgdMomentum:
      return "sgd_momentum";
    case OptimizerKind::kSgdNesterov:
      return "sgd_nesterov";
    case OptimizerKind::kAdam:
      return "adam";
    case OptimizerKind::kAdamW:
      return "adamw";
    case OptimizerKind::kAdagrad:
      return "adagrad";
    case OptimizerKind::kRmsprop:
      return "rmsprop";
    case OptimizerKind::kLion:
      return "lion";
    case OptimizerKind::kAdafactor:
      return "adafactor";
    case OptimizerKind::kAdafactorBeta1:
      return "adafactor_beta1";
    case OptimizerKind::kAdam8bit:
      return "adam8bit";
  }
  return "?";
}

bool HasFused(OptimizerKind kind) { return training::FusedListDepth(kind) > 0; }

bool HasForeach(OptimizerKind kind) {
  return kind != OptimizerKind::kLion && kind != OptimizerKind::kAdafactor &&
         kind != OptimizerKind::kAdafactorBeta1 &&
         kind != OptimizerKind::kAdam8bit;
}

Status CheckOptimizerSettings(const TrainingOptions& o) {
  if (o.mode != StepMode::kTrain) return Status::Ok();
  const std::string name(OptimizerName(o.optimizer));
  if (o.paged) {
    // bitsandbytes has PagedAdam, PagedAdamW (32-bit) and PagedAdam(W)8bit
    // among these.
    if (o.optimizer != OptimizerKind::kAdam &&
        o.optimizer != OptimizerKind::kAdamW &&
        o.optimizer != OptimizerKind::kAdam8bit) {
      return Status::InvalidArgument(
          "paged states are modelled for adam, adamw and adam8bit "
          "(bitsandbytes' "
          "PagedAdam, PagedAdamW, PagedAdam8bit); got " +
          name);
    }
    if (o.state_dtype != DType::kUnknown || o.master_weights || o.foreach ||
        o.fused || o.galore || o.sharding.strategy != ShardStrategy::kNone) {
      return Status::InvalidArgument(
          "paged states with a state dtype, master weights, the foreach or "
          "fused step, GaLore or sharding are not modelled");
    }
  }
  if (o.state_dtype == DType::kUnknown) return Status::Ok();
  if (!IsFloatingPoint(o.state_dtype)) {
    return Status::InvalidArgument("state dtype " +
                                   std::string(DTypeName(o.state_dtype)) +
                                   " is not a float dtype");
  }
  // NB: SGD keeps no state; Adafactor's and 8-bit Adam's states have their own
  // format (float32 factored statistics, uint8 codes): a state dtype would
  // change nothing.
  if (o.optimizer == OptimizerKind::kSgd ||
      o.optimizer == OptimizerKind::kAdafactor ||
      o.optimizer == OptimizerKind::kAdafactorBeta1 ||
      o.optimizer == OptimizerKind::kAdam8bit) {
    return Status::InvalidArgument("a state dtype does not apply to " + name +
                                   " (its states have their own format)");
  }
  if (o.foreach || o.fused || o.galore) {
    // NB: torch's fused kernels need the states in the parameters' dtype.
    return Status::InvalidArgument("a state dtype with " +
                                   std::string(o.foreach ? "the foreach step"
                                               : o.fused ? "the fused step"
                                                         : "GaLore") +
                                   " is not modelled");
  }
  return Status::Ok();
}

std::string_view MemCategoryName(MemCategory c) {
  static constexpr std::string_view kNames[] = {
      "param", "buffer", "grad", "act", "temp", "opt", "oth"};
  return kNames[static_cast<int>(c)];
}

std::string_view StepPhaseName(StepPhase p) {
  static constexpr std::string_view kNames[] = {"setup", "forward", "backward",
                                                "optimizer"};
  return kNames[static_cast<int>(p)];
}

}  // namespace torchcost
