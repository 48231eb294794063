#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/tiny_net.h"
#include "torchcost/report.h"

namespace torchcost {
namespace {

using nlohmann::json;
using testing::TinyNet;
namespace t = testing;

class JsonReportTest : public ::testing::Test {
 protected:
  json Render(const sym::Bindings& b) {
    return json::parse(RenderJson(net_.graph, net_.report, b));
  }
  TinyNet net_;
};

TEST_F(JsonReportTest, Header) {
  json j = Render({});
  EXPECT_EQ(j["schema"], "torchcost.report");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["model"], "tiny.pt");
  EXPECT_EQ(j["symbols"], json::array({"B"}));
  EXPECT_TRUE(j["bindings"].is_object());
  EXPECT_TRUE(j["bindings"].empty());
  EXPECT_EQ(j["conventions"]["flops_per_fma"], 2);
}

TEST_F(JsonReportTest, KeysInDocumentedOrder) {
  const std::string text = RenderJson(net_.graph, net_.report, {});
  size_t last = 0;
  for (const char* key :
       {"\"schema\"", "\"version\"", "\"model\"", "\"inputs\"", "\"symbols\"",
        "\"bindings\"", "\"conventions\"", "\"totals\"", "\"modules\"",
        "\"ops\"", "\"unknown_ops\"", "\"assumptions\"", "\"diagnostics\""}) {
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GT(at, last) << key;
    last = at;
  }
}

TEST_F(JsonReportTest, InputsKeepSymbolsUnlessBound) {
  json j = Render({});
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0]["shape"], json::array({net_.B.ToString(), 1, 8, 8}));
  EXPECT_EQ(j["inputs"][0]["dtype"], "float32");
  json bound = Render({{"B", 8}});
  EXPECT_EQ(bound["inputs"][0]["shape"], json::array({8, 1, 8, 8}));
  EXPECT_EQ(bound["bindings"], json({{"B", 8}}));
}

TEST_F(JsonReportTest, TotalsAreExactIntegers) {
  json totals = Render({})["totals"];
  EXPECT_EQ(totals["params"], t::kParams);
  EXPECT_EQ(totals["trainable_params"], t::kParams - t::kConv2Params);
  EXPECT_EQ(totals["buffers"], 0);
  EXPECT_EQ(totals["param_bytes"], t::kParams * 4);  // float32
  EXPECT_EQ(totals["buffer_bytes"], 0);
}

TEST_F(JsonReportTest, SymbolicValuesCarryTextAndValue) {
  json unbound = Render({})["totals"];
  EXPECT_EQ(unbound["flops"]["expr"], (t::kFlops * net_.B).ToString());
  EXPECT_TRUE(unbound["flops"]["value"].is_null());
  EXPECT_EQ(unbound["transcendentals"]["expr"], "0");
  EXPECT_EQ(unbound["transcendentals"]["value"],
            0);  // A constant evaluates without bindings.

  json bound = Render({{"B", 8}})["totals"];
  EXPECT_EQ(bound["macs"]["expr"],
            (t::kMacs * net_.B).ToString());  // Text stays symbolic.
  EXPECT_EQ(bound["macs"]["value"], 8 * t::kMacs);
  EXPECT_EQ(bound["flops"]["value"], 8 * t::kFlops);
}

TEST_F(JsonReportTest, ValuesBeyondInt64AreDecimalStrings) {
  net_.report.flops = (int64_t{1} << 62) * net_.B;
  // 2^62 * 16 = 2^66 = 73786976294838206464 does not fit uint64 either.
  json totals = Render({{"B", 16}})["totals"];
  EXPECT_EQ(totals["flops"]["value"], "73786976294838206464");
  // 2^62 * 2 = 2^63 fits uint64 only.
  EXPECT_EQ(Render({{"B", 2}})["totals"]["flops"]["value"].get<uint64_t>(),
            uint64_t{1} << 63);
}

TEST_F(JsonReportTest, ModulesRootFirstInScopeOrder) {
  json modules = Render({{"B", 2}})["modules"];
  ASSERT_EQ(modules.size(), net_.graph.scopes.size());
  EXPECT_EQ(modules[0]["path"], "");
  EXPECT_EQ(modules[0]["name"], "TinyNet");
  EXPECT_EQ(modules[0]["type"], "TinyNet");
  EXPECT_EQ(modules[0]["depth"], 0);
  EXPECT_TRUE(modules[0]["parent"].is_null());

  const json& conv = modules[2];
  EXPECT_EQ(conv["path"], "features.0");
  EXPECT_EQ(conv["name"], "0");
  EXPECT_EQ(conv["type"], "Conv2d");
  EXPECT_EQ(conv["depth"], 2);
  EXPECT_EQ(conv["parent"], "features");
  EXPECT_EQ(conv["params"], t::kConv0Params);
  EXPECT_EQ(conv["trainable_params"], t::kConv0Params);
  EXPECT_EQ(conv["macs"]["value"], 2 * t::kConv0Macs);
  EXPECT_EQ(conv["flops"]["value"],
            2 * 2 * t::kConv0Macs);  // B=2, 2 FLOPs per MAC.
  EXPECT_EQ(conv["output_shapes"], json::array({json::array({2, 4, 6, 6})}));

  const json& frozen = modules[4];
  EXPECT_EQ(frozen["path"], "features.2");
  EXPECT_EQ(frozen["trainable_params"], 0);
}

TEST_F(JsonReportTest, OpsAndIssues) {
  json j = Render({});
  ASSERT_EQ(j["ops"].size(), 4u);
  EXPECT_EQ(j["ops"][0]["op"], "aten::_convolution");
  EXPECT_EQ(j["ops"][0]["count"], 2);
  EXPECT_EQ(j["ops"][0]["macs"]["expr"],
            ((t::kConv0Macs + t::kConv2Macs) * net_.B).ToString());
  EXPECT_TRUE(j["ops"][0]["transcendentals"].contains("value"));
  EXPECT_EQ(j["unknown_ops"],
            json::parse(R"([{"op": "aten::mystery", "count": 2}])"));
  EXPECT_EQ(j["assumptions"].size(), 1u);
  ASSERT_EQ(j["diagnostics"].size(), 1u);
  EXPECT_EQ(j["diagnostics"][0]["severity"], "warning");
  EXPECT_NE(
      j["diagnostics"][0]["message"].get<std::string>().find("aten::mystery"),
      std::string::npos);
}

TEST_F(JsonReportTest, InvalidUtf8NamesDoNotThrow) {
  net_.graph.scopes[2].name = "bad\xff";
  json j;
  ASSERT_NO_THROW(j = Render({}));
  EXPECT_EQ(j["modules"].size(), net_.graph.scopes.size());
}

TEST_F(JsonReportTest, MissingModuleStatsGiveZeros) {
  net_.report.modules.pop_back();  // classifier has no stats.
  json classifier = Render({})["modules"][6];
  EXPECT_EQ(classifier["path"], "classifier");
  EXPECT_EQ(classifier["params"], 0);
  EXPECT_EQ(classifier["flops"]["value"], 0);
}

}  // namespace
}  // namespace torchcost
