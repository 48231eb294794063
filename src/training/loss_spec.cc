// Loss specs: parsing "causal_lm:chunks=8" and describing the loss in words.
#include <cstdlib>
#include <string>

#include "torchcost/loss.h"

namespace torchcost {
namespace {

// Parses "true"/"false".
Result<bool> ParseBool(const std::string& spec, const std::string& key,
                       const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  return Status::InvalidArgument("'" + spec + "': " + key + "=" + value +
                                 " must be true or false");
}

// Parses an integer in [1, 4096] (chunks=, world=).
Result<int> ParseCount(const std::string& spec, const std::string& key,
                       const std::string& value) {
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || n < 1 || n > 4096) {
    return Status::InvalidArgument("'" + spec + "': " + key + "=" + value +
                                   " must be an integer in [1, 4096]");
  }
  return static_cast<int>(n);
}

}  // namespace

Result<LossSpec> ParseLossSpec(std::string_view text) {
  LossSpec spec;
  spec.text = std::string(text);
  const size_t colon = text.find(':');
  const std::string name(text.substr(0, colon));
  const std::string settings = colon == std::string_view::npos
                                   ? ""
                                   : std::string(text.substr(colon + 1));
  if (name == "sum") {
    spec.kind = LossSpec::Kind::kSum;
  } else if (name == "none") {
    spec.kind = LossSpec::Kind::kNone;
  } else if (name == "cross_entropy") {
    spec.kind = LossSpec::Kind::kCrossEntropy;
  } else if (name == "mse") {
    spec.kind = LossSpec::Kind::kMse;
  } else if (name == "causal_lm") {
    spec.kind = LossSpec::Kind::kCausalLm;
  } else if (name == "lm") {
    spec.kind = LossSpec::Kind::kLm;
  } else if (name == "vocab_parallel") {
    spec.kind = LossSpec::Kind::kVocabParallel;
  } else {
    return Status::InvalidArgument(
        "unknown loss '" + name +
        "' (sum, cross_entropy, mse, causal_lm, lm, vocab_parallel, none)");
  }
  const bool causal = spec.kind == LossSpec::Kind::kCausalLm,
             vocab_parallel = spec.kind == LossSpec::Kind::kVocabParallel;
  if (colon != std::string_view::npos && !causal && !vocab_parallel) {
    return Status::InvalidArgument("'" + spec.text + "': " + name +
                                   " takes no settings");
  }
  size_t pos = 0;
  while (pos < settings.size()) {
    size_t comma = settings.find(',', pos);
    if (comma == std::string::npos) comma = settings.size();
    const std::string item = settings.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      return Status::InvalidArgument("'" + spec.text + "': '" + item +
                                     "' is not key=value");
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    if (vocab_parallel) {
      if (key != "world") {
        return Status::InvalidArgument(
            "'" + spec.text + "': unknown setting '" + key + "' (world)");
      }
      TORCHCOST_ASSIGN_OR_RETURN(spec.world, ParseCount(spec.text, key, value));
    } else if (key == "shift") {
      if (value != "logits" && value != "labels") {
        return Status::InvalidArgument("'" + spec.text + "': shift=" + value +
                                       " must be logits or labels");
      }
      spec.shift_labels = value == "labels";
    } else if (key == "upcast") {
      TORCHCOST_ASSIGN_OR_RETURN(spec.upcast, ParseBool(spec.text, key, value));
    } else if (key == "chunks") {
      TORCHCOST_ASSIGN_OR_RETURN(spec.chunks,
                                 ParseCount(spec.text, key, value));
    } else {
      return Status::InvalidArgument("'" + spec.text + "': unknown setting '" +
                                     key + "' (shift, upcast, chunks)");
    }
  }
  if (spec.chunks > 1 && (spec.shift_labels || !spec.upcast)) {
    return Status::InvalidArgument(
        "'" + spec.text +
        "': chunks shifts the labels and upcasts each chunk (torchtune); "
        "give no shift or upcast with it");
  }
  return spec;
}

bool LossAppendsOps(const LossSpec& spec) {
  return spec.kind == LossSpec::Kind::kCrossEntropy ||
         spec.kind == LossSpec::Kind::kMse ||
         spec.kind == LossSpec::Kind::kCausalLm ||
         spec.kind == LossSpec::Kind::kLm ||
         spec.kind == LossSpec::Kind::kVocabParallel;
}

std::string LossDescription(const LossSpec& spec) {
  switch (spec.kind) {
    case LossSpec::Kind::kSum:
      return "sum (out.sum() of the first output)";
    case LossSpec::Kind::kNone:
      return "none (the first output is the loss)";
    case LossSpec::Kind::kCrossEntropy:
      return "cross_entropy (F.cross_entropy, mean, int64 class targets)";
    case LossSpec::Kind::kMse:
      return "mse (F.mse_loss, mean)";
    case LossSpec::Kind::kLm:
      return "lm (Hugging Face's BertForMaskedLM / T5ForConditionalGeneration: "
             "cross-entropy mean of "
             "logits.view(-1, V) and labels.view(-1), unshifted, "
             "ignore_index=-100)";
    case LossSpec::Kind::kVocabParallel:
      return "vocab_parallel (Megatron-core's vocab_parallel_cross_entropy "
             "over " +
             std::to_string(spec.world) +
             " ranks' vocabulary slices: a float32 softmax of the slice "
             "saved, three all-reduces of the tokens' float32 statistics; "
             "labels pre-shifted, mean over the tokens)";
    case LossSpec::Kind::kCausalLm:
      break;
  }
  if (spec.chunks > 1) {
    return "causal_lm, torchtune's chunked cross-entropy over " +
           std::to_string(spec.chunks) +
           " chunks (float32 per chunk, labels shifted by padding)";
  }
  return std::string("causal_lm (Hugging Face: ") +
         (spec.upcast ? "float32 logits, " : "") +
         (spec.shift_labels ? "labels padded and shifted (ForCausalLMLoss)"
                            : "shifted logits copied (LlamaForCausalLM)") +
         ", cross-entropy mean, ignore_index=-100)";
}

}  // namespace torchcost
