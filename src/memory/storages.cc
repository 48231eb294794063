#include "memory/storages.h"

#include <algorithm>
#include <utility>

namespace torchcost::memory {
namespace {

using rules::RValue;

bool IsOne(const sym::Expr& e) {
  return e.IsConstant() && *e.AsConstant() == 1;
}

// Lists and tuples hold their elements' storages; unpacking hands them back.
void AssignPlumbing(const ir::Node& node, StorageTable* t) {
  const std::string& op = node.op;
  if (op == "prim::ListConstruct" || op == "prim::TupleConstruct") {
    for (int in : node.inputs) t->Of(in, &t->list_storages[node.outputs[0]]);
  } else if (op == "prim::ListUnpack" || op == "prim::TupleUnpack") {
    const auto& elems = t->list_storages[node.inputs[0]];
    if (elems.size() == node.outputs.size()) {
      for (size_t i = 0; i < elems.size(); ++i)
        t->storage_of[node.outputs[i]] = elems[i];
    }
  }
}

}  // namespace

int StorageTable::Add(sym::Expr bytes, MemCategory category) {
  Storage s;
  s.bytes = std::move(bytes);
  s.category = category;
  s.id = static_cast<int>(storages.size());
  storages.push_back(std::move(s));
  return static_cast<int>(storages.size()) - 1;
}

bool StorageTable::IsSetup(int s) const {
  return std::find(setup.begin(), setup.end(), s) != setup.end();
}

sym::Expr BytesOf(const rules::TensorType& t) {
  sym::Expr n(1);
  for (const auto& d : t.shape) n = n * d;
  const int64_t size = t.dtype == DType::kUnknown ? 4 : ElementSize(t.dtype);
  return n * size;
}

bool ReshapeCopiesBroadcast(const ir::Graph& g,
                            const passes::ShapeFacts& shapes,
                            const ir::Node& node) {
  if ((node.op != "aten::reshape" && node.op != "aten::flatten") ||
      node.inputs.empty() || node.outputs.empty())
    return false;
  const int in = node.inputs[0];
  const int p = g.values[in].producer;
  if (p < 0 || g.nodes[p].op != "aten::expand" || g.nodes[p].inputs.empty())
    return false;
  const auto& src = shapes.values[g.nodes[p].inputs[0]].t.shape;
  const auto& mid = shapes.values[in].t.shape;
  const auto& out = shapes.values[node.outputs[0]].t.shape;
  if (src.size() > mid.size()) return false;
  const size_t lead = mid.size() - src.size();
  bool broadcast = false;
  for (size_t i = 0; i < mid.size(); ++i) {
    if ((i < lead || IsOne(src[i - lead])) && !IsOne(mid[i])) broadcast = true;
  }
  if (!broadcast) return false;
  // A view only if the reshape keeps every dim that is not 1 as it is.
  auto squeezed = [](const std::vector<sym::Expr>& shape) {
    std::vector<sym::Expr> r;
    for (const auto& d : shape) {
      if (!IsOne(d)) r.push_back(d);
    }
    return r;
  };
  return !(squeezed(mid) == squeezed(out));
}

void AssignStorages(const ir::Graph& g, const passes::ShapeFacts& shapes,
                    StorageTable* t) {
  t->storage_of.assign(g.values.size(), -1);
  t->list_storages.assign(g.values.size(), {});
  t->node_new.assign(g.nodes.size(), {});
  t->node_temps.assign(g.nodes.size(), {});
  // NB: about one storage per value here, and up to two gradients per node
  // and a few per parameter added by the backward: reserved once rather than
  // grown by doubling, whose copy would be made while the step is at its peak
  // (pages reserved and never written take no memory).
  t->storages.reserve(g.values.size() + 2 * g.nodes.size() +
                      4 * g.params.size() + 64);
  for (const auto& table : {&g.params, &g.buffers}) {
    const bool is_param = table == &g.params;
    for (const auto& e : *table) {
      int s = t->Add(sym::Expr(ir::Numel(e.shape) * ElementSize(e.dtype)),
                     is_param ? MemCategory::kParam : MemCategory::kBuffer);
      (*t)[s].pinned = true;
      t->setup.push_back(s);
      if (e.value >= 0) t->storage_of[e.value] = s;
    }
  }
  for (int v : g.inputs) {
    const RValue& rv = shapes.values[v];
    if (rv.kind != RValue::Kind::kTensor) continue;
    int s = t->Add(BytesOf(rv.t), MemCategory::kOther);
    (*t)[s].pinned = true;
    t->setup.push_back(s);
    t->storage_of[v] = s;
  }
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const ir::Node& node = g.nodes[ni];
    const auto& nf = shapes.nodes[ni];
    if (nf.no_rule) {
      for (int out : node.outputs) {
        const RValue& rv = shapes.values[out];
        if (rv.kind != RValue::Kind::kTensor || rv.t.has_scalar) continue;
        t->storage_of[out] = t->Add(BytesOf(rv.t), MemCategory::kTemp);
        t->node_new[ni].push_back(t->storage_of[out]);
      }
      continue;
    }
    if (nf.rule == nullptr || !nf.ok) {
      AssignPlumbing(node, t);
      continue;
    }
    const rules::Variant& v = *nf.applied->variant;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const int out = node.outputs[o];
      const RValue& rv = shapes.values[out];
      int alias_of = -1;
      if (v.alias_output >= 0 && o < v.output_slots.size() &&
          v.output_slots[o] == v.alias_output &&
          !ReshapeCopiesBroadcast(g, shapes, node)) {
        alias_of = nf.arg_values[v.alias_arg];
      }
      if (rv.kind == RValue::Kind::kTensor) {
        if (alias_of >= 0 && t->storage_of[alias_of] >= 0) {
          t->storage_of[out] = t->storage_of[alias_of];
        } else if (!rv.t.has_scalar) {
          t->storage_of[out] = t->Add(BytesOf(rv.t), MemCategory::kTemp);
          t->node_new[ni].push_back(t->storage_of[out]);
        }
      } else if (rv.kind == RValue::Kind::kTensorList) {
        for (const auto& tt : rv.tensors) {
          if (alias_of >= 0 && t->storage_of[alias_of] >= 0) {
            t->list_storages[out].push_back(t->storage_of[alias_of]);
          } else {
            int s = t->Add(BytesOf(tt), MemCategory::kTemp);
            t->list_storages[out].push_back(s);
            t->node_new[ni].push_back(s);
          }
        }
      }
    }
    for (const auto& tt : nf.applied->temporaries) {
      int s = t->Add(BytesOf(tt), MemCategory::kTemp);
      t->node_temps[ni].push_back(s);
    }
  }
  for (int v : g.outputs) {
    std::vector<int> ss;
    t->Of(v, &ss);
    for (int s : ss) {
      if ((*t)[s].category == MemCategory::kTemp)
        (*t)[s].category = MemCategory::kOther;
      (*t)[s].pinned = true;
    }
  }
}

}  // namespace torchcost::memory
