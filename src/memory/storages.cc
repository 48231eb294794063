#include "memory/storages.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "memory/bytes_cache.h"
#include "memory/op_names.h"

namespace torchcost::memory {
namespace {

using rules::RValue;

bool IsOne(const sym::Expr& e) {
  return e.IsConstant() && *e.AsConstant() == 1;
}

// Lists and tuples hold their elements' storages; unpacking hands them back.
void AssignPlumbing(const ir::Node& node, StorageTable* t) {
  const std::string& op = node.op;
  if (op == op::kListConstruct || op == op::kTupleConstruct) {
    for (int in : node.inputs) t->Of(in, &t->list_storages[node.outputs[0]]);
  } else if (op == op::kListUnpack || op == op::kTupleUnpack) {
    const auto& elems = t->list_storages[node.inputs[0]];
    if (elems.size() == node.outputs.size()) {
      for (size_t i = 0; i < elems.size(); ++i)
        t->storage_of[node.outputs[i]] = elems[i];
    }
  }
}

// Returns the schema argument `k` of node `ni` as a constant, or nullopt.
std::optional<int64_t> ConstantArg(const passes::ShapeFacts& shapes, int ni,
                                   size_t k) {
  const auto& args = shapes.nodes[ni].arg_values;
  if (k >= args.size() || args[k] < 0) return std::nullopt;
  const RValue& v = shapes.values[args[k]];
  if (v.kind != RValue::Kind::kInt) return std::nullopt;
  return v.i.AsConstant();
}

// Returns, per dim of tensor value `v`, whether it has stride 0: a dim an
// expand grew from 1 (or added), reached back through transposes and views
// that only add or drop dims of size 1; none if no expand is found that way.
std::vector<bool> StrideZeroDims(const ir::Graph& g,
                                 const passes::ShapeFacts& shapes, int v) {
  const auto& shape = shapes.values[v].t.shape;
  std::vector<bool> zero(shape.size(), false);
  // pos[k]: where dim k of v is in the current value; -1 for a dim of size 1,
  // whose stride never matters.
  std::vector<int> pos(shape.size());
  for (size_t k = 0; k < shape.size(); ++k)
    pos[k] = IsOne(shape[k]) ? -1 : static_cast<int>(k);
  for (int cur = v, hops = 0; hops < 32; ++hops) {
    const int p = g.values[cur].producer;
    if (p < 0 || g.nodes[p].inputs.empty() || !shapes.nodes[p].ok) break;
    const ir::Node& n = g.nodes[p];
    const auto& args = shapes.nodes[p].arg_values;
    if (args.empty() || args[0] < 0 ||
        shapes.values[args[0]].kind != RValue::Kind::kTensor ||
        shapes.values[cur].kind != RValue::Kind::kTensor)
      break;
    const int in = args[0];
    const auto& out_shape = shapes.values[cur].t.shape;
    const auto& in_shape = shapes.values[in].t.shape;
    if (n.op == op::kExpand) {
      if (in_shape.size() > out_shape.size()) break;
      const size_t lead = out_shape.size() - in_shape.size();
      for (size_t k = 0; k < pos.size(); ++k) {
        if (pos[k] < 0) continue;
        const size_t i = static_cast<size_t>(pos[k]);
        zero[k] = i < lead || IsOne(in_shape[i - lead]);
      }
      break;
    }
    if (n.op == op::kTranspose) {
      const auto d0 = ConstantArg(shapes, p, 1), d1 = ConstantArg(shapes, p, 2);
      const int64_t r = static_cast<int64_t>(out_shape.size());
      if (!d0 || !d1) break;
      const int64_t a = (*d0 + r) % r, b = (*d1 + r) % r;
      for (int& q : pos) {
        if (q == a) {
          q = static_cast<int>(b);
        } else if (q == b) {
          q = static_cast<int>(a);
        }
      }
      cur = in;
      continue;
    }
    const bool view_op = n.op == op::kReshape || n.op == op::kView ||
                         n.op == op::kUnsafeView || n.op == op::kUnsqueeze ||
                         n.op == op::kSqueeze || n.op == op::kFlatten;
    if (!view_op || ReshapeCopiesBroadcast(g, shapes, n)) break;
    // Only views that add or drop 1s: the dims not 1 keep their order.
    std::vector<int> in_pos, out_pos;
    for (size_t i = 0; i < in_shape.size(); ++i)
      if (!IsOne(in_shape[i])) in_pos.push_back(static_cast<int>(i));
    for (size_t i = 0; i < out_shape.size(); ++i)
      if (!IsOne(out_shape[i])) out_pos.push_back(static_cast<int>(i));
    if (in_pos.size() != out_pos.size()) break;
    bool same = true;
    for (size_t j = 0; j < in_pos.size(); ++j)
      same = same && in_shape[in_pos[j]] == out_shape[out_pos[j]];
    if (!same) break;
    for (int& q : pos) {
      if (q < 0) continue;
      const size_t j =
          std::find(out_pos.begin(), out_pos.end(), q) - out_pos.begin();
      q = in_pos[j];
    }
    cur = in;
  }
  return zero;
}

// ind(e > 1) for a dim product e >= 1: min(max(e - 1, 0), 1).
sym::Expr AboveOne(const sym::Expr& e) {
  return sym::Min(sym::Max(e - sym::Expr(1), sym::Expr(0)), sym::Expr(1));
}

// Sets *copies to 1 where matmul node `ni` copies argument `arg` (0 where it
// views, an expression where that depends on symbols) and *bytes to the
// copy's bytes; returns false if it never copies.
bool FoldTerms(const ir::Graph& g, const passes::ShapeFacts& shapes, int ni,
               int arg, sym::Expr* copies, sym::Expr* bytes) {
  const ir::Node& node = g.nodes[ni];
  const auto& args = shapes.nodes[ni].arg_values;
  if (node.op != op::kMatmul || args.size() < 2 || args[0] < 0 || args[1] < 0)
    return false;
  const RValue& a = shapes.values[args[0]];
  const RValue& b = shapes.values[args[1]];
  if (a.kind != RValue::Kind::kTensor || b.kind != RValue::Kind::kTensor ||
      a.t.shape.size() < 3 || b.t.shape.size() < 3)
    return false;
  const int v = args[arg];
  const auto& shape = shapes.values[v].t.shape;
  const auto& other = (arg == 0 ? b : a).t.shape;
  const size_t nb = shape.size() - 2, ob = other.size() - 2;
  const size_t rank = std::max(nb, ob);
  const std::vector<bool> zero = StrideZeroDims(g, shapes, v);
  // The common batch shape, right-aligned: a dim of 1 (or none) in this
  // argument against one not 1 in the other is matmul's own expand (stride 0).
  sym::Expr p_zero(1), p_rest(1), numel(1);
  for (size_t j = 0; j < rank; ++j) {
    const bool mine = j + nb >= rank, theirs = j + ob >= rank;
    const sym::Expr* d = mine ? &shape[j + nb - rank] : nullptr;
    const sym::Expr* e = theirs ? &other[j + ob - rank] : nullptr;
    const bool grown = d == nullptr || IsOne(*d);
    const sym::Expr dim = grown ? *e : *d;
    numel = numel * dim;
    if (IsOne(dim)) continue;
    if (grown || zero[j + nb - rank]) {
      p_zero = p_zero * dim;
    } else {
      p_rest = p_rest * dim;
    }
  }
  if (IsOne(p_zero) || IsOne(p_rest)) return false;
  const int64_t size = shapes.values[v].t.dtype == DType::kUnknown
                           ? 4
                           : ElementSize(shapes.values[v].t.dtype);
  *copies = AboveOne(p_zero) * AboveOne(p_rest);
  // [prod(batch), n, m]: the batch's numel times the last two dims.
  *bytes = numel * shape[nb] * shape[nb + 1] * size;
  return true;
}

// Adds matmul node `ni`'s fold copies (MatmulFoldCopyBytes) as temporaries.
// NB: where the copy depends on symbols, the storage is the copy when it
// copies and, when it views, stands for the argument's own storage, which
// bmm then saves (one storage of bytes own + copies * (copy - own)); that
// over-counts only if another node saves the argument too.
void AddFoldCopies(const ir::Graph& g, const passes::ShapeFacts& shapes, int ni,
                   StorageTable* t) {
  const auto& args = shapes.nodes[ni].arg_values;
  for (int arg = 0; arg < 2; ++arg) {
    sym::Expr copies, bytes;
    if (!FoldTerms(g, shapes, ni, arg, &copies, &bytes)) continue;
    const int own = t->storage_of[args[arg]];
    if (own < 0) continue;
    const sym::Expr& own_bytes = (*t)[own].bytes;
    sym::Expr held = copies.IsConstant()
                         ? (*copies.AsConstant() == 0 ? own_bytes : bytes)
                         : own_bytes + copies * (bytes - own_bytes);
    const int s = t->Add(std::move(held), MemCategory::kTemp);
    t->node_temps[ni].push_back(s);
    t->fold_copies.push_back({ni, args[arg], s});
  }
}

}  // namespace

sym::Expr MatmulFoldCopyBytes(const ir::Graph& g,
                              const passes::ShapeFacts& shapes, int ni,
                              int arg) {
  sym::Expr copies, bytes;
  if (!FoldTerms(g, shapes, ni, arg, &copies, &bytes)) return sym::Expr(0);
  return copies * bytes;
}

int StorageTable::FoldCopyOf(int node, int value) const {
  auto it =
      std::lower_bound(fold_copies.begin(), fold_copies.end(), node,
                       [](const FoldCopy& c, int n) { return c.node < n; });
  for (; it != fold_copies.end() && it->node == node; ++it) {
    if (it->value == value) return it->storage;
  }
  return -1;
}

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
  if ((node.op != op::kReshape && node.op != op::kFlatten) ||
      node.inputs.empty() || node.outputs.empty())
    return false;
  const int in = node.inputs[0];
  const int p = g.values[in].producer;
  if (p < 0 || g.nodes[p].op != op::kExpand || g.nodes[p].inputs.empty())
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
  auto squeezed = [](const sym::Shape& shape) {
    sym::Shape r;
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
  // NB: cleared, then default-constructed (no copy of an empty list per slot).
  t->list_storages.clear();
  t->list_storages.resize(g.values.size());
  t->node_new.clear();
  t->node_new.resize(g.nodes.size());
  t->node_temps.clear();
  t->node_temps.resize(g.nodes.size());
  BytesCache bytes;
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
    int s = t->Add(bytes.Of(rv.t), MemCategory::kOther);
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
        t->storage_of[out] = t->Add(bytes.Of(rv.t), MemCategory::kTemp);
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
          t->storage_of[out] = t->Add(bytes.Of(rv.t), MemCategory::kTemp);
          t->node_new[ni].push_back(t->storage_of[out]);
        }
      } else if (rv.kind == RValue::Kind::kTensorList) {
        for (const auto& tt : rv.tensors) {
          if (alias_of >= 0 && t->storage_of[alias_of] >= 0) {
            t->list_storages[out].push_back(t->storage_of[alias_of]);
          } else {
            int s = t->Add(bytes.Of(tt), MemCategory::kTemp);
            t->list_storages[out].push_back(s);
            t->node_new[ni].push_back(s);
          }
        }
      }
    }
    for (const auto& tt : nf.applied->temporaries) {
      int s = t->Add(bytes.Of(tt), MemCategory::kTemp);
      t->node_temps[ni].push_back(s);
    }
    if (node.op == op::kMatmul)
      AddFoldCopies(g, shapes, static_cast<int>(ni), t);
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
