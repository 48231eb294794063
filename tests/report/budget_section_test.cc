// Tests of how a budget's answer reads (src/report/budget_section.cc): each
// case of the line, and the JSON object's keys.
#include "report/budget_section.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchcost::report {
namespace {

using ::testing::HasSubstr;

BudgetAnswer Answer(bool fits, bool allocator, int64_t releases,
                    int64_t largest) {
  BudgetAnswer a;
  a.budget_bytes = int64_t{24} << 30;
  a.fits = fits;
  a.allocator = allocator;
  a.releases = releases;
  a.needed_bytes = int64_t{20} << 30;
  a.symbol = "B";
  a.at = 8;
  a.largest = largest;
  return a;
}

TEST(BudgetSectionTest, TextSaysWhatFitsAndWhy) {
  const int64_t budget = int64_t{24} << 30;
  std::string t = BudgetText(budget, Answer(true, false, 0, 13));
  EXPECT_EQ(t,
            "Budget 24.00 GiB: fits at B=8: it needs 20.00 GiB (21474836480) "
            "(the peak of tensor bytes; no allocator rounding, fragmentation "
            "or CUDA context); the largest B that fits: 13\n");
  t = BudgetText(budget, Answer(false, true, 0, 0));
  EXPECT_THAT(t, HasSubstr("does NOT fit at B=8: it needs 20.00 GiB"));
  EXPECT_THAT(t, HasSubstr("reserved peak + context"));
  EXPECT_THAT(t, HasSubstr("the largest B that fits: none (B=1 does not)"));
  t = BudgetText(budget, Answer(true, true, 3, 9));
  EXPECT_THAT(t, HasSubstr("fits at B=8 once the allocator releases its "
                           "cached segments (3 times)"));
  BudgetAnswer stopped = Answer(true, false, 0, 1 << 20);
  stopped.search_stopped = true;
  EXPECT_THAT(BudgetText(budget, stopped),
              HasSubstr("1048576 or more (the search stops there)"));
  BudgetAnswer unsearched = Answer(true, false, 0, -1);
  unsearched.symbol.clear();
  EXPECT_THAT(BudgetText(budget, unsearched),
              ::testing::Not(HasSubstr("largest")));
  EXPECT_EQ(BudgetText(budget, Status::InvalidArgument("bind S")),
            "Budget 24.00 GiB: bind S\n");
}

TEST(BudgetSectionTest, JsonCarriesEveryField) {
  const int64_t budget = int64_t{24} << 30;
  const nlohmann::ordered_json j = BudgetJson(budget, Answer(true, true, 2, 9));
  EXPECT_EQ(j["bytes"], budget);
  EXPECT_EQ(j["fits"], true);
  EXPECT_EQ(j["needed_bytes"], int64_t{20} << 30);
  EXPECT_EQ(j["decided_by"], "cuda_allocator");
  EXPECT_EQ(j["releases"], 2);
  EXPECT_FALSE(j.contains("pessimistic"));
  EXPECT_EQ(j["at"]["B"], 8);
  EXPECT_EQ(j["largest"]["value"], 9);
  EXPECT_EQ(j["largest"]["search_stopped"], false);
  const nlohmann::ordered_json e =
      BudgetJson(budget, Status::InvalidArgument("bind S"));
  EXPECT_EQ(e["error"], "bind S");
  EXPECT_EQ(e["bytes"], budget);
}

}  // namespace
}  // namespace torchcost::report
