// Megatron's padded vocabulary
// (megatron/core/tokenizers/utils/build_tokenizer.py, vocab_size_with_padding):
// multiples derived by hand.
#include "builder/megatron.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchcost::builder {
namespace {

TEST(MegatronTest, PaddedVocabIsTheNextMultipleOf128TimesTp) {
  // tp = 1: Hugging Face's size, unpadded.
  EXPECT_EQ(PaddedVocab(50257, 128, 1), 50257);
  // 256 * 197 = 50432 >= 50257 > 256 * 196 = 50176.
  EXPECT_EQ(PaddedVocab(50257, 128, 2), 50432);
  EXPECT_EQ(PaddedVocab(50257, 128, 8), 51200);  // 1024 * 50.
  // 256 * 125: already a multiple.
  EXPECT_EQ(PaddedVocab(32000, 128, 2), 32000);
  // 1024 * 32 (31.25 rounded up).
  EXPECT_EQ(PaddedVocab(32000, 128, 8), 32768);
  EXPECT_EQ(PaddedVocab(1, 1, 3), 3);
  // No overflow at the limits.
  EXPECT_EQ(PaddedVocab(int64_t{1} << 31, 1 << 30, 4), int64_t{1} << 32);
}

TEST(MegatronTest, NoteStatesThePadding) {
  EXPECT_EQ(PaddedVocabNote(32000, 32000, 128, 2), "");
  EXPECT_THAT(PaddedVocabNote(50257, 51200, 128, 8),
              ::testing::StartsWith(
                  "vocab 50257 padded to 51200 (943 dummy tokens; Megatron's "
                  "make_vocab_size_divisible_by=128 x tp=8); 6400 rows"));
}

}  // namespace
}  // namespace torchcost::builder
