// Element types of tensors, as PyTorch names them.
#ifndef TORCHCOST_DTYPE_H_
#define TORCHCOST_DTYPE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "torchcost/status.h"

namespace torchcost {

// A tensor element type; the numbering follows c10::ScalarType where one
// exists.
enum class DType : int8_t {
  kUInt8 = 0,
  kInt8 = 1,
  kInt16 = 2,
  kInt32 = 3,
  kInt64 = 4,
  kFloat16 = 5,
  kFloat32 = 6,
  kFloat64 = 7,
  kComplex32 = 8,
  kComplex64 = 9,
  kComplex128 = 10,
  kBool = 11,
  kBFloat16 = 15,
  kUnknown = -1,
};

// Returns the size in bytes of one element (0 for kUnknown).
int64_t ElementSize(DType dtype);
// Returns PyTorch's name without the "torch." prefix ("float32", "bfloat16",
// ...).
std::string_view DTypeName(DType dtype);
// Parses a dtype name: PyTorch names and aliases (float, half, fp16, bf16,
// long, int, ...).
Result<DType> ParseDType(std::string_view name);
// Returns the dtype of a c10::ScalarType code, as TorchScript passes dtype
// arguments; kUnknown if none.
DType DTypeFromScalarTypeCode(int64_t code);
// Returns true for floating and complex types.
bool IsFloatingPoint(DType dtype);
// Returns the dtype PyTorch's type promotion gives for two tensor operands of
// these types.
DType PromoteTypes(DType a, DType b);

}  // namespace torchcost

#endif  // TORCHCOST_DTYPE_H_
