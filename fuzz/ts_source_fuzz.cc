// Fuzzes the parser of TorchScript source (import/ts_source.h): any text
// parses into classes or gets a one-line error naming the line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "import/ts_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto classes =
      torchcost::import::ts::ParseSource(text, "__torch__.fuzz");
  if (!classes.ok() && classes.status().message().empty()) std::abort();
  const auto expr = torchcost::import::ts::ParseExpr(text);
  if (!expr.ok() && expr.status().message().empty()) std::abort();
  return 0;
}
