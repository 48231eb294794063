// Checks of family configs: the first failed check becomes a one-line error
// naming the family, the key and the value.
#ifndef TORCHCOST_SRC_BUILD_VALIDATE_H_
#define TORCHCOST_SRC_BUILD_VALIDATE_H_

#include <cstdint>
#include <string>

#include "torchcost/status.h"

namespace torchcost::build {

// Collects the first failed check of a config.
class Validator {
 public:
  // Starts the checks of `family`'s config.
  explicit Validator(std::string family) : family_(std::move(family)) {}
  // Requires value > 0.
  void Positive(const char* key, int64_t value);
  // Requires value > 0 (a float).
  void PositiveFloat(const char* key, double value);
  // Requires 0 <= value < 1.
  void Probability(const char* key, double value);
  // Requires `divisor` to divide `value` exactly.
  void Divides(const char* divisor_key, int64_t divisor, const char* key, int64_t value);
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

}  // namespace torchcost::build

#endif  // TORCHCOST_SRC_BUILD_VALIDATE_H_
