#include "import/ts_module_tree.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include "import/module_scopes.h"
#include "import/ts_program.h"
#include "import/ts_types.h"
#include "torchcost/dtype.h"

namespace torchcost::import::ts {
namespace {

bool Listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Status ModuleTree::Build(const Module& top, ir::Graph* graph,
                         std::unordered_map<std::string, int>* scope_index,
                         std::unordered_map<std::string, TensorSlot>* slots) {
  // Module hierarchy as jit::Module::named_modules() walks it: pre-order,
  // attributes in class order.
  std::vector<std::pair<std::string, Module>> order;
  TORCHCOST_RETURN_IF_ERROR(WalkModules("", top, &order));
  for (const auto& [path, m] : order) {
    const std::string type = ShortClassName(m.cls->name);
    const int index = graph->GetOrAddScope(path, type);
    if (path.empty()) {
      graph->scopes[index].name = type;
      graph->scopes[index].type = type;
    }
    (*scope_index)[path] = index;
    modules_[path] = m;
  }
  // Parameters, then buffers, in slot order (depth first), deduplicated by
  // storage as the LibTorch reader does.
  std::map<std::tuple<std::string, int64_t, std::vector<int64_t>>, TensorSlot>
      seen;
  for (bool params : {true, false}) {
    std::vector<std::pair<std::string, const PickleValue*>> tensors;
    TORCHCOST_RETURN_IF_ERROR(WalkTensors("", top, params, &tensors));
    for (const auto& [name, v] : tensors) {
      const PickledTensor& t = v->tensor;
      TORCHCOST_RETURN_IF_ERROR(CheckStorage(t, "data/"));
      const bool has_data = t.storage_numel > 0;
      std::tuple<std::string, int64_t, std::vector<int64_t>> key{
          t.storage_key, t.offset, t.sizes};
      if (has_data) {
        auto it = seen.find(key);
        if (it != seen.end()) {
          std::vector<ir::TensorEntry>& table =
              it->second.first ? graph->params : graph->buffers;
          table[it->second.second].aliases.push_back(name);
          (*slots)[name] = it->second;
          continue;
        }
      }
      ir::TensorEntry entry;
      entry.name = name;
      entry.shape = t.sizes;
      entry.dtype = DTypeFromScalarTypeCode(t.scalar_type);
      entry.requires_grad = params && t.requires_grad;
      std::vector<ir::TensorEntry>& table =
          params ? graph->params : graph->buffers;
      table.push_back(std::move(entry));
      const TensorSlot slot{params, static_cast<int>(table.size()) - 1};
      if (has_data) seen.emplace(std::move(key), slot);
      (*slots)[name] = slot;
    }
  }
  return Status::Ok();
}

const Module* ModuleTree::Find(const std::string& path) const {
  auto it = modules_.find(path);
  return it == modules_.end() ? nullptr : &it->second;
}

Result<const PickleValue*> ModuleTree::Attribute(
    const Module& m, const std::string& name) const {
  const PickleValue* v = m.object->Attr(name);
  if (v == nullptr)
    return Decline("module " + m.cls->name + " has no attribute '" + name +
                   "'");
  return v;
}

Status ModuleTree::CheckStorage(const PickledTensor& t,
                                const std::string& dir) const {
  const std::string entry = archive_.root() + dir + t.storage_key;
  const int size = StorageElementSize(t.scalar_type);
  uint64_t need = 0;
  if (size == 0 ||
      __builtin_mul_overflow(static_cast<uint64_t>(t.storage_numel),
                             static_cast<uint64_t>(size), &need)) {
    return Decline("storage '" + t.storage_key + "' of an unknown size");
  }
  const ZipEntry* e = archive_.Find(entry);
  if (e == nullptr)
    return Decline("storage '" + t.storage_key + "' is not in the archive");
  if (e->uncompressed < need)
    return Decline("storage '" + t.storage_key +
                   "' is shorter than its tensors need");
  return Status::Ok();
}

Result<const ClassDef*> ModuleTree::ClassNamed(const std::string& qualified) {
  auto it = classes_.find(qualified);
  if (it != classes_.end()) return it->second;
  const size_t dot = qualified.rfind('.');
  if (dot == std::string::npos || qualified.compare(0, 10, "__torch__.") != 0) {
    return Decline("class " + qualified + " is not TorchScript source");
  }
  const std::string module = qualified.substr(0, dot);
  if (parsed_files_.count(module))
    return Decline("no source for class " + qualified);
  parsed_files_.insert({module, true});
  std::string file = module;
  std::replace(file.begin(), file.end(), '.', '/');
  file = archive_.root() + "code/" + file + ".py";
  if (!archive_.Contains(file))
    return Decline("no source for class " + qualified);
  TORCHCOST_ASSIGN_OR_RETURN(std::string text, archive_.Read(file));
  Result<std::vector<ClassDef>> parsed = ParseSource(text, module);
  if (!parsed.ok())
    return Decline(file.substr(archive_.root().size()) + ": " +
                   parsed.status().message());
  for (ClassDef& c : *parsed) {
    auto owned = std::make_unique<ClassDef>(std::move(c));
    classes_[owned->name] = owned.get();
    owned_classes_.push_back(std::move(owned));
  }
  it = classes_.find(qualified);
  if (it == classes_.end()) return Decline("no source for class " + qualified);
  return it->second;
}

Result<Module> ModuleTree::ModuleOf(const PickleValue& object) {
  if (object.kind != PickleValue::Kind::kObject)
    return Decline("a module attribute is not an object");
  TORCHCOST_ASSIGN_OR_RETURN(const ClassDef* cls, ClassNamed(object.s));
  if (cls->base != "Module")
    return Decline("class " + cls->name + " is not a Module");
  if (cls->has_constants)
    return Decline("class " + cls->name + " has constants");
  return Module{&object, cls};
}

Status ModuleTree::WalkModules(
    const std::string& path, const Module& m,
    std::vector<std::pair<std::string, Module>>* out) {
  out->emplace_back(path, m);
  for (const auto& [name, type] : m.cls->attributes) {
    TORCHCOST_ASSIGN_OR_RETURN(const PickleValue* v, Attribute(m, name));
    if (v->kind != PickleValue::Kind::kObject) continue;
    TORCHCOST_ASSIGN_OR_RETURN(Module sub, ModuleOf(*v));
    TORCHCOST_RETURN_IF_ERROR(
        WalkModules(JoinModulePath(path, name), sub, out));
  }
  return Status::Ok();
}

Status ModuleTree::WalkTensors(
    const std::string& path, const Module& m, bool params,
    std::vector<std::pair<std::string, const PickleValue*>>* out) {
  for (const auto& [name, type] : m.cls->attributes) {
    TORCHCOST_ASSIGN_OR_RETURN(const PickleValue* v, Attribute(m, name));
    if (v->kind == PickleValue::Kind::kObject) {
      TORCHCOST_ASSIGN_OR_RETURN(Module sub, ModuleOf(*v));
      TORCHCOST_RETURN_IF_ERROR(
          WalkTensors(JoinModulePath(path, name), sub, params, out));
      continue;
    }
    if (v->kind != PickleValue::Kind::kTensor) continue;
    if (v->tensor.device != "cpu")
      return Decline("a tensor on device " + v->tensor.device);
    const bool is_param = Listed(m.cls->parameters, name);
    const bool is_buffer = Listed(m.cls->buffers, name);
    if (!is_param && !is_buffer) continue;
    if (is_param == params) out->emplace_back(JoinModulePath(path, name), v);
  }
  return Status::Ok();
}

}  // namespace torchcost::import::ts
