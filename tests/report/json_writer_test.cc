// Tests of the streaming JSON writer (src/report/json_writer.h): each document
// is written with the Writer and built as an nlohmann::ordered_json, whose
// dump(2) is the expected text.
#include "report/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace torchcost::report {
namespace {

using Json = nlohmann::ordered_json;

// Returns what the writer's text must be: dump(2) and the newline Take adds.
std::string Expected(const Json& j) { return j.dump(2) + "\n"; }

// Returns Expected's text with invalid UTF-8 replaced by U+FFFD (which the
// writer does; dump(2) throws).
std::string ExpectedReplaced(const Json& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

TEST(JsonWriterTest, EmptyObject) {
  Writer w(0);
  w.BeginObject();
  w.EndObject();
  EXPECT_EQ(w.Take(), Expected(Json::object()));
}

TEST(JsonWriterTest, EmptyArray) {
  Writer w(0);
  w.BeginArray();
  w.EndArray();
  EXPECT_EQ(w.Take(), Expected(Json::array()));
}

TEST(JsonWriterTest, TopLevelScalar) {
  Writer w(0);
  w.Int(42);
  EXPECT_EQ(w.Take(), Expected(42));
}

TEST(JsonWriterTest, FlatObjectOfScalars) {
  Json j;
  j["int"] = -7;
  j["uint"] = uint64_t{7};
  j["yes"] = true;
  j["no"] = false;
  j["none"] = nullptr;
  j["text"] = "plain";
  j["empty_text"] = "";

  Writer w(16);
  w.BeginObject();
  w.Key("int");
  w.Int(-7);
  w.Key("uint");
  w.UInt(7);
  w.Key("yes");
  w.Bool(true);
  w.Key("no");
  w.Bool(false);
  w.Key("none");
  w.Null();
  w.Key("text");
  w.Str("plain");
  w.Key("empty_text");
  w.Str("");
  w.EndObject();
  EXPECT_EQ(w.Take(), Expected(j));
}

TEST(JsonWriterTest, NestedObjectsAndArrays) {
  Json j;
  j["a"] = Json::array({1, Json::array({2, 3}), Json::array(), Json::object()});
  j["b"]["c"]["d"] = Json::array({Json::object({{"e", nullptr}})});
  j["b"]["empty"] = Json::object();
  j["f"] = Json::array({Json::array({Json::array()})});

  Writer w(0);
  w.BeginObject();
  w.Key("a");
  w.BeginArray();
  w.Int(1);
  w.BeginArray();
  w.Int(2);
  w.Int(3);
  w.EndArray();
  w.BeginArray();
  w.EndArray();
  w.BeginObject();
  w.EndObject();
  w.EndArray();
  w.Key("b");
  w.BeginObject();
  w.Key("c");
  w.BeginObject();
  w.Key("d");
  w.BeginArray();
  w.BeginObject();
  w.Key("e");
  w.Null();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.Key("empty");
  w.BeginObject();
  w.EndObject();
  w.EndObject();
  w.Key("f");
  w.BeginArray();
  w.BeginArray();
  w.BeginArray();
  w.EndArray();
  w.EndArray();
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(w.Take(), Expected(j));
}

TEST(JsonWriterTest, IntegerLimits) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  const uint64_t uhi = std::numeric_limits<uint64_t>::max();
  Json j = Json::array({lo, lo + 1, int64_t{-1}, int64_t{0}, hi, uint64_t{0},
                        static_cast<uint64_t>(hi) + 1, uhi});

  Writer w(0);
  w.BeginArray();
  w.Int(lo);
  w.Int(lo + 1);
  w.Int(-1);
  w.Int(0);
  w.Int(hi);
  w.UInt(0);
  w.UInt(static_cast<uint64_t>(hi) + 1);
  w.UInt(uhi);
  w.EndArray();
  EXPECT_EQ(w.Take(), Expected(j));
}

// Returns the writer's object {s: s for each of `strings`}.
template <size_t N>
std::string WriteEachAsItsOwnKey(const std::string (&strings)[N]) {
  Writer w(0);
  w.BeginObject();
  for (const std::string& s : strings) {
    w.Key(s);
    w.Str(s);
  }
  w.EndObject();
  return w.Take();
}

// Strings the writer does not copy as they are: it hands them to nlohmann.
TEST(JsonWriterTest, StringsNeedingEscapes) {
  const std::string strings[] = {
      "quote \" here",
      "back\\slash",
      "line\nfeed and\ttab and\rreturn",
      std::string("nul \0 byte", 10),
      "\x01\x1f control",
      "\x7f delete",
      "/ slash stays",
  };
  Json j = Json::object();
  for (const std::string& s : strings) j[s] = s;
  EXPECT_EQ(WriteEachAsItsOwnKey(strings), Expected(j));
}

TEST(JsonWriterTest, Unicode) {
  const std::string strings[] = {
      "caf\xc3\xa9",                  // é, two bytes.
      "\xe6\x97\xa5\xe6\x9c\xac",     // 日本, three bytes each.
      "\xf0\x9f\x98\x80 emoji",       // U+1F600, four bytes.
      "\xe2\x80\xa8 line separator",  // U+2028, kept raw.
  };
  Json j = Json::array();
  Writer w(0);
  w.BeginArray();
  for (const std::string& s : strings) {
    j.push_back(Json::object({{s, s}}));
    w.BeginObject();
    w.Key(s);
    w.Str(s);
    w.EndObject();
  }
  w.EndArray();
  EXPECT_EQ(w.Take(), Expected(j));
}

TEST(JsonWriterTest, InvalidUtf8IsReplaced) {
  const std::string strings[] = {
      "bad \xff byte",
      "cut \xe6\x97",
      "overlong \xc0\xaf",
      "surrogate \xed\xa0\x80",
  };
  Json j = Json::object();
  for (const std::string& s : strings) j[s] = s;
  const std::string text = WriteEachAsItsOwnKey(strings);
  EXPECT_EQ(text, ExpectedReplaced(j));
  EXPECT_NE(text.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD.
}

// Doubles are written by embedding: nlohmann prints them (shortest round trip,
// a ".0" on integral values, null for NaN and infinities).
TEST(JsonWriterTest, EmbeddedDoubles) {
  const double doubles[] = {
      0.0,
      -0.0,
      1.0,
      0.1,
      -2.5,
      1e100,
      1e-300,
      123456789012345680.0,
      std::numeric_limits<double>::max(),
      std::numeric_limits<double>::min(),
      std::numeric_limits<double>::denorm_min(),
      std::numeric_limits<double>::epsilon(),
      std::nan(""),
      std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity(),
  };
  Json j = Json::object();
  Json in_array = Json::array();
  for (double d : doubles) in_array.push_back(d);
  j["scalar"] = 0.25;
  j["doubles"] = in_array;
  j["nested"]["doubles"] = in_array;

  Writer w(0);
  w.BeginObject();
  w.Key("scalar");
  w.Embed(0.25);
  w.Key("doubles");
  w.BeginArray();
  for (double d : doubles) w.Embed(d);
  w.EndArray();
  w.Key("nested");
  w.BeginObject();
  w.Key("doubles");
  w.Embed(in_array);
  w.EndObject();
  w.EndObject();
  EXPECT_EQ(w.Take(), Expected(j));
}

// An embedded tree is indented to the depth it lands at.
TEST(JsonWriterTest, EmbedAtDepth) {
  Json part;
  part["list"] = Json::array({1, "two", Json::array({3.5, nullptr})});
  part["empty_object"] = Json::object();
  part["empty_array"] = Json::array();
  part["text"] = "no\nraw newline";
  Json j;
  j["top"] = part;
  j["deep"] = Json::array({Json::array({part, part})});
  j["scalar"] = "s";

  Writer w(0);
  w.BeginObject();
  w.Key("top");
  w.Embed(part);
  w.Key("deep");
  w.BeginArray();
  w.BeginArray();
  w.Embed(part);
  w.Embed(part);
  w.EndArray();
  w.EndArray();
  w.Key("scalar");
  w.Embed("s");
  w.EndObject();
  EXPECT_EQ(w.Take(), Expected(j));
}

TEST(JsonWriterTest, EmbedInvalidUtf8IsReplaced) {
  const Json bad = Json::array({"ok", "bad \xff"});
  Json j;
  j["bad"] = bad;

  Writer w(0);
  w.BeginObject();
  w.Key("bad");
  w.Embed(bad);
  w.EndObject();
  EXPECT_EQ(w.Take(), ExpectedReplaced(j));
}

TEST(JsonWriterTest, WriteMembersAmongWrittenMembers) {
  Json members;
  members["a"] = 1;
  members["b \"quoted\""] = Json::array({true, false});
  members["c"]["d"] = "e";
  Json j;
  j["before"] = 0;
  for (const auto& [key, value] : members.items()) j[key] = value;
  j["after"] = Json::object();

  Writer w(0);
  w.BeginObject();
  w.Key("before");
  w.Int(0);
  WriteMembers(w, members);
  w.Key("after");
  w.BeginObject();
  w.EndObject();
  w.EndObject();
  EXPECT_EQ(w.Take(), Expected(j));
}

TEST(JsonWriterTest, WriteMembersOfEmptyObjectWritesNothing) {
  Json j;
  j["inner"] = Json::object();

  Writer w(0);
  w.BeginObject();
  w.Key("inner");
  w.BeginObject();
  WriteMembers(w, Json::object());
  w.EndObject();
  w.EndObject();
  EXPECT_EQ(w.Take(), Expected(j));
}

// A document as the report writes it: ~10^4 members, longer than the hint.
TEST(JsonWriterTest, LargeDocumentBeyondHint) {
  Json j;
  Json rows = Json::array();
  Writer w(8);
  w.BeginObject();
  w.Key("rows");
  w.BeginArray();
  for (int i = 0; i < 2000; ++i) {
    Json row;
    row["index"] = i;
    row["name"] = "row " + std::to_string(i);
    row["half"] = i / 2.0;
    row["flags"] = Json::array({i % 2 == 0, nullptr});
    rows.push_back(row);

    w.BeginObject();
    w.Key("index");
    w.Int(i);
    w.Key("name");
    w.Str("row " + std::to_string(i));
    w.Key("half");
    w.Embed(i / 2.0);
    w.Key("flags");
    w.BeginArray();
    w.Bool(i % 2 == 0);
    w.Null();
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  j["rows"] = rows;
  EXPECT_EQ(w.Take(), Expected(j));
}

}  // namespace
}  // namespace torchcost::report
