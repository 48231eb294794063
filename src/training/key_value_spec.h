// The "key=value,..." specs of the training options (--lora, --qlora,
// --galore): the items in order and their values, each bad one a one-line
// error naming the key and value.
#ifndef TORCHCOST_SRC_TRAINING_KEY_VALUE_SPEC_H_
#define TORCHCOST_SRC_TRAINING_KEY_VALUE_SPEC_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "torchcost/status.h"

namespace torchcost {

// Calls `apply` on the key and value of each item of `text`, split at commas
// (empty items skipped, the value all after the first '='), in order; returns
// the first error: apply's, or "'ITEM' is not key=value" for an item without
// '='.
Status ForEachSpecItem(
    std::string_view text,
    const std::function<Status(const std::string& key,
                               const std::string& value)>& apply);

// Sets *out from "true" or "1", "false" or "0"; otherwise fails with
// "KEY=VALUE must be true or false".
Status ParseSpecBool(const std::string& key, const std::string& value,
                     bool* out);

// Sets *out from a positive decimal integer; otherwise fails with
// "KEY=VALUE must be a positive integer".
Status ParseSpecPositive(const std::string& key, const std::string& value,
                         int64_t* out);

}  // namespace torchcost

#endif  // TORCHCOST_SRC_TRAINING_KEY_VALUE_SPEC_H_
