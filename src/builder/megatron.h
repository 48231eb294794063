// Megatron-LM's conventions the tensor-parallel families follow where
// Hugging Face's models have no counterpart: the padded vocabulary and the
// vocabulary-parallel loss.
#ifndef TORCHCOST_SRC_BUILDER_MEGATRON_H_
#define TORCHCOST_SRC_BUILDER_MEGATRON_H_

#include <cstdint>
#include <string>

namespace torchcost::builder {

// Megatron's default make_vocab_size_divisible_by
// (megatron/training/arguments.py).
inline constexpr int64_t kMegatronVocabMultiple = 128;

// The note of a family given sp=true at tp=1 (megatron/training/arguments.py
// disables sequence parallelism then).
inline constexpr const char* kSpOffNote =
    "sp=true has no effect at tp=1 (Megatron turns sequence parallelism off "
    "without tensor parallelism)";

// Returns the vocabulary one tensor-parallel group of `tp` ranks holds:
// `vocab` itself for tp = 1 (Hugging Face's models are not padded), else
// Megatron's vocab_size_with_padding, the next multiple of multiple * tp.
// Arguments are positive and at most 2^31 (the families' limit).
int64_t PaddedVocab(int64_t vocab, int64_t multiple, int64_t tp);

// Returns the note a family adds when it pads: "vocab 50257 padded to 51200
// (...)", or "" when `padded` == `vocab`.
std::string PaddedVocabNote(int64_t vocab, int64_t padded, int64_t multiple,
                            int64_t tp);

// Returns the training loss of a causal LM whose logits are one of `tp`
// ranks' vocabulary slices: Megatron's vocab-parallel cross entropy
// ("vocab_parallel:world=tp"); `loss` itself for tp = 1 or no loss.
std::string TensorParallelLoss(const std::string& loss, int64_t tp);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_MEGATRON_H_
