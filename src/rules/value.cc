#include "rules/value.h"

namespace torchcost::rules {

std::string ShapeToString(const sym::Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].ToString();
  }
  return s + "]";
}

}  // namespace torchcost::rules
