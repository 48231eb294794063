// Tests of what the user says about inputs: --set values and a generation's
// --sweep specs.
#include "cli/inputs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost::cli {
namespace {

TEST(InputsTest, ParseSetsSplitsCommasAndRejectsNonIntegers) {
  std::vector<SymbolValue> sets;
  ASSERT_TRUE(ParseSets({"B=8,S=1024"}, sets).ok());
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[1].name, "S");
  EXPECT_EQ(sets[1].value, 1024);
  sets.clear();
  const Outcome bad = ParseSets({"B=x"}, sets);
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_NE(bad.message.find("--set B=x"), std::string::npos) << bad.message;
}

TEST(InputsTest, GenerationSweepsTakeBSAndTOnly) {
  std::vector<SweepSpec> sweeps;
  ASSERT_TRUE(ParseGenerationSweeps({"S=1024:4096:x2", "B=1,2"}, sweeps).ok());
  ASSERT_EQ(sweeps.size(), 2u);
  EXPECT_EQ(sweeps[0].symbol, "S");
  EXPECT_EQ(sweeps[1].symbol, "B");

  sweeps.clear();
  const Outcome other = ParseGenerationSweeps({"H=1,2"}, sweeps);
  EXPECT_EQ(other.code, kExitUsage);
  EXPECT_EQ(other.message,
            "--sweep H=1,2: unknown symbol 'H'; --mode generate sweeps B, S, "
            "T");
  EXPECT_FALSE(ParseGenerationSweeps({"S="}, sweeps).ok());
}

}  // namespace
}  // namespace torchcost::cli
