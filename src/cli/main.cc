// torchcost: predicts a PyTorch model's costs from its TorchScript graph.
//
//   torchcost MODEL.pt [--input SHAPE]... [--dtype float32] [--depth N] [--top
//   K]
//             [--top-depth D] [--json] [--set SYM=VAL]... [--rules DIR]
//             [--strict]
//
// Exit codes: 0 ok; 1 analysis errors in --strict mode; 2 bad usage or
// unreadable input. Every error is one line on stderr: "torchcost: <message>".
#if __has_include(<malloc.h>)
#include <malloc.h>  // mallopt (glibc)
#endif
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/driver.h"
#include "cli/outcome.h"

namespace {

// `torchcost calibrate ARGS...` becomes `python3 -m torchcost.calibrate
// ARGS...` (docs/calibration.md; TORCHCOST_PYTHON names another interpreter):
// the step runs for real in PyTorch. Returns only if Python cannot start.
int Calibrate(int argc, char** argv) {
  const char* env = std::getenv("TORCHCOST_PYTHON");
  std::string python = env && *env ? env : "python3";
  std::string dash_m = "-m", module = "torchcost.calibrate";
  std::vector<char*> args = {python.data(), dash_m.data(), module.data()};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::cout.flush();
  execvp(python.c_str(), args.data());
  torchcost::cli::PrintError(
      "calibrate: cannot run " + python + " (" + std::strerror(errno) +
      "): calibrate runs the step in PyTorch and needs Python 3 with torch "
      "and the torchcost package (pip install .); TORCHCOST_PYTHON names the "
      "interpreter");
  return torchcost::cli::kExitUsage;
}

int Main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "calibrate")
    return Calibrate(argc, argv);
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
#if defined(M_MMAP_THRESHOLD)
  // NB: a fixed mmap threshold (glibc's default, 128 KiB) turns off glibc's
  // dynamic one, which rises to the size of each large block freed (up to
  // 32 MiB); the analysis's growing per-node vectors would then come from the
  // heap, whose freed blocks stay resident. A 1M-node chain: 1.67 GB peak RSS
  // with the dynamic threshold, 1.49 GB without.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
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
