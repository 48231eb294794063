#include "builder/megatron.h"

namespace torchcost::builder {

int64_t PaddedVocab(int64_t vocab, int64_t multiple, int64_t tp) {
  if (tp <= 1) return vocab;
  // Megatron (megatron/core/tokenizers/utils/build_tokenizer.py,
  // vocab_size_with_padding): after = ceil(orig / multiple) * multiple,
  // multiple = make_vocab_size_divisible_by * tp.
  const int64_t m = multiple * tp;
  return (vocab + m - 1) / m * m;
}

std::string PaddedVocabNote(int64_t vocab, int64_t padded, int64_t multiple,
                            int64_t tp) {
  if (padded == vocab) return "";
  return "vocab " + std::to_string(vocab) + " padded to " +
         std::to_string(padded) + " (" + std::to_string(padded - vocab) +
         " dummy tokens; Megatron's make_vocab_size_divisible_by=" +
         std::to_string(multiple) + " x tp=" + std::to_string(tp) + "); " +
         std::to_string(padded / tp) +
         " rows of the embedding and the output layer per rank";
}

std::string TensorParallelLoss(const std::string& loss, int64_t tp) {
  if (tp <= 1 || loss.empty()) return loss;
  return "vocab_parallel:world=" + std::to_string(tp);
}

}  // namespace torchcost::builder
