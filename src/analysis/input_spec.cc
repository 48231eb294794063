#include <cctype>
#include <string>

#include "torchcost/analysis.h"

namespace torchcost {

Result<InputSpec> ParseInputSpec(sym::Context& ctx, std::string_view text,
                                 DType default_dtype) {
  InputSpec spec;
  spec.dtype = default_dtype;
  std::string_view dims = text;
  size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    dims = text.substr(0, colon);
    auto d = ParseDType(text.substr(colon + 1));
    if (!d.ok())
      return Status::InvalidArgument("input '" + std::string(text) +
                                     "': " + d.status().message());
    spec.dtype = *d;
  }
  if (dims.empty())
    return Status::InvalidArgument("input '" + std::string(text) +
                                   "': no dims given");
  size_t start = 0;
  while (start <= dims.size()) {
    // A comma inside parentheses belongs to an expression dim ("min(S, 4096)").
    size_t comma = start;
    for (int depth = 0;
         comma < dims.size() && (dims[comma] != ',' || depth > 0); ++comma) {
      depth += dims[comma] == '(' ? 1 : dims[comma] == ')' ? -1 : 0;
    }
    if (comma == dims.size()) comma = std::string_view::npos;
    std::string_view item = dims.substr(start, comma == std::string_view::npos
                                                   ? std::string_view::npos
                                                   : comma - start);
    while (!item.empty() &&
           std::isspace(static_cast<unsigned char>(item.front())))
      item.remove_prefix(1);
    while (!item.empty() &&
           std::isspace(static_cast<unsigned char>(item.back())))
      item.remove_suffix(1);
    if (item.empty())
      return Status::InvalidArgument("input '" + std::string(text) +
                                     "': empty dim");
    bool digits = true;
    for (char c : item)
      digits = digits && std::isdigit(static_cast<unsigned char>(c));
    bool ident =
        std::isalpha(static_cast<unsigned char>(item[0])) || item[0] == '_';
    for (char c : item)
      ident =
          ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (digits) {
      errno = 0;
      long long v = std::strtoll(std::string(item).c_str(), nullptr, 10);
      if (errno == ERANGE || v <= 0)
        return Status::InvalidArgument("input '" + std::string(text) +
                                       "': dim '" + std::string(item) +
                                       "' must be a positive integer");
      spec.shape.push_back(sym::Expr(static_cast<int64_t>(v)));
    } else if (ident) {
      spec.shape.push_back(ctx.Symbol(item));
    } else if (Result<sym::Expr> e = sym::Parse(ctx, item);
               e.ok() && ctx.Bounds(*e).lo >= 0) {
      // An expression of symbols ("S+T-2"): a generation step's cache length.
      spec.shape.push_back(*e);
    } else {
      return Status::InvalidArgument(
          "input '" + std::string(text) + "': dim '" + std::string(item) +
          "' is neither a positive integer, a symbol name nor a non-negative "
          "expression");
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return spec;
}

}  // namespace torchcost
