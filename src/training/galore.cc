#include "torchcost/galore.h"

#include <cstdlib>
#include <regex>
#include <string>

#include "passes/user_regex.h"
#include "training/key_value_spec.h"

namespace torchcost {
namespace {

Status ApplyKey(const std::string& key, const std::string& value,
                GaloreConfig* c) {
  if (key == "r" || key == "rank")
    return ParseSpecPositive(key, value, &c->rank);
  if (key == "gap" || key == "update_proj_gap")
    return ParseSpecPositive(key, value, &c->update_proj_gap);
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
  if (key == "per_layer") return ParseSpecBool(key, value, &c->per_layer);
  if (key == "svd") return ParseSpecBool(key, value, &c->svd_step);
  return Status::InvalidArgument("unknown key '" + key +
                                 "' (r, gap, scale, targets, per_layer, svd)");
}

}  // namespace

Result<GaloreConfig> ParseGaloreConfig(std::string_view text) {
  GaloreConfig c;
  Status s = ForEachSpecItem(
      text, [&c](const std::string& key, const std::string& value) {
        return ApplyKey(key, value, &c);
      });
  if (!s.ok()) return s;
  return c;
}

}  // namespace torchcost
