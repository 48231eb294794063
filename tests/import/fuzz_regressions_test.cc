// Inputs fuzz/graph_json_fuzz.cc found that crashed the JSON graph frontend;
// each must now be a one-line error naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "torchcost/import.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;

TEST(GraphJsonFuzzRegressionTest, NumberBeyondDoubleIsAnError) {
  // nlohmann::json throws out_of_range, not parse_error, for "9e998"; it
  // escaped.
  Result<ir::Graph> g = ImportGraphJsonText("9e998", "m.json");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(),
              HasSubstr("m.json: not valid JSON: number overflow"));
  Result<ir::Graph> h = ImportGraphJsonText(
      R"({"format": "torchcost.graph", "version": 1e400})", "m.json");
  ASSERT_FALSE(h.ok());
}

}  // namespace
}  // namespace torchcost
