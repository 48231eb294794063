// Tests of the command's driver: what Prepare loads.
#include "cli/driver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "rules/op_rule.h"

namespace torchcost::cli {
namespace {

// Parses `args` as the command line after "torchcost".
CommandLine Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "torchcost");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  CommandLine cl;
  std::optional<Outcome> done =
      ParseCommandLine(static_cast<int>(argv.size()), argv.data(), cl);
  EXPECT_FALSE(done.has_value());
  return cl;
}

// NB: the built-in rules are one set per process, so a Python session or a
// compare loop compiles each rule once; --rules DIR gets a set of its own.
TEST(DriverTest, PrepareSharesTheBuiltinRules) {
  Prepared a, b;
  ASSERT_TRUE(Prepare(Parse({"--model", "resnet50"}), a).ok());
  ASSERT_TRUE(Prepare(Parse({"--model", "gpt2"}), b).ok());
  ASSERT_NE(a.rules, nullptr);
  EXPECT_EQ(a.rules.get(), b.rules.get());
  EXPECT_NE(a.rules->Find("aten::_convolution"), nullptr);

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "torchcost_driver_test_rules";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "extra.yaml")
      << "version: 1\nrules:\n  - op: t::extra\n    schema: \"extra(Tensor "
         "self) -> Tensor\"\n"
         "    outputs:\n      out: self\n";
  Prepared c;
  ASSERT_TRUE(
      Prepare(Parse({"--model", "resnet50", "--rules", dir.string()}), c).ok());
  std::filesystem::remove_all(dir);
  EXPECT_NE(c.rules.get(), a.rules.get());
  EXPECT_NE(c.rules->Find("t::extra"), nullptr);
  EXPECT_EQ(a.rules->Find("t::extra"), nullptr);
  EXPECT_EQ(c.rules->Find("aten::_convolution")->file, "rules/conv.yaml");
}

// AnalyzePrepared, what the command and the Python package both run: the
// method from --lora or --peft, and the built model's routed experts (their
// inactive parameters) on the report.
TEST(DriverTest, AnalyzePreparedAppliesTheMethodAndTheBuiltModel) {
  // 2 layers of 8 experts, 2 routed per token: 6 experts' w1, w2, w3 (3 x 32 x
  // 64 each) are inactive per layer.
  const CommandLine cl =
      Parse({"--model", "llama", "--config",
             "layers=2,hidden=32,heads=4,kv_heads=2,intermediate=64,vocab=64,"
             "experts=8,top_k=2",
             "--lora", "r=2", "--set", "B=1", "--set", "S=4"});
  Prepared p;
  ASSERT_TRUE(Prepare(cl, p).ok());
  Result<StepAnalysis> step = AnalyzePrepared(cl, p, p.config);
  ASSERT_TRUE(step.ok()) << step.status().message();
  EXPECT_EQ(step->report.inactive_params, 2 * 6 * 3 * 32 * 64);
  EXPECT_GT(step->report.training.grad_params, 0);  // The adapters.
  EXPECT_LT(step->report.training.grad_params, step->report.params);

  const CommandLine both =
      Parse({"--model", "gpt2", "--lora", "r=2", "--peft", "lora:r=2"});
  Prepared q;
  ASSERT_TRUE(Prepare(both, q).ok());
  EXPECT_EQ(AnalyzePrepared(both, q, q.config).status().message(),
            "--lora and --peft: give one of them");
}

}  // namespace
}  // namespace torchcost::cli
