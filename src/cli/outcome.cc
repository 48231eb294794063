#include "cli/outcome.h"

#include <iostream>
#include <string>

namespace torchcost::cli {

std::string OneLine(const std::string& message) {
  constexpr size_t kMaxLength = 400;
  std::string text = message;
  // NB: LibTorch appends a C++ stack trace to its messages; nobody reads it on
  // one line.
  const size_t trace = text.find("Exception raised from");
  if (trace != std::string::npos) text.erase(trace);
  std::string out;
  for (char c : text) {
    const char ch = (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    if (ch == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += ch;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > kMaxLength) out = out.substr(0, kMaxLength - 3) + "...";
  return out.empty() ? "unknown error" : out;
}

void PrintError(const std::string& message) {
  std::cout.flush();
  std::cerr << "torchcost: " << OneLine(message) << std::endl;
}

}  // namespace torchcost::cli
