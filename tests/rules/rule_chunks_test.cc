// Tests of splitting rule files into chunks that compile on their own, and of
// RuleSet's lazily compiled rules (the built-in ones, AddTextLazy): the same
// rules as compiling each file whole, errors naming file, line and rule.
#include "rules/rule_chunks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "rules/builtin_rules_data.h"
#include "rules/op_rule.h"
#include "rules/rule_parser.h"
#include "torchcost/rules.h"

namespace torchcost::rules {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Line numbers (1-based) are in the comments; SplitRuleFile's are 0-based.
constexpr const char* kFile = R"yaml(# 1: a comment
version: 1                           # 2
rules:                               # 3
  - op: t::a                         # 4
    schema: "a(Tensor self) -> Tensor"
    outputs: &same                   # 6: an anchor
      out: self
  # 8: a comment between rules
  - op: [t::b, "t::b2",
         t::b3]                      # 10: a flow list over two lines
    schema: "b(Tensor self) -> Tensor"
    outputs: *same                   # 12: uses rule a's anchor
  - schema: "c(Tensor self) -> Tensor"
    op: 't::c'                       # 14: op after schema, quoted
    outputs:
      out: self
    doc: 2 *nothing                  # 17: not an alias of a known anchor
ignored:                             # 18
  - t::free
)yaml";

TEST(RuleChunksTest, SplitsRulesAndTheirAnchors) {
  Result<SplitFile> split = SplitRuleFile(kFile);
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ(split->version_line, 1);
  EXPECT_EQ(split->rules_line, 2);
  EXPECT_EQ(split->ignored_first_line, 17);
  EXPECT_EQ(split->ignored_end_line, 20);  // The line after the last, empty.
  EXPECT_TRUE(split->ignored_read);
  EXPECT_THAT(split->ignored, ElementsAre("t::free"));
  // A quoted name is left to the YAML reader.
  Result<SplitFile> quoted =
      SplitRuleFile("version: 1\nignored:\n  - t::a\n  - \"t::b\"\n");
  ASSERT_TRUE(quoted.ok()) << quoted.status().message();
  EXPECT_FALSE(quoted->ignored_read);
  EXPECT_TRUE(quoted->ignored.empty());
  ASSERT_EQ(split->chunks.size(), 3u);
  // a: lines 4-8 (its comment line 8 too).
  ASSERT_EQ(split->chunks[0].rules.size(), 1u);
  EXPECT_EQ(split->chunks[0].rules[0].first_line, 3);
  EXPECT_EQ(split->chunks[0].rules[0].end_line, 8);
  EXPECT_THAT(split->chunks[0].rules[0].ops, ElementsAre("t::a"));
  // b: needs a (its anchor), listed first.
  ASSERT_EQ(split->chunks[1].rules.size(), 2u);
  EXPECT_THAT(split->chunks[1].rules[0].ops, ElementsAre("t::a"));
  EXPECT_THAT(split->chunks[1].rules[1].ops,
              ElementsAre("t::b", "t::b2", "t::b3"));
  EXPECT_EQ(split->chunks[1].rules[1].first_line, 8);
  EXPECT_EQ(split->chunks[1].rules[1].end_line, 12);
  // c: alone.
  ASSERT_EQ(split->chunks[2].rules.size(), 1u);
  EXPECT_THAT(split->chunks[2].rules[0].ops, ElementsAre("t::c"));
  EXPECT_EQ(split->chunks[2].rules[0].end_line, 17);
}

TEST(RuleChunksTest, ChunkKeepsLinesAndColumns) {
  Result<SplitFile> split = SplitRuleFile(kFile);
  ASSERT_TRUE(split.ok());
  const std::string text =
      ChunkAsFile(kFile, *split, &split->chunks[1], /*with_ignored=*/false);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
            std::count(kFile, kFile + strlen(kFile), '\n'));
  Result<RuleFile> parsed = ParseRuleFile(text, "f.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->rules.size(), 2u);  // a, for its anchor, then b.
  EXPECT_EQ(parsed->rules[1]->line, 9);
  EXPECT_TRUE(parsed->ignored.empty());
  EXPECT_EQ(text.find('#'), std::string::npos) << "comments are dropped";
  const std::string ignored =
      ChunkAsFile(kFile, *split, nullptr, /*with_ignored=*/true);
  parsed = ParseRuleFile(ignored, "f.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_TRUE(parsed->rules.empty());
  EXPECT_THAT(parsed->ignored, ElementsAre("t::free"));
  EXPECT_THAT(parsed->ignored_lines, ElementsAre(19));
}

// The split's line offsets locate the chunk's lines; a split of another text
// (or one without offsets) has them found again, with the same result.
TEST(RuleChunksTest, ChunkFromTheSplitsLineOffsets) {
  Result<SplitFile> split = SplitRuleFile(kFile);
  ASSERT_TRUE(split.ok());
  // kFile's lines start at 0 and after each newline.
  std::vector<uint32_t> starts = {0};
  for (size_t i = 0; kFile[i] != '\0'; ++i) {
    if (kFile[i] == '\n') starts.push_back(static_cast<uint32_t>(i + 1));
  }
  EXPECT_EQ(split->line_starts, starts);
  SplitFile bare = *split;
  bare.line_starts.clear();
  for (bool with_line_of : {false, true}) {
    std::vector<int> line_of, bare_line_of;
    const std::string text =
        ChunkAsFile(kFile, *split, &split->chunks[1], /*with_ignored=*/true,
                    with_line_of ? &line_of : nullptr);
    EXPECT_EQ(text, ChunkAsFile(kFile, bare, &split->chunks[1],
                                /*with_ignored=*/true,
                                with_line_of ? &bare_line_of : nullptr));
    EXPECT_EQ(line_of, bare_line_of);
    EXPECT_THAT(text, ::testing::HasSubstr("t::b"));
  }
  // The same layout shifted by one byte: the offsets do not fit, and are not
  // used.
  const std::string shifted = std::string("\n") + kFile;
  Result<SplitFile> shifted_split = SplitRuleFile(shifted);
  ASSERT_TRUE(shifted_split.ok());
  SplitFile stale = *shifted_split;
  stale.line_starts = split->line_starts;
  stale.text_size = strlen(kFile);
  EXPECT_EQ(
      ChunkAsFile(shifted, stale, &shifted_split->chunks[1], true),
      ChunkAsFile(shifted, *shifted_split, &shifted_split->chunks[1], true));
}

// Where '#' may be text (a block scalar, a quote over two lines), comments
// stay.
TEST(RuleChunksTest, CommentsStayWhereTheyMayBeText) {
  const char* kBlock =
      "version: 1\nrules:\n  - op: t::a   # ruled\n    doc: |\n      # not a "
      "comment\n"
      "    schema: \"a(Tensor self) -> Tensor\"\n    outputs:\n      out: "
      "self\n";
  Result<SplitFile> split = SplitRuleFile(kBlock);
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ(ChunkAsFile(kBlock, *split, &split->chunks[0], false), kBlock);
  const char* kQuote =
      "version: 1\nrules:\n  - op: t::a   # ruled\n    doc: \"two # \n      "
      "lines\"\n"
      "    schema: \"a(Tensor self) -> Tensor\"\n    outputs:\n      out: "
      "self\n";
  split = SplitRuleFile(kQuote);
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ(ChunkAsFile(kQuote, *split, &split->chunks[0], false), kQuote);
}

TEST(RuleChunksTest, LayoutsItDoesNotReadAreUnimplemented) {
  const char* kCases[] = {
      // op as a block list
      "version: 1\nrules:\n  - op:\n      - t::a\n    schema: \"a() -> "
      "Tensor\"\n",
      // no op
      "version: 1\nrules:\n  - schema: \"a() -> Tensor\"\n",
      // an unknown key
      "version: 1\nother: 3\n",
      // a flow list of rules
      "version: 1\nrules: []\n",
      // a tab
      "version: 1\nrules:\n\t- op: t::a\n",
      // an unclosed list
      "version: 1\nrules:\n  - op: [t::a,\n",
  };
  for (const char* text : kCases) {
    Result<SplitFile> split = SplitRuleFile(text);
    EXPECT_FALSE(split.ok()) << text;
    if (!split.ok())
      EXPECT_EQ(split.status().code(), Status::Code::kUnimplemented) << text;
  }
}

// Every shipped file splits (none falls back to compiling whole), and its
// chunks compile to the rules the whole file compiles to, at the same lines.
TEST(RuleChunksTest, BuiltinFilesSplitIntoTheSameRules) {
  for (const EmbeddedRuleFile& f : BuiltinRuleFiles()) {
    SCOPED_TRACE(f.path);
    Result<RuleFile> whole = ParseRuleFile(f.text, f.path);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    Result<SplitFile> split = SplitRuleFile(f.text);
    ASSERT_TRUE(split.ok()) << split.status().message();
    ASSERT_EQ(split->chunks.size(), whole->rules.size());
    for (size_t i = 0; i < 2 * split->chunks.size(); ++i) {
      // Each chunk twice: with the other lines blank, then without them
      // (line_of).
      const RuleChunk& chunk = split->chunks[i / 2];
      std::vector<int> line_of;
      const bool compact = i % 2 == 1;
      const std::string text = ChunkAsFile(f.text, *split, &chunk, false,
                                           compact ? &line_of : nullptr);
      Result<RuleFile> part =
          ParseRuleFile(text, f.path, compact ? &line_of : nullptr);
      ASSERT_TRUE(part.ok()) << part.status().message();
      ASSERT_EQ(part->rules.size(), chunk.rules.size());
      const OpRule& lazy = *part->rules.back();
      const OpRule& eager = *whole->rules[i / 2];
      EXPECT_EQ(lazy.ops, eager.ops);
      EXPECT_EQ(chunk.rules.back().ops, eager.ops);
      EXPECT_EQ(lazy.line, eager.line);
      ASSERT_EQ(lazy.variants.size(), eager.variants.size());
      for (size_t v = 0; v < lazy.variants.size(); ++v) {
        EXPECT_EQ(lazy.variants[v].slot_names, eager.variants[v].slot_names);
        EXPECT_EQ(lazy.variants[v].flops_fwd.text,
                  eager.variants[v].flops_fwd.text);
        EXPECT_EQ(lazy.variants[v].flops_fwd.line,
                  eager.variants[v].flops_fwd.line);
        EXPECT_EQ(lazy.variants[v].flops_fwd.col,
                  eager.variants[v].flops_fwd.col);
        const Variant& a = lazy.variants[v];
        const Variant& e = eager.variants[v];
        ASSERT_EQ(a.lets.size(), e.lets.size());
        for (size_t k = 0; k < a.lets.size(); ++k) {
          EXPECT_EQ(a.lets[k].second.line, e.lets[k].second.line);
          EXPECT_EQ(a.lets[k].second.col, e.lets[k].second.col);
        }
        ASSERT_EQ(a.matches.size(), e.matches.size());
        for (size_t k = 0; k < a.matches.size(); ++k) {
          EXPECT_EQ(a.matches[k].line, e.matches[k].line);
          EXPECT_EQ(a.matches[k].col, e.matches[k].col);
        }
      }
    }
    Result<RuleFile> ignored =
        ParseRuleFile(ChunkAsFile(f.text, *split, nullptr, true), f.path);
    ASSERT_TRUE(ignored.ok()) << ignored.status().message();
    EXPECT_EQ(ignored->ignored, whole->ignored);
    if (!whole->ignored.empty()) {
      EXPECT_TRUE(split->ignored_read);
      EXPECT_EQ(split->ignored, whole->ignored);
    }
  }
}

TEST(RuleChunksTest, BuiltinSetCompilesEveryRule) {
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  Status all = rules->CompileAll();
  EXPECT_TRUE(all.ok()) << all.message();
  for (const std::string& op : rules->OpNames()) {
    Result<const OpRule*> rule = rules->Lookup(op);
    ASSERT_TRUE(rule.ok()) << rule.status().message();
    ASSERT_NE(*rule, nullptr) << op;
    EXPECT_THAT((*rule)->ops, ::testing::Contains(op));
    EXPECT_THAT((*rule)->file, StartsWith("rules/"));
  }
}

// A rule with an error, lazily and eagerly: the same message, with the file,
// the line and column, and the rule.
constexpr const char* kBroken = R"yaml(version: 1
rules:
  - op: t::good
    schema: "good(Tensor self) -> Tensor"
    outputs:
      out: self
  - op: [t::bad, t::bad_]
    schema: "bad(Tensor self) -> Tensor"
    outputs:
      out: self
    flops: 2*nosuch
)yaml";

TEST(RuleChunksTest, BrokenRuleReportedLazilyAndByCompileAll) {
  RuleSet eager;
  Status eager_status = eager.AddText(kBroken, "broken.yaml");
  ASSERT_FALSE(eager_status.ok());
  EXPECT_THAT(eager_status.message(), StartsWith("broken.yaml:11:"));

  RuleSet lazy;
  // Nothing compiled yet.
  ASSERT_TRUE(lazy.AddTextLazy(kBroken, "broken.yaml").ok());
  EXPECT_EQ(lazy.size(), 3u);
  Result<const OpRule*> good = lazy.Lookup("t::good");
  ASSERT_TRUE(good.ok()) << good.status().message();
  ASSERT_NE(*good, nullptr);
  EXPECT_EQ((*good)->line, 3);

  Result<const OpRule*> bad = lazy.Lookup("t::bad_");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), eager_status.message() + " (rule t::bad)");
  EXPECT_THAT(bad.status().message(), HasSubstr("nosuch"));
  EXPECT_EQ(lazy.Find("t::bad"), nullptr);
  // Asked again: the same error, not a second compile's.
  EXPECT_EQ(lazy.Lookup("t::bad").status().message(), bad.status().message());

  RuleSet all;
  ASSERT_TRUE(all.AddTextLazy(kBroken, "broken.yaml").ok());
  Status compiled = all.CompileAll();
  EXPECT_EQ(compiled.message(), bad.status().message());
}

TEST(RuleChunksTest, DuplicateOpInOneFileIsAnErrorAtLoad) {
  const char* text =
      "version: 1\nrules:\n"
      "  - op: t::a\n    schema: \"a(Tensor self) -> Tensor\"\n    outputs:\n  "
      "    out: self\n"
      "  - op: [t::b, t::a]\n    schema: \"a(Tensor self) -> Tensor\"\n    "
      "outputs:\n      out: self\n";
  RuleSet lazy, eager;
  Status l = lazy.AddTextLazy(text, "dup.yaml");
  Status e = eager.AddText(text, "dup.yaml");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.message(), e.message());
  EXPECT_EQ(
      l.message(),
      "dup.yaml:7:1: duplicate rule for 't::a' (first defined at dup.yaml:3)");
}

TEST(RuleChunksTest, LaterFileOverridesOneOpOfALazyRule) {
  RuleSet rules;
  ASSERT_TRUE(rules.AddTextLazy(kFile, "f.yaml").ok());
  ASSERT_TRUE(rules
                  .AddText("version: 1\nrules:\n  - op: t::b2\n    schema: "
                           "\"b2(Tensor self) -> Tensor\"\n"
                           "    outputs:\n      out: self\n",
                           "g.yaml")
                  .ok());
  ASSERT_NE(rules.Find("t::b2"), nullptr);
  EXPECT_EQ(rules.Find("t::b2")->file, "g.yaml");
  ASSERT_NE(rules.Find("t::b3"), nullptr);
  EXPECT_EQ(rules.Find("t::b3")->file, "f.yaml");
  EXPECT_EQ(rules.Find("t::b3"), rules.Find("t::b"));
  EXPECT_TRUE(rules.IsIgnored("t::free"));
}

TEST(RuleChunksTest, ConcurrentLookupsCompileOnce) {
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  const std::vector<std::string> ops = rules->OpNames();
  std::vector<std::vector<const OpRule*>> seen(4);
  std::vector<std::thread> threads;
  for (auto& s : seen) {
    threads.emplace_back([&rules, &ops, &s] {
      for (const std::string& op : ops) s.push_back(rules->Find(op));
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < ops.size(); ++i) {
    ASSERT_NE(seen[0][i], nullptr) << ops[i];
    for (const auto& s : seen) EXPECT_EQ(s[i], seen[0][i]) << ops[i];
  }
}

}  // namespace
}  // namespace torchcost::rules
