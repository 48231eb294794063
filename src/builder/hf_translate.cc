// The shared pieces of the config.json translations (hf_translate.h).
#include "builder/hf_translate.h"

#include <charconv>
#include <string>

namespace torchcost::builder {

using Json = nlohmann::json;

std::string Int(int64_t v) { return std::to_string(v); }
std::string Bool(bool v) { return v ? "true" : "false"; }
std::string Num(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

void NoteDropout(HfKeys& k, const std::string& key, const std::string& family,
                 FamilyConfig& out) {
  double p = 0;
  k.OptDouble(key, &p);
  if (p != 0)
    out.notes.push_back(key + "=" + Num(p) + " is not modelled (the " + family +
                        " family applies no such dropout)");
}

double RopeTheta(HfKeys& k, FamilyConfig& out) {
  double theta = 10000.0;
  k.OptDouble("rope_theta", &theta);
  const Json params = k.Raw("rope_parameters");
  if (params.is_object() && params.contains("rope_theta") &&
      params["rope_theta"].is_number())
    theta = params["rope_theta"].get<double>();
  const Json scaling = k.Raw("rope_scaling");
  if (!scaling.is_null()) {
    out.notes.push_back(
        "rope_scaling " + scaling.dump() +
        ": changes the RoPE tables' values, not their shapes or cost");
  }
  return theta;
}

std::string Activation(HfKeys& k, const std::string& key,
                       const std::string& name) {
  if (name == "silu" || name == "swish") return "silu";
  if (name == "gelu") return "gelu";
  if (name == "gelu_pytorch_tanh") return "gelu_tanh";
  k.Fail(key,
         "'" + name + "' is not supported (silu, gelu, gelu_pytorch_tanh)");
  return "silu";
}

}  // namespace torchcost::builder
