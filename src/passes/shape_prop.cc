#include "passes/shape_prop.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "ir/op_name_hash.h"
#include "passes/native_ops.h"
#include "passes/repeat_span.h"
#include "passes/shape_fallback.h"
#include "rules/op_rule.h"

namespace torchcost::passes {
namespace {

using rules::RValue;

const RValue& BoolValue(bool b) {
  static const RValue* kTrue = new RValue(RValue::Bool(true));
  static const RValue* kFalse = new RValue(RValue::Bool(false));
  return b ? *kTrue : *kFalse;
}

// What BindArgs learns once per rule: the training flags among the schema's
// arguments, and the argument indices of the last input names it bound.
struct BindCache {
  std::vector<int> flag_args;  // Bool arguments IsTrainingFlag names.
  // The input names of the last node bound by name (views into the graph)
  // and the argument index of each.
  std::vector<std::string_view> names;
  std::vector<int> name_args;
  // The storage of the list `names` views (ArgNames::begin()); nullptr: none.
  // NB: the graph is not changed while it is propagated, so a node holding
  // that same storage (a copy of the list) holds the same names.
  const std::string* names_data = nullptr;
  // The inputs of that node: names past them are bound to no argument.
  size_t inputs = 0;
};

// Fills `cache->flag_args` for `schema`.
void InitBindCache(const rules::Schema& schema, BindCache* cache) {
  for (size_t a = 0; a < schema.args.size(); ++a) {
    if (schema.args[a].type.base == rules::ArgType::Base::kBool &&
        IsTrainingFlag(schema.args[a].name)) {
      cache->flag_args.push_back(static_cast<int>(a));
    }
  }
}

// Returns true if `names`, on a node of `inputs` inputs, are the names
// `cache` last bound on a node of as many.
bool SameNames(const ir::ArgNames& names, size_t inputs,
               const BindCache& cache) {
  if (names.size() != cache.names.size() || inputs != cache.inputs)
    return false;
  if (names.begin() == cache.names_data) return true;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != cache.names[i]) return false;
  }
  return true;
}

// Binds a node's inputs to the rule's schema arguments: by name when the
// frontend named them, else by position. Training flags are forced to the
// step's mode (true in a training step, false in inference). `cache` belongs
// to the rule whose schema this is.
Status BindArgs(const ir::Node& node, const rules::Schema& schema,
                const std::vector<RValue>& values, bool train, BindCache* cache,
                std::vector<const RValue*>* args,
                ir::InlineInts<6>* arg_values) {
  args->assign(schema.args.size(), nullptr);
  arg_values->assign(schema.args.size(), -1);
  if (!node.input_names.empty()) {
    if (node.input_names.size() < node.inputs.size()) {
      return Status::InvalidArgument(
          "node has " + std::to_string(node.inputs.size()) + " inputs but " +
          std::to_string(node.input_names.size()) + " input names");
    }
    if (!SameNames(node.input_names, node.inputs.size(), *cache)) {
      cache->names.clear();
      cache->name_args.clear();
      cache->names_data = nullptr;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        int a = schema.FindArg(node.input_names[i]);
        if (a < 0) {
          cache->names.clear();
          cache->name_args.clear();
          return Status::InvalidArgument(
              "input '" + node.input_names[i] +
              "' is not an argument of the rule's schema '" + schema.name +
              (schema.overload.empty() ? "" : "." + schema.overload) + "'");
        }
        cache->names.push_back(node.input_names[i]);
        cache->name_args.push_back(a);
      }
      // NB: names beyond the inputs (a malformed node) are not bound.
      for (size_t i = node.inputs.size(); i < node.input_names.size(); ++i) {
        cache->names.push_back(node.input_names[i]);
        cache->name_args.push_back(-1);
      }
      cache->names_data = node.input_names.begin();
      cache->inputs = node.inputs.size();
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int a = cache->name_args[i];
      (*args)[a] = &values[node.inputs[i]];
      (*arg_values)[a] = node.inputs[i];
    }
  } else {
    if (node.inputs.size() > schema.args.size()) {
      return Status::InvalidArgument("node has " +
                                     std::to_string(node.inputs.size()) +
                                     " inputs but the rule's schema takes " +
                                     std::to_string(schema.args.size()));
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      (*args)[i] = &values[node.inputs[i]];
      (*arg_values)[i] = node.inputs[i];
    }
  }
  for (int a : cache->flag_args) (*args)[a] = &BoolValue(train);
  return Status::Ok();
}

// Gives a value the shape the trace recorded, if any.
bool UseTracedShape(const ir::Value& v, RValue* out) {
  if (v.kind != ir::ValueKind::kTensor || !v.has_traced_shape) return false;
  rules::TensorType t;
  t.shape.assign(v.traced_shape.begin(), v.traced_shape.end());
  t.dtype = v.dtype;
  *out = RValue::Tensor(std::move(t));
  return true;
}

// A memo key: the words of a rule's identity and of its bound values.
using MemoKey = std::vector<uint64_t>;

// Hashes a memo key: one rotate, xor and multiply per word (FxHash's step),
// then splitmix64's finalizer once.
// NB: the order of the memo is never observed, so any hash will do; this one
// is a fifth of the per-word mixing it replaced.
struct MemoKeyHash {
  size_t operator()(const MemoKey& key) const {
    uint64_t h = key.size();
    for (uint64_t w : key) {
      h = (((h << 5) | (h >> 59)) ^ w) * 0x9e3779b97f4a7c15ULL;
    }
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return static_cast<size_t>(h);
  }
};

uint64_t Word(const void* p) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

// Appends an interned expression: its node and constant identify it.
void AppendExpr(MemoKey* key, const sym::Expr& e) {
  key->push_back(Word(e.node()));
  if (e.node() == nullptr)
    key->push_back(static_cast<uint64_t>(*e.AsConstant()));
}

void AppendExprs(MemoKey* key, const sym::Shape& exprs) {
  key->push_back(exprs.size());
  for (const sym::Expr& e : exprs) AppendExpr(key, e);
}

void AppendTensor(MemoKey* key, const rules::TensorType& t) {
  AppendExprs(key, t.shape);
  key->push_back(static_cast<uint64_t>(t.dtype) << 1 |
                 static_cast<uint64_t>(t.has_scalar));
  if (t.has_scalar) AppendExpr(key, t.scalar);
}

// Appends every field of `v` that a rule can read (Expr fields by their
// interned node, so equal keys mean equal values).
void AppendValue(MemoKey* key, const RValue& v) {
  key->push_back(static_cast<uint64_t>(v.kind) << 2 |
                 static_cast<uint64_t>(v.b) << 1 |
                 static_cast<uint64_t>(v.unknown));
  switch (v.kind) {
    case RValue::Kind::kInt:
      AppendExpr(key, v.i);
      break;
    case RValue::Kind::kFloat: {
      uint64_t bits;
      std::memcpy(&bits, &v.f, sizeof bits);
      key->push_back(bits);
      break;
    }
    case RValue::Kind::kString:
      key->push_back(v.s.size());
      for (size_t i = 0; i < v.s.size(); i += 8) {
        uint64_t w = 0;
        std::memcpy(&w, v.s.data() + i, std::min<size_t>(8, v.s.size() - i));
        key->push_back(w);
      }
      break;
    case RValue::Kind::kIntList:
      AppendExprs(key, v.ints);
      break;
    case RValue::Kind::kTensor:
      AppendTensor(key, v.t);
      break;
    case RValue::Kind::kTensorList:
      key->push_back(v.tensors.size());
      for (const rules::TensorType& t : v.tensors) AppendTensor(key, t);
      break;
    case RValue::Kind::kList:
      key->push_back(v.items.size());
      for (const RValue& item : v.items) AppendValue(key, item);
      break;
    default:
      break;
  }
}

// Interns facts: gives each distinct value (by AppendValue's words) a small
// id, so that equal ids mean equal values.
class FactIds {
 public:
  // Returns the id of `v`, from 1.
  uint32_t Of(const RValue& v) {
    words_.clear();
    AppendValue(&words_, v);
    return ids_.try_emplace(words_, static_cast<uint32_t>(ids_.size() + 1))
        .first->second;
  }

 private:
  MemoKey words_;
  std::unordered_map<MemoKey, uint32_t, MemoKeyHash> ids_;
};

// An op and its overload, viewed in a node of the graph being propagated.
struct OpKey {
  std::string_view op, overload;
  bool operator==(const OpKey& o) const {
    return op == o.op && overload == o.overload;
  }
};

// An op and overload's hash: the overload's name hash mixed into the op's
// (MemoKeyHash's step).
struct OpKeyHash {
  size_t operator()(const OpKey& k) const {
    const uint64_t h = ir::OpNameHash()(k.op);
    return (((h << 5) | (h >> 59)) ^ ir::OpNameHash()(k.overload)) *
           0x9e3779b97f4a7c15ULL;
  }
};

// Copies `src` into `dst` as `*dst = src` does, assigning only the containers
// that are not empty on either side (a tensor copies its shape alone).
void AssignValue(const RValue& src, RValue* dst) {
  dst->kind = src.kind;
  dst->b = src.b;
  dst->unknown = src.unknown;
  dst->i = src.i;
  dst->f = src.f;
  if (!src.s.empty() || !dst->s.empty()) dst->s = src.s;
  if (!src.ints.empty() || !dst->ints.empty()) dst->ints = src.ints;
  if (!src.t.shape.empty() || !dst->t.shape.empty()) dst->t.shape = src.t.shape;
  dst->t.dtype = src.t.dtype;
  dst->t.has_scalar = src.t.has_scalar;
  dst->t.scalar = src.t.scalar;
  if (!src.tensors.empty() || !dst->tensors.empty()) dst->tensors = src.tensors;
  if (!src.items.empty() || !dst->items.empty()) dst->items = src.items;
}

// Sets `out`, a default RValue, to ConstantToValue(v): the scalar constants
// in place (most of a graph's constants), the others by that function.
void ConstantToFreshValue(const ir::Value& v, RValue* out) {
  const ir::Constant& c = v.constant;
  if (v.kind != ir::ValueKind::kTensor) {
    if (std::holds_alternative<std::monostate>(c)) {
      out->kind = RValue::Kind::kNone;
      return;
    }
    if (const int64_t* i = std::get_if<int64_t>(&c)) {
      out->kind = RValue::Kind::kInt;
      out->i = sym::Expr(*i);
      return;
    }
    if (const bool* b = std::get_if<bool>(&c)) {
      out->kind = RValue::Kind::kBool;
      out->b = *b;
      return;
    }
    if (const double* d = std::get_if<double>(&c)) {
      out->kind = RValue::Kind::kFloat;
      out->f = *d;
      return;
    }
  }
  *out = ConstantToValue(v);
}

class Propagator {
 public:
  Propagator(const ir::Graph& g, const RuleSet& rules, sym::Context& ctx,
             ShapeFacts* facts, Report* report)
      : g_(g), rules_(rules), ctx_(ctx), facts_(facts), report_(report) {}

  // Sets the facts of the values from `first_value` on (all but the inputs
  // are kept below it: an extension) and of every input.
  Status Init(const AnalysisOptions& options, size_t first_value) {
    train_ = options.training.mode == StepMode::kTrain;
    device_ = options.device;
    facts_->device = options.device;
    attention_backend_ = options.attention_backend;
    torch_version_ = options.training.torch_version;
    facts_->values.resize(first_value);
    facts_->values.resize(g_.values.size());
    facts_->nodes.resize(std::min(facts_->nodes.size(), g_.nodes.size()));
    facts_->nodes.resize(g_.nodes.size());
    for (size_t i = first_value; i < g_.values.size(); ++i) {
      const ir::Value& v = g_.values[i];
      RValue& out = facts_->values[i];
      if (v.has_constant) {
        ConstantToFreshValue(v, &out);
      } else if (v.role == ir::ValueRole::kParam ||
                 v.role == ir::ValueRole::kBuffer) {
        const auto& table =
            v.role == ir::ValueRole::kParam ? g_.params : g_.buffers;
        const ir::TensorEntry& e = table.at(v.table_index);
        // In place: `out` is a default value.
        out.kind = RValue::Kind::kTensor;
        out.t.shape.assign(e.shape.begin(), e.shape.end());
        out.t.dtype = e.dtype;
      } else if (v.kind == ir::ValueKind::kNone) {
        out = RValue::None();
      } else if (v.producer < 0 && v.role != ir::ValueRole::kInput) {
        UseTracedShape(v, &out);  // A constant tensor baked into the trace.
      }
    }
    // Model inputs: the user's shapes, else the traced ones.
    std::vector<int> tensor_inputs;
    for (int vi : g_.inputs) {
      if (g_.values[vi].kind == ir::ValueKind::kTensor ||
          g_.values[vi].kind == ir::ValueKind::kOther)
        tensor_inputs.push_back(vi);
    }
    if (!options.inputs.empty()) {
      if (options.inputs.size() != tensor_inputs.size()) {
        return Status::InvalidArgument(
            g_.source + ": the model takes " +
            std::to_string(tensor_inputs.size()) + " tensor input" +
            (tensor_inputs.size() == 1 ? "" : "s") + " but " +
            std::to_string(options.inputs.size()) + " StepConfig.inputs " +
            (options.inputs.size() == 1 ? "was" : "were") + " given");
      }
      for (size_t i = 0; i < tensor_inputs.size(); ++i) {
        rules::TensorType t;
        t.shape = options.inputs[i].shape;
        t.dtype = options.inputs[i].dtype;
        facts_->values[tensor_inputs[i]] = RValue::Tensor(std::move(t));
      }
      SetExamples(tensor_inputs, options);
    } else {
      for (int vi : tensor_inputs) {
        if (!UseTracedShape(g_.values[vi], &facts_->values[vi])) {
          return Status::InvalidArgument(
              g_.source + ": input '" + g_.values[vi].name +
              "' has no recorded shape; give one with StepConfig.inputs, e.g. "
              "StepConfig.inputs B,3,224,224");
        }
      }
    }
    return Status::Ok();
  }

  // Propagates through the nodes from `first_node` on; an extension carries
  // on from what the nodes before it found (ops without rules, the backend).
  void Run(size_t first_node) {
    std::map<std::string, int64_t> unknown;
    for (const UnknownOp& u : report_->unknown_ops) unknown[u.op] += u.count;
    report_->unknown_ops.clear();
    backend_read_ = first_node > 0 && facts_->attention_backend_read;
    const std::string unread = BackendUnread();
    if (first_node > 0) {
      // NB: said once, after every node's diagnostics, as one run says it.
      auto& d = report_->diagnostics;
      d.erase(std::remove_if(
                  d.begin(), d.end(),
                  [&](const Diagnostic& x) { return x.message == unread; }),
              d.end());
    }
    std::vector<const RValue*> args;
    const size_t first_applied = facts_->applied.size();
    // MemoKeyOf -> the rule's result and its outputs' fact ids.
    // NB: the outputs' ids are copied from the memo with the outputs, so a
    // repeated layer's nodes key on a few words each rather than a walk of
    // every shape.
    struct MemoEntry {
      const rules::Applied* applied = nullptr;
      // The ids of the outputs as the first node left them; empty if unknown.
      std::vector<uint32_t> output_ids;
    };
    std::unordered_map<MemoKey, MemoEntry, MemoKeyHash> memo;
    MemoKey key;
    value_ids_.assign(g_.values.size(), 0);
    // What each distinct op is, found once per propagation ((op, overload),
    // views into the graph's nodes -> entry).
    struct OpEntry {
      bool native = false, int_arith = false;  // IsNativeOp, IsIntArith.
      NativeOp native_op = NativeOp::kNone;    // ClassifyNativeOp.
      bool scalar_value = false;               // PropagatesScalarValue.
      bool looked_up = false;                  // `rule` and `ignored` are set.
      const rules::OpRule* rule = nullptr;     // nullptr: none, or ignored.
      // The op (or op.overload) is listed as ignored.
      bool ignored = false;
      BindCache bind;  // For `rule`'s schema.
    };
    std::unordered_map<OpKey, OpEntry, OpKeyHash> ops;
    eventful_.assign(g_.nodes.size(), 0);
    auto span = g_.repeats.begin();
    for (size_t ni = first_node; ni < g_.nodes.size(); ++ni) {
      while (span != g_.repeats.end() && span->node < static_cast<int>(ni))
        ++span;
      if (span != g_.repeats.end() && span->node == static_cast<int>(ni) &&
          CopySpan(*span, first_node)) {
        ni += static_cast<size_t>(span->nodes) - 1;
        continue;
      }
      const ir::Node& node = g_.nodes[ni];
      NodeFacts& nf = facts_->nodes[ni];
      NodeCost& cost = report_->nodes[ni];
      auto [entry, inserted] = ops.try_emplace(OpKey{node.op, node.overload});
      OpEntry& op = entry->second;
      if (inserted) {
        op.native_op = ClassifyNativeOp(node.op);
        op.native = IsNativeOp(node);
        op.int_arith = IsIntArith(node);
        op.scalar_value = PropagatesScalarValue(node);
      }
      if (op.native ||
          (node.overload.empty() && op.int_arith && !node.inputs.empty() &&
           facts_->values[node.inputs[0]].kind == RValue::Kind::kInt)) {
        cost.has_rule = true;
        if (AnyInputUnknown(node)) {
          eventful_[ni] = 1;
          continue;
        }
        // NB: a fresh symbol per node, so a run holding one is not copied
        // (CopySpan).
        if (MintsSymbol(node, op.native_op, facts_->values)) eventful_[ni] = 1;
        Status s = RunNativeOp(node, op.native_op, ctx_, facts_->values);
        ForgetOutputIds(node);
        nf.ok = s.ok();
        if (!s.ok()) Error(ni, s.message());
        continue;
      }
      if (!op.looked_up) {
        Result<const rules::OpRule*> found =
            rules_.Lookup(node.op, node.overload);
        // A rule that does not compile (built-in rules compile on first use):
        // as a rule that fails.
        if (!found.ok()) {
          cost.has_rule = true;
          Error(ni, found.status().message());
          cost.cost_unknown = true;
          FallBack(ni, "");
          continue;
        }
        op.rule = *found;
        if (!node.overload.empty() &&
            rules_.IsIgnored(node.op + "." + node.overload))
          op.rule = nullptr;
        op.ignored = rules_.IsIgnored(node.op) ||
                     rules_.IsIgnored(node.op + "." + node.overload);
        if (op.rule != nullptr) InitBindCache(op.rule->schema, &op.bind);
        op.looked_up = true;
      }
      const rules::OpRule* rule = op.rule;
      if (rule == nullptr) {
        if (!op.ignored) {
          ++unknown[node.op];
          nf.no_rule = true;
          cost.cost_unknown = true;
          FallBack(ni, "no rule for operator " + node.op);
        } else {
          cost.has_rule = true;
          FallBack(ni, "");
        }
        continue;
      }
      cost.has_rule = true;
      nf.rule = rule;
      if (AnyInputUnknown(node)) {
        cost.cost_unknown = true;
        FallBack(ni, "");
        continue;
      }
      Status s = BindArgs(node, rule->schema, facts_->values, train_, &op.bind,
                          &args, &nf.arg_values);
      if (s.ok()) {
        // NB: a rule's application is a function of the rule and its bound
        // values (device, backend and torch version are fixed per run; rules
        // make no fresh symbols), so a repeated layer's nodes reuse the first
        // one's result: a decoder's N identical layers apply each rule once.
        MemoKeyOf(op, args, nf.arg_values, &key);
        auto hit = memo.find(key);
        if (hit != memo.end()) {
          nf.applied = hit->second.applied;
          entry_ = &hit->second.output_ids;
        } else {
          auto applied = std::make_unique<rules::Applied>();
          s = rules::ApplyRule(
              *rule, args, ctx_, applied.get(),
              rules::RuleSettings{device_, attention_backend_, torch_version_});
          nf.applied = applied.get();
          facts_->applied.push_back(std::move(applied));
          entry_ = nullptr;
          if (s.ok()) {
            entry_ = &memo.emplace(key, MemoEntry{nf.applied, {}})
                          .first->second.output_ids;
          }
        }
      }
      if (!s.ok()) {
        Error(ni, s.message());
        cost.cost_unknown = true;
        FallBack(ni, "");
        continue;
      }
      const rules::Applied& applied = *nf.applied;
      if (applied.outputs.size() != node.outputs.size()) {
        cost.cost_unknown = true;
        Error(ni, "the rule gives " + std::to_string(applied.outputs.size()) +
                      " outputs but the node has " +
                      std::to_string(node.outputs.size()));
        FallBack(ni, "");
        continue;
      }
      for (size_t i = 0; i < node.outputs.size(); ++i)
        AssignValue(applied.outputs[i], &facts_->values[node.outputs[i]]);
      if (op.scalar_value) PropagateScalarValue(node, facts_->values);
      if (op.scalar_value && !node.outputs.empty() &&
          facts_->values[node.outputs[0]].t.has_scalar) {
        // NB: a value carried by PropagateScalarValue (or by the rule) is
        // not in the memo's outputs.
        ForgetOutputIds(node);
      } else if (entry_->empty()) {
        for (int vo : node.outputs) entry_->push_back(IdOf(vo));
      } else {
        for (size_t i = 0; i < node.outputs.size(); ++i)
          value_ids_[node.outputs[i]] = (*entry_)[i];
      }
      for (auto& a : applied.assumptions) {
        eventful_[ni] = 1;
        report_->assumptions.push_back(Where(ni) + ": could not prove " + a +
                                       "; assuming it holds");
      }
      nf.ok = true;
      backend_read_ = backend_read_ || applied.read_attention_backend;
      // NB: arithmetic on traced sizes (0-dim integer tensors with a known
      // value) is shape bookkeeping that tracing recorded, not model compute.
      if (!node.outputs.empty() &&
          facts_->values[node.outputs[0]].kind == RValue::Kind::kTensor &&
          facts_->values[node.outputs[0]].t.has_scalar) {
        continue;
      }
      cost.macs = applied.macs;
      cost.flops = applied.flops;
      cost.transcendentals = applied.transcendentals;
    }
    // Nothing reads the results' outputs from here on (they are in the values).
    for (size_t i = first_applied; i < facts_->applied.size(); ++i) {
      std::vector<rules::RValue>().swap(facts_->applied[i]->outputs);
    }
    facts_->attention_backend_read = backend_read_;
    if (attention_backend_ != "auto" && !backend_read_) {
      // NB: the choice acts on aten::scaled_dot_product_attention only (its
      // rule reads attention_backend()); say so rather than ignore it silently.
      report_->diagnostics.push_back({Diagnostic::Severity::kWarning, unread});
    }
    for (const auto& [op, count] : unknown)
      report_->unknown_ops.push_back({op, count});
    std::sort(report_->unknown_ops.begin(), report_->unknown_ops.end(),
              [](const UnknownOp& a, const UnknownOp& b) {
                return a.count != b.count ? a.count > b.count : a.op < b.op;
              });
  }

 private:
  // Returns the fact id of value `v`, interning it on first use.
  uint32_t IdOf(int v) {
    uint32_t& id = value_ids_[v];
    if (id == 0) id = fact_ids_.Of(facts_->values[v]);
    return id;
  }

  // Copies what the nodes of span `s`'s source run found to the span's nodes
  // and their outputs, if the span still repeats its source (RepeatsSource),
  // each value both read from outside it is equal in the two, and nothing in
  // the source run was eventful (a diagnostic, an assumption, a fallback, a
  // fresh symbol): the span's nodes would find the same, so a decoder's N
  // identical layers are propagated once. Returns false, copying nothing,
  // otherwise. `first_node`: where this run of the propagation began.
  // NB: rules are functions of their bound values (the memo's premise) and
  // native ops of their inputs' values but for aten::Int of a tensor, so the
  // same nodes on the same values give the same facts.
  bool CopySpan(const ir::RepeatSpan& s, size_t first_node) {
    if (s.source_node < static_cast<int>(first_node)) return false;
    outside_.clear();
    if (!RepeatsSource(g_, s, &outside_)) return false;
    for (int k = 0; k < s.nodes; ++k) {
      if (eventful_[s.source_node + k]) return false;
    }
    for (const auto& [a, b] : outside_) {
      if (IdOf(a) != IdOf(b)) return false;
    }
    for (int k = 0; k < s.nodes; ++k) {
      const ir::Node& from = g_.nodes[s.source_node + k];
      const ir::Node& to = g_.nodes[s.node + k];
      NodeFacts& nf = facts_->nodes[s.node + k];
      nf = facts_->nodes[s.source_node + k];
      // A bound argument is one of the node's inputs (BindArgs): the same
      // position's.
      for (int& v : nf.arg_values) {
        if (v < 0) continue;
        size_t i = 0;
        while (i < from.inputs.size() && from.inputs[i] != v) ++i;
        v = i < from.inputs.size() ? to.inputs[i] : -1;
      }
      report_->nodes[s.node + k] = report_->nodes[s.source_node + k];
      for (size_t o = 0; o < from.outputs.size(); ++o) {
        AssignValue(facts_->values[from.outputs[o]],
                    &facts_->values[to.outputs[o]]);
        value_ids_[to.outputs[o]] = value_ids_[from.outputs[o]];
      }
    }
    facts_->copied_nodes += s.nodes;
    return true;
  }

  // Forgets the ids of `node`'s outputs, just written.
  void ForgetOutputIds(const ir::Node& node) {
    for (int vo : node.outputs) value_ids_[vo] = 0;
  }

  // The memo key of applying `op`'s rule to `args` (BindArgs' output): the
  // op's entry, then per argument a marker if not given, else its fact id if
  // it has one (an output copied from the memo), else its words.
  // NB: the three forms are told apart by their first word (AppendValue's is
  // below 64), so equal keys mean equal arguments; a fact written in two
  // forms only misses the memo. Constants and native ops' outputs are read
  // about once each, so interning them would cost more than their words.
  template <typename OpEntry>
  void MemoKeyOf(const OpEntry& op, const std::vector<const RValue*>& args,
                 const ir::InlineInts<6>& arg_values, MemoKey* key) {
    constexpr uint64_t kNotGiven = ~uint64_t{0}, kFactId = ~uint64_t{1};
    key->clear();
    key->push_back(Word(&op));
    for (size_t a = 0; a < args.size(); ++a) {
      const RValue* p = args[a];
      const int v = arg_values[a];
      if (p == nullptr) {
        key->push_back(kNotGiven);
      } else if (v >= 0 && p == &facts_->values[v] && value_ids_[v] != 0) {
        // NB: a training flag is bound to a constant, not to its input.
        key->push_back(kFactId);
        key->push_back(value_ids_[v]);
      } else {
        AppendValue(key, *p);
      }
    }
  }

  // The warning for a chosen attention backend no node read.
  std::string BackendUnread() const {
    return g_.source + ": attention backend '" + attention_backend_ +
           "' applies to no node: the graph has no "
           "scaled_dot_product_attention (attention built from "
           "matmul and softmax, as attn=eager or a torch 1.13 trace has it, is "
           "modelled op by op; "
           "flash_attn_func is flash-attn's kernel whatever the backend)";
  }

  std::string Where(size_t ni) const {
    return g_.source + ": " + g_.NodeLocation(static_cast<int>(ni));
  }

  bool AnyInputUnknown(const ir::Node& node) const {
    for (int vi : node.inputs) {
      if (facts_->values[vi].kind == RValue::Kind::kUnknown) return true;
    }
    return false;
  }

  void Error(size_t ni, const std::string& msg) {
    eventful_[ni] = 1;
    report_->diagnostics.push_back(
        {Diagnostic::Severity::kError, Where(ni) + ": " + msg});
  }

  // The example value of each symbol of the inputs, for the frontend's shape
  // inference: the traced dim where an input dim is a bare symbol and the
  // input has a traced shape, else kDefaultExample (within the symbol's range).
  void SetExamples(const std::vector<int>& tensor_inputs,
                   const AnalysisOptions& options) {
    constexpr int64_t kDefaultExample = 8;
    for (size_t i = 0; i < tensor_inputs.size(); ++i) {
      const ir::Value& v = g_.values[tensor_inputs[i]];
      const auto& shape = options.inputs[i].shape;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d].kind() == sym::Kind::kSymbol && v.has_traced_shape &&
            v.traced_shape.size() == shape.size() && v.traced_shape[d] > 0) {
          examples_.emplace(shape[d].ToString(), v.traced_shape[d]);
        }
      }
    }
    for (const auto& in : options.inputs) {
      for (const std::string& name : sym::FreeSymbols(in.shape)) {
        if (examples_.count(name)) continue;
        const sym::Interval r = ctx_.SymbolRange(ctx_.Symbol(name));
        examples_[name] = std::min(std::max(kDefaultExample, r.lo), r.hi);
      }
    }
  }

  // Outputs of a node without a usable rule take the shapes the frontend
  // infers, else the traced shapes, or stay unknown.
  void FallBack(size_t ni, const std::string& why) {
    const ir::Node& node = g_.nodes[ni];
    ForgetOutputIds(node);
    std::string shapes;
    std::string failure, note;
    bool inferred = false;
    // NB: only ops without a rule are inferred; ignored ops and nodes whose
    // rule failed keep the traced shapes (or stay unknown), as before.
    if (facts_->nodes[ni].no_rule && g_.infer_shapes && node.origin >= 0 &&
        !AnyInputUnknown(node)) {
      InferredShapes inf = InferFallbackShapes(g_, static_cast<int>(ni),
                                               facts_->values, examples_, ctx_);
      if (inf.ok) {
        inferred = true;
        note = inf.note;
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          const int vo = node.outputs[o];
          facts_->values[vo] = std::move(inf.outputs[o]);
          report_->values[vo].from_trace = true;
          if (facts_->values[vo].kind == RValue::Kind::kTensor) {
            shapes += (shapes.empty() ? "" : ", ") +
                      rules::ShapeToString(facts_->values[vo].t.shape);
          }
        }
        if (!inf.fitted.empty() && !why.empty()) {
          report_->assumptions.push_back(
              Where(ni) + ": " + why + "; its output shapes " + shapes +
              " are " + inf.fitted +
              " written in the symbols; assuming they hold for every value");
        }
      } else {
        failure = inf.why;
      }
    }
    bool traced = false;
    if (!inferred) {
      bool mapped = false;
      for (int vo : node.outputs) {
        if (UseTracedShape(g_.values[vo], &facts_->values[vo])) {
          traced = true;
          mapped = MapToSymbols(&facts_->values[vo].t.shape) || mapped;
          shapes += (shapes.empty() ? "" : ", ") +
                    rules::ShapeToString(facts_->values[vo].t.shape);
          report_->values[vo].from_trace = true;
        }
      }
      if (mapped && !why.empty()) {
        report_->assumptions.push_back(
            Where(ni) + ": " + why + "; in its traced output shapes " + shapes +
            ", dims equal to a symbol's traced example are taken as the "
            "symbol");
      }
    }
    // NB: a silent fallback that leaves the outputs as they are (an ignored
    // op of a built graph) is a function of the node alone, as a rule is.
    if (inferred || traced || !why.empty()) eventful_[ni] = 1;
    if (why.empty()) return;
    std::string msg = Where(ni) + ": " + why + "; ";
    if (shapes.empty()) {
      msg += "its outputs are unknown";
      if (!failure.empty()) msg += " (" + failure + ")";
    } else {
      msg += inferred
                 ? "outputs take the shapes LibTorch infers" +
                       (note.empty() ? "" : " (" + note + ")") + ": " + shapes
                 : "outputs take the traced shape " + shapes;
    }
    report_->diagnostics.push_back({Diagnostic::Severity::kWarning, msg});
  }

  // Writes dims of a traced shape that equal exactly one symbol's example as
  // that symbol; returns true if any was.
  bool MapToSymbols(sym::Shape* shape) {
    bool any = false;
    for (sym::Expr& d : *shape) {
      const std::optional<int64_t> c = d.AsConstant();
      if (!c) continue;
      const std::string* match = nullptr;
      int matches = 0;
      for (const auto& [name, e] : examples_) {
        if (e == *c) {
          match = &name;
          ++matches;
        }
      }
      if (matches == 1) {
        d = ctx_.Symbol(*match);
        any = true;
      }
    }
    return any;
  }

  const ir::Graph& g_;
  const RuleSet& rules_;
  sym::Context& ctx_;
  ShapeFacts* facts_;
  Report* report_;
  bool train_ = false;
  std::string device_ = "cuda";
  std::string attention_backend_ = "auto";
  std::string torch_version_ = "2";
  // Example values of the inputs' symbols (SetExamples).
  sym::Bindings examples_;
  // True once a rule evaluated attention_backend().
  bool backend_read_ = false;
  // Interned facts, and each value's id (0: not yet interned).
  FactIds fact_ids_;
  std::vector<uint32_t> value_ids_;
  // The output ids of the memo entry the current node used.
  std::vector<uint32_t>* entry_ = nullptr;
  // Per node: 1 if propagating it said or assumed something, fell back, or
  // minted a symbol (CopySpan does not copy such a node's run).
  std::vector<uint8_t> eventful_;
  // RepeatsSource's pairs for the span being copied.
  std::vector<std::pair<int, int>> outside_;
};

}  // namespace

const rules::Applied* NoApplied() {
  static const rules::Applied* const kNone = new rules::Applied();
  return kNone;
}

bool IsTrainingFlag(const std::string& arg_name) {
  return arg_name == "training" || arg_name == "train";
}

namespace {

// Propagates from value `first_value` and node `first_node` on (0, 0: all).
Status Propagate(const ir::Graph& graph, const RuleSet& rules,
                 sym::Context& ctx, const AnalysisOptions& options,
                 size_t first_value, size_t first_node, ShapeFacts* facts,
                 Report* report) {
  report->values.resize(first_value);
  report->values.resize(graph.values.size());
  report->nodes.resize(first_node);
  report->nodes.resize(graph.nodes.size());
  Propagator p(graph, rules, ctx, facts, report);
  TORCHCOST_RETURN_IF_ERROR(p.Init(options, first_value));
  p.Run(first_node);
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const RValue& v = facts->values[i];
    ValueInfo& info = report->values[i];
    if (v.kind == RValue::Kind::kTensor) {
      info.known = true;
      info.shape = v.t.shape;
      info.dtype = v.t.dtype;
    } else if (v.kind == RValue::Kind::kIntList) {
      info.known = true;
      info.shape = v.ints;
    } else if (v.kind == RValue::Kind::kInt) {
      info.known = true;
      info.shape.assign(1, v.i);
    } else {
      info.known = v.kind != RValue::Kind::kUnknown;
    }
  }
  return Status::Ok();
}

}  // namespace

Status PropagateShapes(const ir::Graph& graph, const RuleSet& rules,
                       sym::Context& ctx, const AnalysisOptions& options,
                       ShapeFacts* facts, Report* report) {
  *facts = ShapeFacts();
  report->unknown_ops.clear();
  return Propagate(graph, rules, ctx, options, 0, 0, facts, report);
}

Status ExtendShapes(const ir::Graph& grown, const RuleSet& rules,
                    sym::Context& ctx, const AnalysisOptions& options,
                    ShapeFacts* facts, Report* report) {
  const size_t first_value = facts->values.size();
  const size_t first_node = facts->nodes.size();
  if (first_value > grown.values.size() || first_node > grown.nodes.size() ||
      report->nodes.size() != first_node) {
    return Status::Internal(
        grown.source +
        ": ExtendShapes: the facts are not of a prefix of the graph");
  }
  return Propagate(grown, rules, ctx, options, first_value, first_node, facts,
                   report);
}

}  // namespace torchcost::passes
