#include "report/json_writer.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace torchcost::report {

using Json = nlohmann::ordered_json;

void Writer::Embed(const Json& j) {
  BeginValue();
  const std::string text =
      j.dump(2, ' ', false, Json::error_handler_t::replace);
  const std::string pad(2 * depth_, ' ');
  for (char c : text) {
    out_ += c;
    // NB: strings in JSON text hold no raw newline.
    if (c == '\n') out_ += pad;
  }
}

void Writer::String(std::string_view s) {
  bool plain = true;
  for (unsigned char c : s)
    plain = plain && c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
  if (!plain) {
    out_ += Json(std::string(s))
                .dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  out_ += '"';
  out_ += s;
  out_ += '"';
}

void WriteMembers(Writer& w, const Json& j) {
  for (const auto& [key, value] : j.items()) {
    w.Key(key);
    w.Embed(value);
  }
}

}  // namespace torchcost::report
