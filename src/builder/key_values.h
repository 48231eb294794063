// The "key=value,key=value" lists of family configs and their overrides
// (BuildNamedModel's config, a config.json's overrides, an arch space's
// config).
#ifndef TORCHCOST_SRC_BUILDER_KEY_VALUES_H_
#define TORCHCOST_SRC_BUILDER_KEY_VALUES_H_

#include <string>
#include <string_view>
#include <vector>

namespace torchcost::builder {

// One item of a "key=value,..." list.
struct KeyValueItem {
  std::string text;   // The item as given: "heads=4".
  std::string key;    // "heads"; empty if the item has no key=value form.
  std::string value;  // "4": what follows the first '='.
};

// Splits `text` at its commas into items, in order; empty items are skipped.
// NB: an item without '=', or with nothing before it ("=4"), has an empty key:
// the caller reports it, in order with its other checks.
std::vector<KeyValueItem> SplitKeyValues(std::string_view text);

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_KEY_VALUES_H_
