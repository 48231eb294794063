// An unpickler for the pickles of a TorchScript archive (data.pkl,
// constants.pkl): protocol 2 with the opcodes torch's pickler writes, module
// objects as class name and attributes, and tensors as their storage key,
// dtype, sizes and strides (never their data).
#ifndef TORCHCOST_SRC_IMPORT_TS_PICKLE_H_
#define TORCHCOST_SRC_IMPORT_TS_PICKLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchcost/status.h"

namespace torchcost::import {

// A tensor as torch._utils._rebuild_tensor_v2 would rebuild it, without data.
struct PickledTensor {
  // The entry under data/ (or constants/) that holds its storage.
  std::string storage_key;
  // c10::ScalarType code of the storage ("FloatStorage" -> 6).
  int scalar_type = -1;
  std::string device;         // "cpu".
  int64_t storage_numel = 0;  // Elements of the whole storage.
  int64_t offset = 0;         // Storage offset, in elements.
  std::vector<int64_t> sizes, strides;
  bool requires_grad = false;
};

// One unpickled value.
struct PickleValue {
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kTuple,
    kList,
    kDict,
    kGlobal,
    kObject,
    kTensor,
    kStorage
  };
  Kind kind = Kind::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  // kString; kGlobal and kObject: the qualified class name ("__torch__.Net",
  // "torch.FloatStorage").
  std::string s;
  // kTuple, kList; kDict: key, value, key, value, ...
  std::vector<std::shared_ptr<PickleValue>> items;
  // kObject, in pickled order.
  std::vector<std::pair<std::string, std::shared_ptr<PickleValue>>> attrs;
  // kTensor; kStorage uses storage_key, scalar_type, device, storage_numel.
  PickledTensor tensor;

  // Returns the attribute `name` of an object, or null.
  const PickleValue* Attr(const std::string& name) const;
};

using PickleRef = std::shared_ptr<PickleValue>;

// Returns the c10::ScalarType code of a storage class ("FloatStorage" -> 6), or
// -1.
int ScalarTypeOfStorage(std::string_view storage_class);

// Unpickles `bytes`. Unsupported opcodes or callables are errors that say
// which.
Result<PickleRef> Unpickle(std::string_view bytes);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_TS_PICKLE_H_
