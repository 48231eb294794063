// The torchcost command's flow: import, rules, analysis, report.
#ifndef TORCHCOST_SRC_CLI_DRIVER_H_
#define TORCHCOST_SRC_CLI_DRIVER_H_

#include <string>

#include "cli/command_line.h"
#include "cli/outcome.h"

namespace torchcost::cli {

// Runs one analysis as `cl` asks; on success `out` holds the report to print.
Outcome Run(const CommandLine& cl, std::string& out);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_DRIVER_H_
