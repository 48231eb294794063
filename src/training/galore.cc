#include "torchcost/galore.h"

#include <cstdlib>
#include <regex>
#include <string>

#include "passes/user_regex.h"

namespace torchcost {
namespace {

Status ParsePositive(const std::string& key, const std::string& value,
                     int64_t* out) {
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || v <= 0) {
    return Status::InvalidArgument(key + "=" + value +
                                   " must be a positive integer");
  }
  *out = v;
  return Status::Ok();
}

Status ParseBool(const std::string& key, const std::string& value, bool* out) {
  if (value == "true" || value == "1") {
    *out = true;
  } else if (value == "false" || value == "0") {
    *out = false;
  } else {
    return Status::InvalidArgument(key + "=" + value +
                                   " must be true or false");
  }
  return Status::Ok();
}

Status ApplyKey(const std::string& key, const std::string& value,
                GaloreConfig* c) {
  if (key == "r" || key == "rank") return ParsePositive(key, value, &c->rank);
  if (key == "gap" || key == "update_proj_gap")
    return ParsePositive(key, value, &c->update_proj_gap);
  if (key == "scale") {
    char* end = nullptr;
    const double d = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(d > 0)) {
      return Status::InvalidArgument("scale=" + value +
                                     " must be a positive number");
    }
    c->scale = d;
    return Status::Ok();
  }
  if (key == "targets") {
    try {
      std::regex re = passes::UserRegex(value);
    } catch (const std::regex_error&) {
      return Status::InvalidArgument("targets '" + value +
                                     "': not a valid regular expression");
    }
    if (value.empty())
      return Status::InvalidArgument("targets= must not be empty");
    c->targets = value;
    return Status::Ok();
  }
  if (key == "per_layer") return ParseBool(key, value, &c->per_layer);
  if (key == "svd") return ParseBool(key, value, &c->svd_step);
  return Status::InvalidArgument("unknown key '" + key +
                                 "' (r, gap, scale, targets, per_layer, svd)");
}

}  // namespace

Result<GaloreConfig> ParseGaloreConfig(std::string_view text) {
  GaloreConfig c;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item(text.substr(start, comma == std::string_view::npos
                                                  ? std::string_view::npos
                                                  : comma - start));
    start = comma == std::string_view::npos ? text.size() : comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      return Status::InvalidArgument("'" + item + "' is not key=value");
    Status s = ApplyKey(item.substr(0, eq), item.substr(eq + 1), &c);
    if (!s.ok()) return s;
  }
  return c;
}

}  // namespace torchcost
