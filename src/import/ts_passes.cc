#include "import/ts_passes.h"

#include <string>
#include <variant>

namespace torchcost::import::ts {
namespace {

// True if `v` is the constant number `x`.
bool IsConstNumber(const Program& p, int v, double x) {
  const Val& val = p.vals[v];
  if (val.src != Val::Src::kConst || !val.has_constant ||
      val.is_tensor_constant)
    return false;
  if (const int64_t* i = std::get_if<int64_t>(&val.constant))
    return static_cast<double>(*i) == x;
  if (const double* d = std::get_if<double>(&val.constant)) return *d == x;
  return false;
}

// NB: the other rewrites of LibTorch's peephole pass that traced code could
// meet are declined: a concatenation of a concatenation (CombineConcats), x *
// 1, x / 1, x + 0, x - 0 on scalars.
Status DeclineOtherPeepholes(const Program& p, const Nd& n) {
  if (n.op == "aten::cat" && !n.inputs.empty() &&
      p.vals[n.inputs[0]].src == Val::Src::kNode) {
    const Nd& list = p.nodes[p.vals[n.inputs[0]].producer];
    for (int item : list.inputs) {
      const Val& v = p.vals[item];
      if (v.src == Val::Src::kNode && p.nodes[v.producer].op == "aten::cat")
        return Decline("a concatenation of a concatenation");
    }
  }
  const bool mul =
      n.op == "aten::mul" || n.op == "aten::div" || n.op == "aten::floordiv";
  const bool add = n.op == "aten::add" || n.op == "aten::sub";
  if ((mul || add) && n.overload != "Tensor" && n.inputs.size() >= 2) {
    for (size_t k = 0; k < 2; ++k) {
      if (IsConstNumber(p, n.inputs[k], mul ? 1 : 0))
        return Decline(n.op + "." + n.overload + " by an identity");
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<int> UsesOf(const Program& p, int v, int after) {
  std::vector<int> out;
  for (size_t i = static_cast<size_t>(after + 1); i < p.nodes.size(); ++i) {
    if (p.nodes[i].dead) continue;
    for (int in : p.nodes[i].inputs) {
      if (in == v) {
        out.push_back(static_cast<int>(i));
        break;
      }
    }
  }
  return out;
}

void ReplaceUses(Program* p, int from, int to) {
  for (Nd& n : p->nodes) {
    for (int& in : n.inputs) {
      if (in == from) in = to;
    }
  }
  if (p->output == from) p->output = to;
}

Status Peephole(Program* p) {
  for (Nd& n : p->nodes) {
    if (n.dead || n.calls.empty()) continue;
    TORCHCOST_RETURN_IF_ERROR(DeclineOtherPeepholes(*p, n));
    const bool to_num = n.op == "aten::Int" || n.op == "aten::ScalarImplicit" ||
                        n.op == "aten::IntImplicit";
    if (!to_num && n.op != "aten::Float" && n.op != "aten::FloatImplicit")
      continue;
    const Val& in = p->vals[n.inputs[0]];
    if (in.src != Val::Src::kNode ||
        p->nodes[in.producer].op != "prim::NumToTensor")
      continue;
    const Nd& ntt = p->nodes[in.producer];
    // Not inside one inlined method.
    if (ntt.calls.empty() || ntt.calls[0] != n.calls[0]) continue;
    if (!to_num) return Decline("float(NumToTensor(x)) in an inlined method");
    ReplaceUses(p, n.outputs[0], ntt.inputs[0]);
    n.dead = true;
  }
  return Status::Ok();
}

Status FoldConstants(const Program& p) {
  for (const Nd& n : p.nodes) {
    if (n.dead || n.inputs.empty()) continue;
    bool all_const = true;
    for (int in : n.inputs) all_const &= p.vals[in].src == Val::Src::kConst;
    if (!all_const) continue;
    bool mutable_out = false;
    for (int out : n.outputs) {
      const std::string& t = p.vals[out].type;
      mutable_out |=
          t.find("Tensor") != std::string::npos || t.rfind("List", 0) == 0;
    }
    if (!mutable_out) return Decline(n.op + " of constants");
  }
  return Status::Ok();
}

Status EliminateDeadCode(Program* p) {
  for (size_t i = p->nodes.size(); i-- > 0;) {
    Nd& n = p->nodes[i];
    if (n.dead) continue;
    bool used = false;
    for (int out : n.outputs)
      used |= out == p->output || !UsesOf(*p, out, static_cast<int>(i)).empty();
    if (used) continue;
    const std::string bare = n.op.substr(n.op.find("::") + 2);
    if (!bare.empty() && bare.back() == '_') {
      // NB: an in-place op on a module's tensor (train-mode batch norm's
      // num_batches_tracked.add_(1)) writes to what the module holds, and
      // LibTorch keeps it; elsewhere its effect depends on aliasing.
      if (!n.inputs.empty() &&
          p->vals[n.inputs[0]].src == Val::Src::kTensorAttr)
        continue;
      return Decline("an unused in-place " + n.op);
    }
    n.dead = true;
  }
  return Status::Ok();
}

}  // namespace torchcost::import::ts
