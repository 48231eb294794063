// Splitting "key=value,..." lists (key_values.h).
#include "builder/key_values.h"

#include <utility>

namespace torchcost::builder {

std::vector<KeyValueItem> SplitKeyValues(std::string_view text) {
  std::vector<KeyValueItem> items;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    KeyValueItem item;
    item.text = std::string(text.substr(start, comma - start));
    start = comma + 1;
    if (item.text.empty()) continue;
    const size_t eq = item.text.find('=');
    if (eq != std::string::npos && eq != 0) {
      item.key = item.text.substr(0, eq);
      item.value = item.text.substr(eq + 1);
    }
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace torchcost::builder
