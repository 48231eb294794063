// Picks the frontend a model file's extension names.
#include <string>

#include "torchcost/import.h"

namespace torchcost {

Result<ir::Graph> ImportGraphFile(const std::string& path) {
  const std::string json = ".json";
  const bool is_json =
      path.size() >= json.size() &&
      path.compare(path.size() - json.size(), json.size(), json) == 0;
  return is_json ? ImportGraphJson(path) : ImportTorchScript(path);
}

}  // namespace torchcost
