// Checks of family configs: the first failed check becomes a one-line error
// naming the family, the key and the value.
#ifndef TORCHCOST_SRC_BUILDER_VALIDATE_H_
#define TORCHCOST_SRC_BUILDER_VALIDATE_H_

#include <cstdint>
#include <string>

#include "torchcost/dtype.h"
#include "torchcost/status.h"

namespace torchcost::builder {

// NB: documented limits (README, "Limits"): a family's integer settings are
// below 2^31 (no real dim comes near), and a model has at most 100,000
// layers (a graph of a few million nodes), so absurd configs end in a
// one-line error instead of an endless build.
inline constexpr int64_t kMaxConfigInt = int64_t{1} << 31;
inline constexpr int64_t kMaxLayers = 100000;

// Returns why `value`, given for an integer key, is not one: "'H' is not an
// integer", and for a name (a symbol) that the model's sizes are concrete.
// NB: parameter shapes are built as integers; only the inputs' dims (B, S, T)
// are symbols.
std::string NotAnInteger(const std::string& value);

// Collects the first failed check of a config.
class Validator {
 public:
  // Starts the checks of `family`'s config.
  explicit Validator(std::string family) : family_(std::move(family)) {}
  // Requires 0 < value <= kMaxConfigInt.
  void Positive(const char* key, int64_t value);
  // Requires a layer count: 0 < value <= kMaxLayers.
  void Layers(const char* key, int64_t value);
  // Requires value <= max.
  void AtMost(const char* key, int64_t value, int64_t max);
  // Requires value > 0 (a float).
  void PositiveFloat(const char* key, double value);
  // Requires 0 <= value < 1.
  void Probability(const char* key, double value);
  // Requires `divisor` to divide `value` exactly.
  void Divides(const char* divisor_key, int64_t divisor, const char* key,
               int64_t value);
  // Requires a compute dtype: float32, bfloat16 or float16.
  void ComputeDType(const char* key, DType value);
  // Requires `cond`; otherwise fails with `message`.
  void Require(bool cond, const std::string& message);
  // Returns true if every check passed.
  bool ok() const { return message_.empty(); }
  // Returns the first failure as an InvalidArgument status.
  Status status() const;

 private:
  std::string family_;
  std::string message_;
};

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_VALIDATE_H_
