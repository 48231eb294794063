// Tests of ImportTorchScript's choice of reader and plugin loading
// (src/import/torchscript_loader.cc). The plugin is loaded once per process,
// so each case runs in a fresh process (a "threadsafe" death test re-executes
// the test binary).
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "testing/fixtures.h"
#include "torchcost/graph.h"
#include "torchcost/import.h"

namespace torchcost {
namespace {

using ::testing::ExitedWithCode;

const char kTiny[] = TORCHCOST_BINARY_DIR "/fixtures/tiny.pt";
// A scripted module with control flow: the reader without LibTorch declines it.
const char kScriptedIf[] = TORCHCOST_BINARY_DIR "/fixtures/scripted_if.pt";

class TorchScriptLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ASSERT_TRUE(testing::EnsureFixtures("tiny,scripted_if"));
  }
};

// Prints the one-line error of reading `path` and exits 3 (0 if it was read).
[[noreturn]] void ReadAndExit(const std::string& path) {
  Result<ir::Graph> g = ImportTorchScript(path);
  if (g.ok()) std::exit(0);
  std::cerr << "[" << g.status().message() << "]" << std::endl;
  std::exit(3);
}

// Returns true if this process has mapped a LibTorch library.
bool LibTorchMapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("libtorch_cpu") != std::string::npos;
}

#if TORCHCOST_WITH_LIBTORCH

TEST_F(TorchScriptLoaderTest, LoadsLibTorchOnlyWhenATorchScriptFileIsRead) {
  EXPECT_EXIT(
      {
        setenv("TORCHCOST_TORCHSCRIPT_READER", "libtorch", 1);
        if (LibTorchMapped()) std::exit(4);
        // Another frontend: no plugin.
        Result<ir::Graph> g = ImportGraphFile("missing.json");
        if (g.ok() || LibTorchMapped()) std::exit(5);
        if (!ImportTorchScript(kTiny).ok()) std::exit(6);
        std::exit(LibTorchMapped() ? 0 : 7);
      },
      ExitedWithCode(0), "");
}

TEST_F(TorchScriptLoaderTest, ByDefaultATracedModuleIsReadWithoutLibTorch) {
  EXPECT_EXIT(
      {
        unsetenv("TORCHCOST_TORCHSCRIPT_READER");
        Result<ir::Graph> g = ImportTorchScript(kTiny);
        if (!g.ok() || g->nodes.empty()) std::exit(6);
        std::exit(LibTorchMapped() ? 7 : 0);
      },
      ExitedWithCode(0), "");
}

TEST_F(TorchScriptLoaderTest, ByDefaultWhatTheFastReaderDeclinesLibTorchReads) {
  EXPECT_EXIT(
      {
        setenv("TORCHCOST_TORCHSCRIPT_READER", "auto", 1);
        Result<ir::Graph> g = ImportTorchScript(kScriptedIf);
        if (!g.ok() || g->nodes.empty()) std::exit(6);
        std::exit(LibTorchMapped() ? 0 : 7);
      },
      ExitedWithCode(0), "");
}

TEST_F(TorchScriptLoaderTest, TheFastReaderAloneSaysWhatItDeclines) {
  EXPECT_EXIT(
      {
        setenv("TORCHCOST_TORCHSCRIPT_READER", "fast", 1);
        ReadAndExit(kScriptedIf);
      },
      ExitedWithCode(3),
      "\\[.*/scripted_if.pt: cannot read this TorchScript archive without "
      "LibTorch: code/__torch__.py: line [0-9]+: "
      "unsupported statement 'if'\\]");
}

TEST_F(TorchScriptLoaderTest, AnUnknownReaderIsOneLine) {
  EXPECT_EXIT(
      {
        setenv("TORCHCOST_TORCHSCRIPT_READER", "quick", 1);
        ReadAndExit(kTiny);
      },
      ExitedWithCode(3),
      "\\[TORCHCOST_TORCHSCRIPT_READER is 'quick'; expected auto, fast or "
      "libtorch\\]");
}

TEST_F(TorchScriptLoaderTest, EnvironmentVariableNamingNoFileIsOneLine) {
  EXPECT_EXIT(
      {
        setenv("TORCHCOST_TORCHSCRIPT_PLUGIN", "/nonexistent/libx.so", 1);
        // NB: a valid archive: the file is checked before the plugin is looked
        // for.
        ReadAndExit(kScriptedIf);
      },
      ExitedWithCode(3),
      "\\[.*/scripted_if.pt: TORCHCOST_TORCHSCRIPT_PLUGIN: no such file: "
      "/nonexistent/libx.so\\]");
}

TEST_F(TorchScriptLoaderTest, ALibraryThatIsNotThePluginIsRefused) {
  Dl_info libc;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::fopen), &libc), 0);
  const std::string path = libc.dli_fname;
  EXPECT_EXIT(
      {
        setenv("TORCHCOST_TORCHSCRIPT_PLUGIN", path.c_str(), 1);
        setenv("TORCHCOST_TORCHSCRIPT_READER", "libtorch", 1);
        ReadAndExit(kTiny);
      },
      ExitedWithCode(3),
      "\\[.*/tiny.pt: .*libc.* is not torchcost's TorchScript reader \\(no "
      "torchcost_torchscript_read\\)\\]");
}

TEST_F(TorchScriptLoaderTest, ThePluginNamedByTheEnvironmentIsUsed) {
  EXPECT_EXIT(
      {
        setenv("TORCHCOST_TORCHSCRIPT_PLUGIN",
               TORCHCOST_BINARY_DIR "/libtorchcost_torchscript.so", 1);
        setenv("TORCHCOST_TORCHSCRIPT_READER", "libtorch", 1);
        ReadAndExit(kTiny);
      },
      ExitedWithCode(0), "");
}

#else  // !TORCHCOST_WITH_LIBTORCH

TEST_F(TorchScriptLoaderTest, WithoutLibTorchATracedModuleIsRead) {
  Result<ir::Graph> g = ImportTorchScript(kTiny);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_FALSE(g->nodes.empty());
}

TEST_F(TorchScriptLoaderTest,
       WithoutLibTorchWhatTheFastReaderDeclinesIsOneLine) {
  Result<ir::Graph> g = ImportTorchScript(kScriptedIf);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(
      g.status().message(),
      ::testing::MatchesRegex(
          ".*/scripted_if.pt: cannot read TorchScript: torchcost was built "
          "without LibTorch "
          "\\(TORCHCOST_WITH_LIBTORCH=OFF\\); export the model as a JSON graph "
          "instead \\(python3 -m "
          "tools.export\\) \\(read without LibTorch: code/__torch__.py: line "
          "[0-9]+: unsupported statement 'if'\\)"));
}

#endif  // TORCHCOST_WITH_LIBTORCH

}  // namespace
}  // namespace torchcost
