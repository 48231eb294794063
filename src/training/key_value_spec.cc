// The training options' "key=value,..." specs (key_value_spec.h).
#include "training/key_value_spec.h"

#include <cstdlib>

namespace torchcost {

Status ForEachSpecItem(
    std::string_view text,
    const std::function<Status(const std::string& key,
                               const std::string& value)>& apply) {
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
    Status s = apply(item.substr(0, eq), item.substr(eq + 1));
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ParseSpecBool(const std::string& key, const std::string& value,
                     bool* out) {
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

Status ParseSpecPositive(const std::string& key, const std::string& value,
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

}  // namespace torchcost
