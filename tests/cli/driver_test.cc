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

}  // namespace
}  // namespace torchcost::cli
