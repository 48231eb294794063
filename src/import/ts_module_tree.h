// The module tree of a TorchScript archive, read without LibTorch: data.pkl's
// module objects with their classes (parsed from the archive's code/ on first
// use), the module scopes in named_modules() order and the tables of
// parameters and buffers, as the LibTorch reader (torchscript.cc) makes them.
#ifndef TORCHCOST_SRC_IMPORT_TS_MODULE_TREE_H_
#define TORCHCOST_SRC_IMPORT_TS_MODULE_TREE_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/ts_pickle.h"
#include "import/ts_source.h"
#include "import/zip_archive.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost::import::ts {

// A module object of data.pkl and its class.
struct Module {
  const PickleValue* object = nullptr;
  const ClassDef* cls = nullptr;
};

// Where a parameter or buffer is: in params (true) or buffers (false), at this
// index.
using TensorSlot = std::pair<bool, int>;

// Reads the module tree of one archive. Declines (Status kUnimplemented) what
// the LibTorch reader must read instead.
class ModuleTree {
 public:
  explicit ModuleTree(const ZipArchive& archive) : archive_(archive) {}
  ModuleTree(const ModuleTree&) = delete;
  ModuleTree& operator=(const ModuleTree&) = delete;

  // Returns the module `object` is: an object of a Module class the archive's
  // source defines, without constants.
  Result<Module> ModuleOf(const PickleValue& object);

  // Reads the tree under `top`: adds its modules to the graph's scopes,
  // pre-order with attributes in class order (each path's scope in
  // *scope_index), then its parameters and then its buffers to the graph's
  // tables in slot order, deduplicated by storage as the LibTorch reader does
  // (a repeat becomes an alias; each name's slot in *slots).
  Status Build(const Module& top, ir::Graph* graph,
               std::unordered_map<std::string, int>* scope_index,
               std::unordered_map<std::string, TensorSlot>* slots);

  // Returns the module at `path` ("" for the top), or null if Build did not
  // read one there.
  const Module* Find(const std::string& path) const;

  // Returns the attribute `name` of a module's object, declining if it has
  // none.
  Result<const PickleValue*> Attribute(const Module& m,
                                       const std::string& name) const;

  // Declines a tensor whose storage is not in the archive under `dir`
  // ("data/", "constants/") or is shorter than its tensors need.
  // NB: LibTorch reads every storage; one missing or short fails there, so it
  // is declined here (LibTorch's reader then says what is wrong), though its
  // bytes are not read.
  Status CheckStorage(const PickledTensor& t, const std::string& dir) const;

 private:
  Result<const ClassDef*> ClassNamed(const std::string& qualified);
  Status WalkModules(const std::string& path, const Module& m,
                     std::vector<std::pair<std::string, Module>>* out);
  Status WalkTensors(
      const std::string& path, const Module& m, bool params,
      std::vector<std::pair<std::string, const PickleValue*>>* out);

  const ZipArchive& archive_;
  std::unordered_map<std::string, const ClassDef*> classes_;
  std::vector<std::unique_ptr<ClassDef>> owned_classes_;
  std::unordered_map<std::string, bool> parsed_files_;
  std::unordered_map<std::string, Module> modules_;  // By path.
};

}  // namespace torchcost::import::ts

#endif  // TORCHCOST_SRC_IMPORT_TS_MODULE_TREE_H_
