// RValue: what an argument or a name in a rule evaluates to.
#ifndef TORCHCOST_SRC_RULES_VALUE_H_
#define TORCHCOST_SRC_RULES_VALUE_H_

#include <string>
#include <vector>

#include "torchcost/dtype.h"
#include "torchcost/sym.h"

namespace torchcost::rules {

// A tensor's symbolic type.
struct TensorType {
  sym::Shape shape;
  DType dtype = DType::kUnknown;
  // NB: a 0-dim integer tensor made by prim::NumToTensor (or integer arithmetic
  // on such tensors) carries its symbolic value, so traced shape arithmetic
  // (`x.size(0) // 2` becomes tensor ops under torch.jit.trace) stays symbolic.
  bool has_scalar = false;
  sym::Expr scalar;
};

// A value in the rule language: an argument, a bound symbol, a let, or an
// output.
struct RValue {
  enum class Kind {
    kUnknown,
    kNone,
    kInt,
    kFloat,
    kBool,
    kString,
    kIntList,
    kTensor,
    kTensorList,
    kList
  };
  Kind kind = Kind::kUnknown;
  bool b = false;                   // kBool
  bool unknown = false;             // kBool: the truth could not be decided.
  sym::Expr i;                      // kInt
  double f = 0;                     // kFloat
  std::string s;                    // kString
  sym::Shape ints;                  // kIntList
  TensorType t;                     // kTensor
  std::vector<TensorType> tensors;  // kTensorList
  // kList of anything else (floats, bools, mixed)
  std::vector<RValue> items;

  static RValue None() {
    RValue v;
    v.kind = Kind::kNone;
    return v;
  }
  static RValue Int(sym::Expr e) {
    RValue v;
    v.kind = Kind::kInt;
    v.i = e;
    return v;
  }
  static RValue Float(double x) {
    RValue v;
    v.kind = Kind::kFloat;
    v.f = x;
    return v;
  }
  static RValue Bool(bool x) {
    RValue v;
    v.kind = Kind::kBool;
    v.b = x;
    return v;
  }
  static RValue Str(std::string x) {
    RValue v;
    v.kind = Kind::kString;
    v.s = std::move(x);
    return v;
  }
  static RValue IntList(sym::Shape l) {
    RValue v;
    v.kind = Kind::kIntList;
    v.ints = std::move(l);
    return v;
  }
  static RValue Tensor(TensorType t) {
    RValue v;
    v.kind = Kind::kTensor;
    v.t = std::move(t);
    return v;
  }
  static RValue Tensors(std::vector<TensorType> l) {
    RValue v;
    v.kind = Kind::kTensorList;
    v.tensors = std::move(l);
    return v;
  }

  bool is_none() const { return kind == Kind::kNone; }
  bool is_tensor() const { return kind == Kind::kTensor; }
};

// Returns "[B, 3, 224, 224]".
std::string ShapeToString(const sym::Shape& shape);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_VALUE_H_
