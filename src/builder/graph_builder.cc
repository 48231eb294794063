// GraphBuilder: tables, inputs, scopes, constants and generic nodes.
#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>
#include <utility>

#include "torchcost/builder.h"

namespace torchcost::builder {

std::vector<sym::Expr> ResolveShape(const BuiltModel& model,
                                    const InputDecl& input, sym::Context& ctx) {
  std::vector<sym::Expr> shape;
  for (const Dim& d : input.shape) {
    if (!d.is_symbol()) {
      shape.push_back(sym::Expr(d.size()));
      continue;
    }
    const std::string& name0 = d.symbol();
    if (name0.find_first_of("+-*(") != std::string::npos) {
      // An expression of symbols ("S+T-2", a generation step's cache length).
      Result<sym::Expr> e = sym::Parse(ctx, name0);
      shape.push_back(e.ok() ? *e : ctx.Symbol(name0));
      continue;
    }
    sym::Interval range{1, sym::kPosInf};
    for (const auto& [name, bound] : model.symbol_bounds) {
      if (name == d.symbol()) range.hi = bound;
    }
    shape.push_back(ctx.Symbol(d.symbol(), range));
  }
  return shape;
}

GraphBuilder::GraphBuilder(const std::string& model_type,
                           const std::string& source) {
  g_.source = source;
  g_.GetOrAddScope("", model_type);
  scope_stack_.push_back(0);
}

Ref GraphBuilder::Input(const std::string& name, std::vector<Dim> shape,
                        DType dtype) {
  if (recording_ != nullptr)
    throw std::logic_error("GraphBuilder::Input while recording");
  ir::Value v;
  v.name = name;
  v.kind = ir::ValueKind::kTensor;
  v.role = ir::ValueRole::kInput;
  v.dtype = dtype;
  v.table_index = static_cast<int>(g_.inputs.size());
  const int id = g_.AddValue(std::move(v));
  g_.inputs.push_back(id);
  model_.inputs.push_back(InputDecl{name, std::move(shape), dtype});
  return Ref{id};
}

namespace {

// Adds a table entry and the value that reads it.
int AddTensor(ir::Graph& g, std::vector<ir::TensorEntry>& table,
              ir::ValueRole role, std::string name, std::vector<int64_t> shape,
              DType dtype, bool requires_grad, bool recording) {
  if (recording)
    throw std::logic_error(
        "GraphBuilder: a parameter or buffer while recording");
  ir::Value v;
  v.name = name;
  v.kind = ir::ValueKind::kTensor;
  v.role = role;
  v.table_index = static_cast<int>(table.size());
  v.has_traced_shape = true;
  v.traced_shape = shape;
  v.dtype = dtype;
  ir::TensorEntry e;
  e.name = std::move(name);
  e.shape = std::move(shape);
  e.dtype = dtype;
  e.requires_grad = requires_grad;
  e.value = g.AddValue(std::move(v));
  table.push_back(std::move(e));
  return table.back().value;
}

}  // namespace

Ref GraphBuilder::Param(std::string name, std::vector<int64_t> shape,
                        DType dtype, bool requires_grad) {
  return Ref{AddTensor(g_, g_.params, ir::ValueRole::kParam, std::move(name),
                       std::move(shape), dtype, requires_grad,
                       recording_ != nullptr)};
}

Ref GraphBuilder::Buffer(std::string name, std::vector<int64_t> shape,
                         DType dtype) {
  return Ref{AddTensor(g_, g_.buffers, ir::ValueRole::kBuffer, std::move(name),
                       std::move(shape), dtype, false, recording_ != nullptr)};
}

void GraphBuilder::Alias(Ref param, const std::string& alias) {
  const ir::Value& v = g_.values.at(param.id);
  auto& table = v.role == ir::ValueRole::kParam ? g_.params : g_.buffers;
  table.at(v.table_index).aliases.push_back(alias);
}

void GraphBuilder::BoundSymbol(const std::string& symbol, int64_t bound) {
  model_.symbol_bounds.emplace_back(symbol, bound);
}

void GraphBuilder::Push(const std::string& name, const std::string& type) {
  scope_stack_.push_back(
      g_.GetOrAddChildScope(scope_stack_.back(), Qualify(name), type));
  if (recording_ != nullptr) {
    const std::string& base = g_.scopes[recording_->base_scope].path;
    const std::string& child = g_.scopes[scope_stack_.back()].path;
    recording_->scopes.emplace_back(
        scope_stack_.back(),
        base.empty() ? child : child.substr(base.size() + 1));
  }
}

void GraphBuilder::Pop() {
  if (scope_stack_.size() <= 1)
    throw std::logic_error("GraphBuilder::Pop at the root module");
  scope_stack_.pop_back();
}

void GraphBuilder::RouteTokens(int64_t top_k) {
  g_.scopes[scope_stack_.back()].routed_top_k = top_k;
}

const std::string& GraphBuilder::path() const {
  return g_.scopes[scope_stack_.back()].path;
}

std::string GraphBuilder::Qualify(const std::string& name) const {
  const std::string& p = path();
  if (p.empty()) return name;
  // NB: one allocation, where path() + "." + name made two.
  std::string q;
  q.reserve(p.size() + 1 + name.size());
  q.append(p).append(1, '.').append(name);
  return q;
}

int GraphBuilder::Constant(ir::ValueKind kind, ir::Constant c,
                           ir::ValueKind elem_kind) {
  ir::Value v;
  v.kind = kind;
  v.elem_kind = elem_kind;
  v.role = ir::ValueRole::kConstant;
  v.has_constant = true;
  v.constant = std::move(c);
  v.name = "c" + std::to_string(g_.values.size());
  return g_.AddValue(std::move(v));
}

Ref GraphBuilder::Int(int64_t v) {
  return Ref{Constant(ir::ValueKind::kInt, v)};
}

Ref GraphBuilder::ScalarTensor(double v, DType dtype) {
  const int id = Constant(ir::ValueKind::kTensor, v);
  g_.values[id].has_traced_shape = true;
  g_.values[id].dtype = dtype;
  return Ref{id};
}

Ref GraphBuilder::ScalarTensorInt(int64_t v) {
  const int id = Constant(ir::ValueKind::kTensor, v);
  g_.values[id].has_traced_shape = true;
  g_.values[id].dtype = DType::kInt64;
  return Ref{id};
}

int GraphBuilder::Resolve(const Arg& a) {
  switch (a.kind()) {
    case Arg::Kind::kValue:
      if (a.value().id < 0 ||
          a.value().id >= static_cast<int>(g_.values.size()))
        throw std::logic_error("GraphBuilder: argument refers to no value");
      return a.value().id;
    case Arg::Kind::kInt:
      return Constant(ir::ValueKind::kInt, a.i());
    case Arg::Kind::kFloat:
      return Constant(ir::ValueKind::kFloat, a.f());
    case Arg::Kind::kBool:
      return Constant(ir::ValueKind::kBool, a.b());
    case Arg::Kind::kString:
      return Constant(ir::ValueKind::kString, a.s());
    case Arg::Kind::kNone:
      return Constant(ir::ValueKind::kNone, std::monostate());
    case Arg::Kind::kDevice:
      return Constant(ir::ValueKind::kDevice, a.s());
    case Arg::Kind::kInts:
      return Constant(ir::ValueKind::kList, a.ints(), ir::ValueKind::kInt);
  }
  return -1;
}

std::vector<Ref> GraphBuilder::Op(const std::string& op,
                                  const std::string& overload,
                                  std::vector<NamedArg> args, int num_outputs,
                                  ir::ValueKind out_kind) {
  ir::Node n;
  n.op = op;
  n.overload = overload;
  n.scope = scope_stack_.back();
  bool named = true;
  for (const NamedArg& a : args) named = named && !a.name.empty();
  n.inputs.reserve(args.size());
  for (NamedArg& a : args) n.inputs.push_back(Resolve(a.arg));
  if (named) {
    n.input_names = names_.Intern(
        args, [](const NamedArg& a) -> const std::string& { return a.name; });
  }
  std::vector<Ref> outs;
  outs.reserve(num_outputs);
  n.outputs.reserve(num_outputs);
  for (int i = 0; i < num_outputs; ++i) {
    ir::Value v;
    v.kind = out_kind;
    if (out_kind == ir::ValueKind::kList) v.elem_kind = ir::ValueKind::kTensor;
    v.name = "v" + std::to_string(g_.values.size());
    n.outputs.push_back(g_.AddValue(std::move(v)));
    outs.push_back(Ref{n.outputs.back()});
  }
  n.debug_name = outs.empty() ? "%" + std::to_string(g_.nodes.size())
                              : "%" + g_.values[outs[0].id].name;
  g_.AddNode(std::move(n));
  return outs;
}

Ref GraphBuilder::Op1(const std::string& op, const std::string& overload,
                      std::vector<NamedArg> args) {
  return Op(op, overload, std::move(args))[0];
}

void GraphBuilder::Output(Ref v) {
  if (recording_ != nullptr)
    throw std::logic_error("GraphBuilder::Output while recording");
  g_.outputs.push_back(v.id);
}

BuiltModel GraphBuilder::Finish() {
  BuiltModel out = std::move(model_);
  model_ = BuiltModel();
  scope_stack_.assign(1, 0);
  return out;
}

Ref GraphBuilder::Size(Ref x, int64_t dim) {
  return Op("aten::size", "int", {{"self", x}, {"dim", dim}}, 1,
            ir::ValueKind::kInt)[0];
}

Ref GraphBuilder::IntList(std::vector<IntItem> items) {
  std::vector<NamedArg> args;
  for (const IntItem& it : items)
    args.push_back({"", it.is_value() ? Arg(it.value()) : Arg(it.constant())});
  Ref out = Op("prim::ListConstruct", "", std::move(args), 1,
               ir::ValueKind::kList)[0];
  g_.values[out.id].elem_kind = ir::ValueKind::kInt;
  return out;
}

Ref GraphBuilder::ConstList(const std::vector<int64_t>& l) {
  std::vector<IntItem> items(l.begin(), l.end());
  return IntList(std::move(items));
}

Ref GraphBuilder::TensorList(std::vector<Ref> items) {
  std::vector<NamedArg> args;
  for (Ref r : items) args.push_back({"", r});
  return Op("prim::ListConstruct", "", std::move(args), 1,
            ir::ValueKind::kList)[0];
}

std::vector<Ref> GraphBuilder::Unpack(Ref list, int n) {
  return Op("prim::ListUnpack", "", {{"", list}}, n);
}

Ref GraphBuilder::NumToTensor(Ref i) {
  return Op1("prim::NumToTensor", "Scalar", {{"a", i}});
}

Ref GraphBuilder::IntOf(Ref t) {
  return Op("aten::Int", "Tensor", {{"a", t}}, 1, ir::ValueKind::kInt)[0];
}

Ref GraphBuilder::ScalarOf(Ref t) {
  return Op("aten::ScalarImplicit", "", {{"a", t}}, 1,
            ir::ValueKind::kOther)[0];
}

void GraphBuilder::StartRecording() {
  if (recording_ != nullptr)
    throw std::logic_error("GraphBuilder::StartRecording while recording");
  pending_ = Recording();
  pending_.first_value = static_cast<int>(g_.values.size());
  pending_.first_node = static_cast<int>(g_.nodes.size());
  pending_.base_scope = scope_stack_.back();
  recording_ = &pending_;
}

GraphBuilder::Recording GraphBuilder::StopRecording() {
  if (recording_ == nullptr)
    throw std::logic_error(
        "GraphBuilder::StopRecording without StartRecording");
  if (scope_stack_.back() != pending_.base_scope)
    throw std::logic_error(
        "GraphBuilder::StopRecording in another module than StartRecording's");
  recording_ = nullptr;
  pending_.end_value = static_cast<int>(g_.values.size());
  pending_.end_node = static_cast<int>(g_.nodes.size());
  return std::move(pending_);
}

namespace {

// Sets `s`'s length to `n`, keeping its first characters.
// NB: grows by push_back, which is inline while the capacity holds (a short
// name's 15 characters), where resize calls out of line to a general replace:
// the names of a replayed layer grow by a digit at every tenfold of the index.
void SetLength(std::string& s, size_t n) {
  while (s.size() < n) s.push_back('0');
  if (s.size() > n) s.resize(n);
}

// Renames `name` from `prefix` + from to `prefix` + to when it is one of the
// names Op and Constant give ("v17", "c17"); other names are kept.
// NB: this runs once per value of every replayed layer, so `from` is read off
// the name's digits and `to` written from a stack buffer, not via
// std::to_string.
void Renumber(std::string& name, int from, int to) {
  if (name.size() < 2 || (name[0] != 'v' && name[0] != 'c')) return;
  // The digits of a non-negative int without leading zeros: 1 to 10 of them.
  if (name.size() > 11 || (name[1] == '0' && name.size() > 2)) return;
  int64_t n = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return;
    n = n * 10 + (name[i] - '0');
  }
  if (n != from) return;
  char digits[16];
  const auto end = std::to_chars(digits, digits + sizeof digits, to).ptr;
  const size_t len = static_cast<size_t>(end - digits);
  // NB: written over the old digits in place (cheaper than replace).
  SetLength(name, len + 1);
  std::copy(digits, end, name.begin() + 1);
}

// Grows `v` to hold `more` elements beyond its size, at least doubling, so a
// run of replays reallocates as often as push_back would.
template <typename T>
void Grow(std::vector<T>& v, size_t more) {
  if (v.size() + more > v.capacity())
    v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

}  // namespace

void GraphBuilder::Reserve(int values, int nodes) {
  g_.values.reserve(g_.values.size() + static_cast<size_t>(values));
  g_.nodes.reserve(g_.nodes.size() + static_cast<size_t>(nodes));
}

std::vector<int> GraphBuilder::Replay(
    const Recording& r, const std::vector<std::pair<int, int>>& inputs) {
  if (recording_ != nullptr)
    throw std::logic_error("GraphBuilder::Replay while recording");
  // Modules: r's base is the current module; the others are entered again, in
  // order, at their paths below it (as Push would). scope_image[s] is recorded
  // module s's image (-1: not recorded).
  int max_scope = r.base_scope;
  for (const auto& entered : r.scopes)
    max_scope = std::max(max_scope, entered.first);
  std::vector<int> scope_image(static_cast<size_t>(max_scope) + 1, -1);
  scope_image[r.base_scope] = scope_stack_.back();
  for (const auto& entered : r.scopes) {
    // NB: a copy: GetOrAddScope may move the scopes.
    const std::string type = g_.scopes[entered.first].type;
    const int image = g_.GetOrAddChildScope(scope_stack_.back(),
                                            Qualify(entered.second), type);
    // NB: the first image of a module wins (the base's is the current one).
    if (scope_image[entered.first] < 0) scope_image[entered.first] = image;
    if (g_.scopes[image].routed_top_k == 0)
      g_.scopes[image].routed_top_k = g_.scopes[entered.first].routed_top_k;
  }
  // r's value v becomes v + shift, as its nodes are appended in order; an
  // outside value v < r.first_value reads input_image[v] (-1: itself).
  const int shift = static_cast<int>(g_.values.size()) - r.first_value;
  const int node_shift = static_cast<int>(g_.nodes.size()) - r.first_node;
  std::vector<int> input_image(static_cast<size_t>(r.first_value), -1);
  for (const auto& [from, to] : inputs) {
    // NB: the first pair for a value wins; values r made are never mapped.
    if (from >= 0 && from < r.first_value && input_image[from] < 0)
      input_image[from] = to;
  }
  auto map = [&](int v) {
    if (v >= r.first_value && v < r.end_value) return v + shift;
    if (v >= 0 && v < r.first_value && input_image[v] >= 0)
      return input_image[v];
    return v;
  };
  Grow(g_.values, static_cast<size_t>(r.end_value - r.first_value));
  Grow(g_.nodes, static_cast<size_t>(r.end_node - r.first_node));
  // NB: with the capacity reserved, push_back of an element of the same vector
  // copies it in place.
  std::vector<int> ids(r.end_value - r.first_value);
  for (int v = r.first_value; v < r.end_value; ++v) {
    const ir::Value& original = g_.values[v];
    if (original.role != ir::ValueRole::kIntermediate &&
        original.role != ir::ValueRole::kConstant)
      throw std::logic_error(
          "GraphBuilder::Replay: a recorded value is an input, parameter or "
          "buffer");
    g_.values.push_back(original);
    ir::Value& copy = g_.values.back();
    Renumber(copy.name, v, v + shift);
    if (copy.producer >= 0) copy.producer += node_shift;
    ids[v - r.first_value] = static_cast<int>(g_.values.size()) - 1;
  }
  char digits[16];
  for (int i = r.first_node; i < r.end_node; ++i) {
    const int scope = g_.nodes[i].scope;
    if (scope < 0 || scope > max_scope || scope_image[scope] < 0)
      throw std::logic_error(
          "GraphBuilder::Replay: a node outside the recorded modules");
    const int index = static_cast<int>(g_.nodes.size());
    g_.nodes.push_back(g_.nodes[i]);
    ir::Node& n = g_.nodes.back();
    for (int& in : n.inputs) in = map(in);
    for (int& out : n.outputs) {
      out = map(out);
      // As AddNode does.
      if (out >= 0 && out < static_cast<int>(g_.values.size()))
        g_.values[out].producer = index;
    }
    n.scope = scope_image[scope];
    // As Op names them: after the first output, else after the node's index.
    // NB: written over the recorded node's in place.
    const std::string* first =
        n.outputs.empty() ? nullptr : &g_.values[n.outputs[0]].name;
    const char* begin = digits;
    const char* end = digits;
    if (first != nullptr) {
      begin = first->data();
      end = begin + first->size();
    } else {
      end = std::to_chars(digits, digits + sizeof digits, index).ptr;
    }
    const size_t len = static_cast<size_t>(end - begin);
    SetLength(n.debug_name, len + 1);
    n.debug_name[0] = '%';
    std::copy(begin, end, n.debug_name.begin() + 1);
  }
  g_.repeats.push_back({r.first_node, r.first_node + node_shift,
                        r.end_node - r.first_node, r.first_value,
                        r.end_value - r.first_value, shift});
  return ids;
}

}  // namespace torchcost::builder
