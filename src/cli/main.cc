// torchcost: predicts a PyTorch model's costs from its TorchScript graph.
//
//   torchcost MODEL.pt [--input SHAPE]... [--dtype float32] [--depth N] [--top
//   K]
//             [--top-depth D] [--json] [--set SYM=VAL]... [--rules DIR]
//             [--strict]
//
// Exit codes: 0 ok; 1 analysis errors in --strict mode; 2 bad usage or
// unreadable input. Every error is one line on stderr: "torchcost: <message>".
#include <exception>
#include <iostream>
#include <string>

#include "cli/command_line.h"
#include "cli/driver.h"
#include "cli/outcome.h"

namespace {

int Main(int argc, char** argv) {
  using torchcost::cli::CommandLine;
  using torchcost::cli::Outcome;
  CommandLine cl;
  if (std::optional<Outcome> done =
          torchcost::cli::ParseCommandLine(argc, argv, cl)) {
    if (!done->ok()) torchcost::cli::PrintError(done->message);
    return done->code;
  }
  std::string out;
  Outcome outcome = torchcost::cli::Run(cl, out);
  if (!outcome.ok()) {
    torchcost::cli::PrintError(outcome.message);
    return outcome.code;
  }
  std::cout << out;
  std::cout.flush();
  return std::cout ? torchcost::cli::kExitOk : torchcost::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // NB: no input may crash the tool; whatever escapes is still one line and
  // exit 2.
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    torchcost::cli::PrintError(std::string("internal error: ") + e.what());
  } catch (...) {
    torchcost::cli::PrintError("internal error: unknown exception");
  }
  return torchcost::cli::kExitUsage;
}
