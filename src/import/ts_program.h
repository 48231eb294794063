// The program the TorchScript reader without LibTorch compiles an archive's
// forward into before converting it to the IR: values, nodes with the inlined
// calls they were made in, and the value forward returns.
#ifndef TORCHCOST_SRC_IMPORT_TS_PROGRAM_H_
#define TORCHCOST_SRC_IMPORT_TS_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "import/ts_pickle.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost::import::ts {

// Returns the status by which the compiler declines an archive (LibTorch's
// reader then reads it).
inline Status Decline(const std::string& why) {
  return Status::Unimplemented(why);
}

// One value of the compiled program.
struct Val {
  enum class Src { kNode, kInput, kConst, kModule, kTensorAttr, kPending };
  Src src = Src::kNode;
  // TorchScript type text; a module's qualified class for kModule.
  std::string type;
  std::string name;   // Debug name base; "" if unnamed.
  int producer = -1;  // Node index for kNode.
  // kConst:
  bool has_constant = false;
  ir::Constant constant;
  bool is_tensor_constant = false;
  std::vector<int64_t> tensor_shape;
  int tensor_scalar_type = -1;
  // kModule and kTensorAttr:
  const PickleValue* object = nullptr;
  std::string path;
  // The attribute a module was read from (its instance name in a call stack).
  std::string attr_name;
  int input_position = -1;  // kInput.
  // The outputs of an op with several returns, until unpacked.
  std::vector<int> parts;
  // kConst: the top-level call it was made in (-1: the forward itself), for
  // pooling.
  int group = -1;
  std::string storage;  // kConst tensors: storage key and offset.
};

// One node of the compiled program.
struct Nd {
  std::string op, overload;
  std::vector<int> inputs;
  std::vector<std::string> input_names;
  std::vector<int> outputs;
  std::vector<int> calls;  // Inlined call ids, outermost first.
  bool dead = false;
};

// The compiled program: values and nodes by index, and forward's result.
struct Program {
  std::vector<Val> vals;
  std::vector<Nd> nodes;
  int output = -1;
};

}  // namespace torchcost::import::ts

#endif  // TORCHCOST_SRC_IMPORT_TS_PROGRAM_H_
