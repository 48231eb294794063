#include "import/ts_types.h"

#include <cstring>

namespace torchcost::import::ts {

std::string ShortClassName(const std::string& qualified) {
  const size_t dot = qualified.rfind('.');
  return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

bool InnerType(const std::string& type, const char* prefix,
               std::string* inner) {
  const size_t n = std::strlen(prefix);
  if (type.size() < n + 2 || type.compare(0, n, prefix) != 0 ||
      type[n] != '[' || type.back() != ']')
    return false;
  *inner = type.substr(n + 1, type.size() - n - 2);
  return true;
}

ir::ValueKind KindOf(const std::string& type) {
  std::string inner;
  if (InnerType(type, "Optional", &inner)) return KindOf(inner);
  if (type == "Tensor") return ir::ValueKind::kTensor;
  if (type == "int") return ir::ValueKind::kInt;
  if (type == "float") return ir::ValueKind::kFloat;
  if (type == "bool") return ir::ValueKind::kBool;
  if (type == "str") return ir::ValueKind::kString;
  if (type == "NoneType") return ir::ValueKind::kNone;
  if (type == "Device") return ir::ValueKind::kDevice;
  if (InnerType(type, "List", &inner)) return ir::ValueKind::kList;
  return ir::ValueKind::kOther;
}

void SetTypeInfo(const std::string& type, ir::Value* v) {
  v->kind = KindOf(type);
  std::string t = type, inner;
  if (InnerType(t, "Optional", &inner)) t = inner;
  if (InnerType(t, "List", &inner)) v->elem_kind = KindOf(inner);
}

bool SubtypeOf(const std::string& actual, const std::string& param) {
  if (actual == param || param == "Any") return true;
  std::string inner;
  if (InnerType(param, "Optional", &inner))
    return actual == "NoneType" || SubtypeOf(actual, inner);
  if (param == "number")
    return actual == "int" || actual == "float" || actual == "complex";
  return false;
}

int ConstantElementSize(int scalar_type) {
  switch (scalar_type) {
    case 0:
    case 1:
    case 11:
      return 1;  // uint8, int8, bool
    case 2:
      return 2;  // int16
    case 3:
    case 6:
      return 4;  // int32, float32
    case 4:
    case 7:
      return 8;  // int64, float64
    default:
      return 0;
  }
}

int StorageElementSize(int scalar_type) {
  // Byte .. BFloat16.
  static const int kSizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 4, 8, 16, 1, 1, 1, 4, 2};
  return scalar_type >= 0 && scalar_type < 16 ? kSizes[scalar_type] : 0;
}

}  // namespace torchcost::import::ts
