// TorchScript type and class names as the archive's source spells them
// ("Optional[List[int]]", "__torch__.x.___torch_mangle_3.Block"), read for the
// TorchScript reader without LibTorch.
#ifndef TORCHCOST_SRC_IMPORT_TS_TYPES_H_
#define TORCHCOST_SRC_IMPORT_TS_TYPES_H_

#include <string>

#include "torchcost/graph.h"

namespace torchcost::import::ts {

// Returns the class name without its qualification
// ("...resnet.___torch_mangle_12.BasicBlock" -> "BasicBlock").
std::string ShortClassName(const std::string& qualified);

// Sets *inner to X and returns true if `type` is `prefix[X]` ("Optional[X]",
// "List[X]").
bool InnerType(const std::string& type, const char* prefix, std::string* inner);

// Returns the IR kind of `type`; an Optional has its element's kind.
ir::ValueKind KindOf(const std::string& type);

// Sets v's kind and, for a list, its element kind, as the LibTorch reader's
// SetTypeInfo does for types without tensor details.
void SetTypeInfo(const std::string& type, ir::Value* v);

// True if a value of type `actual` may be passed where `param` is expected
// (TorchScript's isSubtypeOf for the types traced code uses).
bool SubtypeOf(const std::string& actual, const std::string& param);

// Returns the element size in bytes of the scalar types whose 0-dim constants
// are read (uint8, int8, bool, int16, int32, float32, int64, float64), else 0.
int ConstantElementSize(int scalar_type);

// Returns the bytes per element of every c10::ScalarType a storage class names
// (ts_pickle.h), 0 if unknown.
int StorageElementSize(int scalar_type);

}  // namespace torchcost::import::ts

#endif  // TORCHCOST_SRC_IMPORT_TS_TYPES_H_
