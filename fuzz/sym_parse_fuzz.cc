// Fuzzes the sym grammar (sym::Parse): any text parses or is an error; what
// parses prints to text that parses back to the same expression, and
// evaluates (or reports overflow) under bindings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchcost/sym.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sym::Context ctx;
  Result<sym::Expr> e = sym::Parse(ctx, text);
  if (!e.ok()) return 0;
  const std::string printed = e->ToString();
  Result<sym::Expr> again = sym::Parse(ctx, printed);
  // ToString must print what Parse reads back.
  if (!again.ok() || *again != *e) std::abort();
  sym::Bindings b;
  for (const std::string& s : sym::FreeSymbols(*e)) b[s] = 3;
  (void)sym::Evaluate(*e, b);
  (void)sym::Evaluate128(*e, b);
  (void)ctx.Bounds(*e);
  try {
    (void)ctx.ProveLe(*e, sym::Expr(0));
  } catch (const sym::Error&) {
  }
  return 0;
}
