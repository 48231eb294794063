// How the torchcost command ends: an exit code and, on failure, one line for
// stderr.
#ifndef TORCHCOST_SRC_CLI_OUTCOME_H_
#define TORCHCOST_SRC_CLI_OUTCOME_H_

#include <string>

namespace torchcost::cli {

// The exit codes of the command, as DESIGN.md fixes them.
enum ExitCode : int {
  kExitOk = 0,
  kExitStrict = 1,  // Analysis errors in --strict mode (ops without rules).
  kExitUsage = 2,   // Bad usage or unreadable input.
};

// The end of a run: success, or an exit code with its one-line message.
struct Outcome {
  int code = kExitOk;
  std::string message;

  static Outcome Ok() { return {}; }
  static Outcome Usage(std::string m) { return {kExitUsage, std::move(m)}; }
  static Outcome Strict(std::string m) { return {kExitStrict, std::move(m)}; }
  bool ok() const { return code == kExitOk; }
};

// Returns `message` on one line: newlines and tabs become spaces, runs of
// spaces shrink to one, LibTorch's "Exception raised from ..." trace is cut,
// and the text is capped at 400 characters.
std::string OneLine(const std::string& message);

// Writes "torchcost: <message>" as one line to stderr.
void PrintError(const std::string& message);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_OUTCOME_H_
