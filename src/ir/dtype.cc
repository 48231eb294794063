// Element types: sizes, names, parsing and PyTorch's type promotion.
#include "torchcost/dtype.h"

#include <array>
#include <string>

namespace torchcost {
namespace {

// One accepted spelling of a dtype; the first spelling of each dtype is
// PyTorch's name.
struct DTypeAlias {
  std::string_view name;
  DType dtype;
};

constexpr std::array<DTypeAlias, 25> kAliases = {{
    {"float32", DType::kFloat32},    {"float", DType::kFloat32},
    {"fp32", DType::kFloat32},       {"float16", DType::kFloat16},
    {"half", DType::kFloat16},       {"fp16", DType::kFloat16},
    {"bfloat16", DType::kBFloat16},  {"bf16", DType::kBFloat16},
    {"float64", DType::kFloat64},    {"double", DType::kFloat64},
    {"int64", DType::kInt64},        {"long", DType::kInt64},
    {"int32", DType::kInt32},        {"int", DType::kInt32},
    {"int16", DType::kInt16},        {"short", DType::kInt16},
    {"int8", DType::kInt8},          {"uint8", DType::kUInt8},
    {"bool", DType::kBool},          {"complex32", DType::kComplex32},
    {"chalf", DType::kComplex32},    {"complex64", DType::kComplex64},
    {"cfloat", DType::kComplex64},   {"complex128", DType::kComplex128},
    {"cdouble", DType::kComplex128},
}};

// Position of a dtype in the promotion table; -1 for kUnknown.
int PromotionIndex(DType d) {
  switch (d) {
    case DType::kUInt8:
      return 0;
    case DType::kInt8:
      return 1;
    case DType::kInt16:
      return 2;
    case DType::kInt32:
      return 3;
    case DType::kInt64:
      return 4;
    case DType::kFloat16:
      return 5;
    case DType::kFloat32:
      return 6;
    case DType::kFloat64:
      return 7;
    case DType::kComplex32:
      return 8;
    case DType::kComplex64:
      return 9;
    case DType::kComplex128:
      return 10;
    case DType::kBool:
      return 11;
    case DType::kBFloat16:
      return 12;
    case DType::kUnknown:
      return -1;
  }
  return -1;
}

}  // namespace

int64_t ElementSize(DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kBool:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
    case DType::kComplex32:  // Two float16 halves.
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
    case DType::kComplex64:  // Two float32 halves.
      return 8;
    case DType::kComplex128:  // Two float64 halves.
      return 16;
    case DType::kUnknown:
      return 0;
  }
  return 0;
}

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
      return "uint8";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kFloat16:
      return "float16";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kComplex32:
      return "complex32";
    case DType::kComplex64:
      return "complex64";
    case DType::kComplex128:
      return "complex128";
    case DType::kBool:
      return "bool";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Result<DType> ParseDType(std::string_view name) {
  std::string_view bare = name;
  // NB: "torch.float32", as Python prints a dtype, is accepted too.
  constexpr std::string_view kTorchPrefix = "torch.";
  if (bare.substr(0, kTorchPrefix.size()) == kTorchPrefix) {
    bare.remove_prefix(kTorchPrefix.size());
  }
  for (const DTypeAlias& alias : kAliases) {
    if (alias.name == bare) return alias.dtype;
  }
  std::string accepted;
  for (const DTypeAlias& alias : kAliases) {
    if (!accepted.empty()) accepted += ", ";
    accepted += alias.name;
  }
  return Status::InvalidArgument("unknown dtype '" + std::string(name) +
                                 "'; accepted: " + accepted);
}

DType DTypeFromScalarTypeCode(int64_t code) {
  // c10::ScalarType codes 0..11 and 15 match DType; 12..14 are quantized types.
  if ((code >= 0 && code <= 11) || code == 15) return static_cast<DType>(code);
  return DType::kUnknown;
}

bool IsFloatingPoint(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kBFloat16:
    case DType::kComplex32:
    case DType::kComplex64:
    case DType::kComplex128:
      return true;
    default:
      return false;
  }
}

DType PromoteTypes(DType a, DType b) {
  // c10::promoteTypes' table (c10/core/ScalarType.cpp), quantized types left
  // out.
  constexpr DType u1 = DType::kUInt8, i1 = DType::kInt8, i2 = DType::kInt16,
                  i4 = DType::kInt32, i8 = DType::kInt64, f2 = DType::kFloat16,
                  f4 = DType::kFloat32, f8 = DType::kFloat64,
                  c2 = DType::kComplex32, c4 = DType::kComplex64,
                  c8 = DType::kComplex128, b1 = DType::kBool,
                  bf = DType::kBFloat16;
  static constexpr DType kTable[13][13] = {
      /*        u1  i1  i2  i4  i8  f2  f4  f8  c2  c4  c8  b1  bf */
      /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, c2, c4, c8, u1, bf},
      /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, c2, c4, c8, i1, bf},
      /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, c2, c4, c8, i2, bf},
      /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, c2, c4, c8, i4, bf},
      /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, c2, c4, c8, i8, bf},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, c2, c4, c8, f2, f4},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, c4, c4, c8, f4, f4},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, c8, c8, c8, f8, f8},
      /* c2 */ {c2, c2, c2, c2, c2, c2, c4, c8, c2, c4, c8, c2, c4},
      /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c8, c4, c4, c8, c4, c4},
      /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
      /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, c2, c4, c8, b1, bf},
      /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, c4, c4, c8, bf, bf},
  };
  const int ia = PromotionIndex(a);
  const int ib = PromotionIndex(b);
  if (ia < 0 || ib < 0) return DType::kUnknown;
  return kTable[ia][ib];
}

}  // namespace torchcost
