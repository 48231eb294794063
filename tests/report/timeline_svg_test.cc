// The SVG memory timeline: well-formed, one legend entry per category, the
// phases and the peak labelled, and its tallest stack at the peak.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "report/tiny_net.h"
#include "torchcost/report.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::TinyNet;

// Returns true if every element closes in order (self-closing ones aside).
bool TagsBalance(const std::string& svg) {
  std::vector<std::string> open;
  for (size_t i = svg.find('<'); i != std::string::npos;
       i = svg.find('<', i + 1)) {
    const size_t end = svg.find('>', i);
    if (end == std::string::npos) return false;
    const std::string tag = svg.substr(i + 1, end - i - 1);
    if (tag.empty()) return false;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find_first_of(" \n")));
    }
  }
  return open.empty();
}

// Returns the number in attribute `name` of the first element that has
// `marker`.
double Attribute(const std::string& svg, const std::string& marker,
                 const std::string& name) {
  const size_t at = svg.find(marker);
  if (at == std::string::npos) return -1;
  const size_t value = svg.find(name + "=\"", at);
  if (value == std::string::npos) return -1;
  return std::atof(svg.c_str() + value + name.size() + 2);
}

// Returns the smallest y a path's "V" commands reach: its highest point.
double HighestY(const std::string& svg, const std::string& marker) {
  const size_t at = svg.find(marker);
  const size_t d = svg.find(" d=\"", at);
  const size_t end = svg.find('"', d + 4);
  double best = 1e18;
  for (size_t i = d; i < end; ++i) {
    if (svg[i] == 'V') best = std::min(best, std::atof(svg.c_str() + i + 1));
  }
  return best;
}

class TimelineSvgTest : public ::testing::Test {
 protected:
  std::string Render(const sym::Bindings& b) {
    return RenderTimelineSvg(net_.graph, net_.report, b);
  }
  TinyNet net_;
};

TEST_F(TimelineSvgTest, IsWellFormedSvg) {
  const std::string svg = Render({{"B", 8}});
  EXPECT_THAT(svg, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("width=\"900\" height=\"420\""));
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_TRUE(TagsBalance(svg));
}

TEST_F(TimelineSvgTest, LegendHasEveryCategory) {
  const std::string svg = Render({{"B", 8}});
  for (int c = 0; c < kNumMemCategories; ++c) {
    const std::string name(MemCategoryName(static_cast<MemCategory>(c)));
    const size_t entry =
        svg.find("class=\"legend-entry\" data-category=\"" + name + "\"");
    ASSERT_NE(entry, std::string::npos) << name;
    EXPECT_NE(svg.find(">" + name + "</text>", entry), std::string::npos);
    EXPECT_THAT(svg, HasSubstr("class=\"layer\" data-category=\"" + name));
  }
}

TEST_F(TimelineSvgTest, PhasesAreLabelled) {
  const std::string svg = Render({{"B", 8}});
  for (const char* phase : {">forward<", ">backward<", ">optimizer<"})
    EXPECT_THAT(svg, HasSubstr(phase));
}

TEST_F(TimelineSvgTest, PeakIsLabelledWithValueAndNode) {
  // B = 8: point 6 holds 6040 + 5800 + 1192*8 + 616*8 + 11920 + 256*8 bytes.
  const int64_t peak = 6040 + 5800 + 1192 * 8 + 616 * 8 + 11920 + 256 * 8;
  const std::string svg = Render({{"B", 8}});
  EXPECT_THAT(svg,
              HasSubstr("peak 39.33 KiB (" + std::to_string(peak) + " bytes)"));
  EXPECT_THAT(svg, HasSubstr("during backward at node %logits (aten::linear, "
                             "module classifier)"));
  EXPECT_EQ(Attribute(svg, "class=\"peak\"", "data-bytes"), peak);
  EXPECT_EQ(Attribute(svg, "class=\"peak\"", "data-point"), 6);
  // B = 1: the optimizer's temporaries make the peak.
  EXPECT_THAT(Render({{"B", 1}}),
              HasSubstr("peak 35.33 KiB (36176 bytes)"));  // 35920 + 256.
}

TEST_F(TimelineSvgTest, TallestStackIsThePeak) {
  const int64_t peak = 6040 + 5800 + 1192 * 8 + 616 * 8 + 11920 + 256 * 8;
  const std::string svg = Render({{"B", 8}});
  const double top = Attribute(svg, "class=\"plot\"", "data-top");
  const double bottom = Attribute(svg, "class=\"plot\"", "data-bottom");
  const double top_bytes = Attribute(svg, "class=\"plot\"", "data-top-bytes");
  ASSERT_GT(bottom, top);
  ASSERT_GT(top_bytes, peak);
  // The first layer drawn is the whole stack; its highest step is the peak.
  const double y = HighestY(svg, "class=\"layer\"");
  const double bytes = (bottom - y) / (bottom - top) * top_bytes;
  const double one_pixel = top_bytes / (bottom - top);
  EXPECT_NEAR(bytes, peak, one_pixel);
  // Every other layer is lower.
  for (size_t at = svg.find("class=\"layer\"", svg.find("class=\"layer\"") + 1);
       at != std::string::npos; at = svg.find("class=\"layer\"", at + 1)) {
    EXPECT_GE(HighestY(svg.substr(at), "class=\"layer\""), y);
  }
}

TEST_F(TimelineSvgTest, NeedsEverySymbolBound) {
  EXPECT_THAT(UnboundTimelineSymbols(net_.report, {}), ElementsAre("B"));
  EXPECT_TRUE(UnboundTimelineSymbols(net_.report, {{"B", 8}}).empty());
  const std::string svg = Render({});
  EXPECT_THAT(svg, StartsWith("<svg"));
  EXPECT_THAT(svg, HasSubstr("needs every symbol bound"));
  EXPECT_THAT(svg, Not(HasSubstr("class=\"layer\"")));
}

TEST_F(TimelineSvgTest, EscapesNames) {
  net_.graph.scopes[6].path = "head<&>";
  EXPECT_THAT(Render({{"B", 8}}), HasSubstr("module head&lt;&amp;&gt;)"));
  EXPECT_TRUE(TagsBalance(Render({{"B", 8}})));
}

}  // namespace
}  // namespace torchcost
