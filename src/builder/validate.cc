#include "builder/validate.h"

#include <cctype>
#include <sstream>

namespace torchcost::builder {

std::string NotAnInteger(const std::string& value) {
  const bool name =
      !value.empty() &&
      (std::isalpha(static_cast<unsigned char>(value[0])) || value[0] == '_');
  return "'" + value + "' is not an integer" +
         (name ? std::string(" (symbols are not supported here: the model's "
                             "sizes are concrete; the inputs' "
                             "B, S and T are the symbols; an architecture "
                             "symbol needs its sample range in "
                             "StepConfig.arch_symbols)")
               : "");
}

void Validator::Require(bool cond, const std::string& message) {
  if (!cond && message_.empty()) message_ = message;
}

void Validator::Positive(const char* key, int64_t value) {
  Require(value > 0, std::string(key) + "=" + std::to_string(value) +
                         " must be a positive integer");
  AtMost(key, value, kMaxConfigInt);
}

void Validator::Layers(const char* key, int64_t value) {
  Positive(key, value);
  AtMost(key, value, kMaxLayers);
}

void Validator::AtMost(const char* key, int64_t value, int64_t max) {
  Require(value <= max, std::string(key) + "=" + std::to_string(value) +
                            " is above the limit " + std::to_string(max));
}

void Validator::PositiveFloat(const char* key, double value) {
  std::ostringstream s;
  s << key << "=" << value << " must be positive";
  Require(value > 0, s.str());
}

void Validator::Probability(const char* key, double value) {
  std::ostringstream s;
  s << key << "=" << value << " must lie in [0, 1)";
  Require(value >= 0 && value < 1, s.str());
}

void Validator::Divides(const char* divisor_key, int64_t divisor,
                        const char* key, int64_t value) {
  if (divisor <= 0) return;  // Reported by Positive.
  Require(value % divisor == 0, std::string(key) + "=" + std::to_string(value) +
                                    " is not divisible by " + divisor_key +
                                    "=" + std::to_string(divisor));
}

void Validator::ComputeDType(const char* key, DType value) {
  Require(value == DType::kFloat32 || value == DType::kBFloat16 ||
              value == DType::kFloat16,
          std::string(key) + "=" + std::string(DTypeName(value)) +
              " must be fp32, bf16 or fp16");
}

Status Validator::status() const {
  return ok() ? Status::Ok()
              : Status::InvalidArgument(family_ + " config: " + message_);
}

}  // namespace torchcost::builder
