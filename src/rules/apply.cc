#include "rules/apply.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace torchcost::rules {
namespace {

// Per-application state: slot values and where they live.
class Application : public ImplContext {
 public:
  Application(const OpRule& rule, const Variant& v, sym::Context& ctx,
              Applied* out, RuleSettings settings)
      : rule_(rule),
        v_(v),
        ctx_(ctx),
        out_(out),
        slots_(v.slot_names.size(), nullptr),
        storage_(v.slot_names.size()),
        settings_(settings) {}
  // Hands the assumptions made to `out`, in order (an application that throws
  // or whose case does not hold too).
  ~Application() override {
    for (std::string& a : assumptions_)
      out_->assumptions.push_back(std::move(a));
  }

  // ImplContext.
  const RValue& Arg(std::string_view name) const override {
    int i = rule_.schema.FindArg(name);
    if (i < 0 || slots_[i] == nullptr) return unknown_;
    return *slots_[i];
  }
  sym::Context& ctx() const override { return ctx_; }
  Status RequireEq(const sym::Expr& a, const sym::Expr& b,
                   std::string_view what) override {
    sym::Truth t = ctx_.ProveEq(a, b);
    if (t == sym::Truth::kFalse)
      return Status::InvalidArgument(std::string(what) + "; got " +
                                     a.ToString() + " vs " + b.ToString());
    if (t == sym::Truth::kUnknown)
      assumptions_.push_back(std::string(what) + " (" + a.ToString() +
                             " == " + b.ToString() + ")");
    return Status::Ok();
  }
  Status RequireLe(const sym::Expr& a, const sym::Expr& b,
                   std::string_view what) override {
    sym::Truth t = ctx_.ProveLe(a, b);
    if (t == sym::Truth::kFalse)
      return Status::InvalidArgument(std::string(what) + "; got " +
                                     a.ToString() + " vs " + b.ToString());
    if (t == sym::Truth::kUnknown)
      assumptions_.push_back(std::string(what) + " (" + a.ToString() +
                             " <= " + b.ToString() + ")");
    return Status::Ok();
  }

  // Binds the arguments, applying schema defaults and "int[N]" expansion.
  void BindArgs(const std::vector<const RValue*>& args) {
    const auto& sargs = rule_.schema.args;
    for (size_t i = 0; i < sargs.size(); ++i) {
      const RValue* v = i < args.size() ? args[i] : nullptr;
      const SchemaArg& a = sargs[i];
      if (v == nullptr) {
        if (a.has_default) {
          v = &a.default_value;
        } else if (a.type.optional) {
          storage_[i] = RValue::None();
          v = &storage_[i];
        } else {
          throw RuleError("missing argument '" + a.name + "'");
        }
      }
      if (a.type.is_list && a.type.list_size > 1 &&
          a.type.base == ArgType::Base::kInt) {
        if (v->kind == RValue::Kind::kInt) {
          storage_[i] = RValue::IntList(sym::Shape(a.type.list_size, v->i));
          v = &storage_[i];
        } else if (v->kind == RValue::Kind::kIntList && v->ints.size() == 1) {
          storage_[i] =
              RValue::IntList(sym::Shape(a.type.list_size, v->ints[0]));
          v = &storage_[i];
        }
      }
      slots_[i] = v;
    }
  }

  bool WhenHolds() {
    if (!v_.when.present()) return true;
    sym::Truth t = TruthAt(v_.when);
    if (t == sym::Truth::kUnknown)
      throw RuleError("case condition '" + v_.when.text +
                      "' cannot be decided for these arguments");
    return t == sym::Truth::kTrue;
  }

  void Run() {
    for (const auto& [slot, e] : v_.binds) Set(slot, EvalAt(e));
    for (const auto& p : v_.matches) Match(p);
    for (const auto& r : v_.requires_) Require(r);
    if (v_.impl) RunImpl();
    for (const auto& [slot, e] : v_.lets) Set(slot, EvalAt(e));
    ComputeOutputs();
    for (size_t i = 0; i < v_.temporaries.size(); ++i) {
      const auto& t = v_.temporaries[i];
      RValue shape = EvalAt(t.shape);
      if (shape.kind != RValue::Kind::kIntList)
        throw RuleError("temporary '" + t.name + "' shape is not a list");
      TensorType tt;
      tt.shape = std::move(shape.ints);
      tt.dtype = ChooseDType(t.dtype);
      out_->temporaries.push_back(tt);
      Set(t.slot, RValue::Tensor(std::move(tt)));
    }
    out_->macs = Cost(v_.macs);
    out_->flops = Cost(v_.flops_fwd);
    out_->transcendentals = Cost(v_.trans_fwd);
    out_->workspace_fwd = Cost(v_.workspace_fwd);
    for (const auto& g : v_.workspace_bwd)
      out_->workspace_bwd.push_back({g.arg, Cost(g.expr)});
    for (const auto& g : v_.flops_bwd)
      out_->bwd_flops.push_back({g.arg, Cost(g.expr)});
    for (const auto& g : v_.trans_bwd)
      out_->bwd_transcendentals.push_back({g.arg, Cost(g.expr)});
    out_->has_bytes_fwd = v_.bytes_fwd.present();
    if (out_->has_bytes_fwd) out_->bytes_fwd = Cost(v_.bytes_fwd);
    out_->has_bytes_bwd = !v_.bytes_bwd.empty();
    for (const auto& g : v_.bytes_bwd)
      out_->bytes_bwd.push_back({g.arg, Cost(g.expr)});
    if (!v_.collectives.empty()) {
      AppliedCollectives applied{Cost(v_.collective_group), {}};
      for (const CollectiveSpec& c : v_.collectives)
        applied.calls.push_back({c.arg, {c.kind, Cost(c.payload)}});
      out_->collectives.push_back(std::move(applied));
    }
  }

 private:
  Evaluator Eval() const {
    return Evaluator(v_.pool, slots_, ctx_, &assumptions_, settings_,
                     &out_->read_attention_backend);
  }

  // Evaluates `e`; an error names the expression and where it stands in the
  // rule file (line and column of the failing part).
  RValue EvalAt(const SourceExpr& e) const {
    try {
      return Eval().Eval(e.root);
    } catch (const RuleError& err) {
      throw Located(e, err);
    }
  }

  // As EvalAt, for a condition.
  sym::Truth TruthAt(const SourceExpr& e) const {
    try {
      return Eval().EvalTruth(e.root);
    } catch (const RuleError& err) {
      throw Located(e, err);
    }
  }

  // `err`, raised evaluating `e`, prefixed with e's place and text.
  static RuleError Located(const SourceExpr& e, const RuleError& err) {
    std::string where;
    if (e.line > 0) {
      // NB: err.col counts from the expression's first character (0-based).
      where = "line " + std::to_string(e.line) + ", column " +
              std::to_string(e.col + std::max(err.col, 0)) + ", ";
    }
    return RuleError(where + "in '" + e.text + "': " + err.what());
  }

  void Set(int slot, RValue v) {
    storage_[slot] = std::move(v);
    slots_[slot] = &storage_[slot];
  }

  sym::Expr Cost(const SourceExpr& e) {
    if (!e.present()) return sym::Expr(0);
    RValue v = EvalAt(e);
    if (v.kind != RValue::Kind::kInt)
      throw RuleError("cost '" + e.text + "' is not an integer");
    return v.i;
  }

  void Match(const TensorPattern& p) {
    const RValue* v = slots_[p.arg];
    const std::string& name = rule_.schema.args[p.arg].name;
    if (v->kind == RValue::Kind::kNone) {
      if (rule_.schema.args[p.arg].type.optional) return;
      throw RuleError("argument '" + name + "' is None but must be a tensor");
    }
    if (v->kind != RValue::Kind::kTensor)
      throw RuleError("argument '" + name + "' is not a tensor");
    const auto& shape = v->t.shape;
    // Lengths: fixed items count 1, check-runs their evaluated length, the
    // unbound run the rest.
    std::vector<RValue> run_values(p.items.size());
    int64_t fixed = 0;
    bool has_run = false;
    for (size_t i = 0; i < p.items.size(); ++i) {
      const auto& it = p.items[i];
      if (it.kind == PatternItem::Kind::kBindRun) {
        has_run = true;
      } else if (it.kind == PatternItem::Kind::kCheckRun) {
        run_values[i] = EvalAt(it.expr);
        if (run_values[i].kind != RValue::Kind::kIntList)
          throw RuleError("'*" + it.expr.text + "' is not a list");
        fixed += static_cast<int64_t>(run_values[i].ints.size());
      } else {
        fixed += 1;
      }
    }
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (has_run ? rank < fixed : rank != fixed) {
      throw RuleError("argument '" + name + "' has shape " +
                      ShapeToString(shape) + " (rank " + std::to_string(rank) +
                      ") but the pattern [" + p.text + "] needs rank " +
                      (has_run ? ">= " : "") + std::to_string(fixed));
    }
    const int64_t run_len = rank - fixed;
    size_t pos = 0;
    for (size_t i = 0; i < p.items.size(); ++i) {
      const auto& it = p.items[i];
      switch (it.kind) {
        case PatternItem::Kind::kWildcard:
          ++pos;
          break;
        case PatternItem::Kind::kBindDim:
          Set(it.slot, RValue::Int(shape[pos++]));
          break;
        case PatternItem::Kind::kBindRun:
          Set(it.slot,
              RValue::IntList(sym::Shape(shape.begin() + pos,
                                         shape.begin() + pos + run_len)));
          pos += run_len;
          break;
        case PatternItem::Kind::kCheckDim: {
          RValue want = EvalAt(it.expr);
          if (want.kind != RValue::Kind::kInt)
            throw RuleError("pattern item '" + it.expr.text +
                            "' is not an int");
          CheckDim(name, pos, shape[pos], want.i, it.expr.text);
          ++pos;
          break;
        }
        case PatternItem::Kind::kCheckRun:
          for (const auto& w : run_values[i].ints) {
            CheckDim(name, pos, shape[pos], w, "*" + it.expr.text);
            ++pos;
          }
          break;
      }
    }
  }

  void CheckDim(const std::string& arg, size_t pos, const sym::Expr& got,
                const sym::Expr& want, const std::string& what) {
    sym::Truth t = ctx_.ProveEq(got, want);
    if (t == sym::Truth::kFalse) {
      throw RuleError("argument '" + arg + "' dim " + std::to_string(pos) +
                      " must equal " + what + "; got " + got.ToString() +
                      " vs " + want.ToString());
    }
    if (t == sym::Truth::kUnknown) {
      assumptions_.push_back("argument '" + arg + "' dim " +
                             std::to_string(pos) + " == " + what + " (" +
                             got.ToString() + " == " + want.ToString() + ")");
    }
  }

  void Require(const SourceExpr& r) {
    sym::Truth t = TruthAt(r);
    if (t == sym::Truth::kTrue) return;
    std::string detail;
    const AstNode& n = v_.pool.nodes[r.root];
    if (n.kids.size() == 2 && n.op >= AstNode::Op::kEq &&
        n.op <= AstNode::Op::kGe) {
      detail = "; got " + DescribeValue(Eval().Eval(n.kids[0])) + " vs " +
               DescribeValue(Eval().Eval(n.kids[1]));
    }
    if (t == sym::Truth::kFalse)
      throw RuleError("requirement '" + r.text + "' does not hold" + detail);
    assumptions_.push_back(
        "'" + r.text + "'" +
        (detail.empty() ? "" : " (" + detail.substr(2) + ")"));
  }

  void RunImpl() {
    std::vector<RValue> outs;
    Status s = v_.impl(*this, &outs);
    if (!s.ok()) throw RuleError(s.message());
    if (outs.size() != v_.output_slots.size()) {
      throw RuleError("impl '" + v_.impl_name + "' produced " +
                      std::to_string(outs.size()) + " outputs, expected " +
                      std::to_string(v_.output_slots.size()));
    }
    for (size_t i = 0; i < outs.size(); ++i)
      Set(v_.output_slots[i], std::move(outs[i]));
  }

  DType DefaultDType() {
    if (default_dtype_ != DType::kUnknown) return default_dtype_;
    DType dimmed = DType::kUnknown, zero_dim = DType::kUnknown;
    for (size_t i = 0; i < rule_.schema.args.size(); ++i) {
      const RValue* v = slots_[i];
      if (v == nullptr) continue;
      auto fold = [&](const TensorType& t) {
        if (t.dtype == DType::kUnknown) return;
        DType& acc = t.shape.empty() ? zero_dim : dimmed;
        acc = acc == DType::kUnknown ? t.dtype : PromoteTypes(acc, t.dtype);
      };
      if (v->kind == RValue::Kind::kTensor) fold(v->t);
      if (v->kind == RValue::Kind::kTensorList)
        for (const auto& t : v->tensors) fold(t);
    }
    // NB: PyTorch promotes dimensioned tensors first; a 0-dim tensor only
    // raises the category (an int tensor times a 0-dim float is float32).
    DType d = dimmed;
    if (d == DType::kUnknown)
      d = zero_dim;
    else if (zero_dim != DType::kUnknown && !IsFloatingPoint(d) &&
             IsFloatingPoint(zero_dim))
      d = DType::kFloat32;
    default_dtype_ = d;
    return d;
  }

  DType ChooseDType(const DTypeSpec& spec) {
    switch (spec.kind) {
      case DTypeSpec::Kind::kDefault:
        return DefaultDType();
      case DTypeSpec::Kind::kFixed:
        return spec.fixed;
      case DTypeSpec::Kind::kSameAs: {
        const RValue* v = slots_[spec.slot];
        if (v && v->kind == RValue::Kind::kTensor) return v->t.dtype;
        return DefaultDType();
      }
      case DTypeSpec::Kind::kAcc: {
        // NB: CUDA kernels accumulate half and bfloat16 in float32; PyTorch
        // 1.13's CPU norm kernels keep their statistics in the input's dtype.
        const RValue* v = slots_[spec.slot];
        const DType d = v && v->kind == RValue::Kind::kTensor ? v->t.dtype
                                                              : DType::kFloat32;
        if (settings_.device == "cuda" &&
            (d == DType::kFloat16 || d == DType::kBFloat16))
          return DType::kFloat32;
        // NB: `acc(input, weight)`: 1.13's mixed-type CPU batch_norm (bfloat16
        // input, float32 weight, as under autocast) keeps them in the weight's
        // dtype.
        const RValue* w = spec.slot2 >= 0 ? slots_[spec.slot2] : nullptr;
        if (w && w->kind == RValue::Kind::kTensor &&
            w->t.dtype != DType::kUnknown)
          return w->t.dtype;
        return d == DType::kUnknown ? DType::kFloat32 : d;
      }
      case DTypeSpec::Kind::kArg: {
        const RValue* v = slots_[spec.slot];
        if (v && v->kind == RValue::Kind::kInt) {
          if (auto c = v->i.AsConstant()) {
            DType d = DTypeFromScalarTypeCode(*c);
            if (d != DType::kUnknown) return d;
          }
        }
        return DefaultDType();
      }
    }
    return DType::kUnknown;
  }

  void ComputeOutputs() {
    out_->outputs.resize(v_.output_slots.size());
    for (size_t i = 0; i < v_.output_slots.size(); ++i) {
      const OutputSpec& spec = v_.outputs[i];
      const int slot = v_.output_slots[i];
      if (spec.given) {
        TensorType t;
        if (spec.same_as >= 0) {
          const RValue* a = slots_[spec.same_as];
          if (a->kind != RValue::Kind::kTensor)
            throw RuleError("output copies argument '" +
                            rule_.schema.args[spec.same_as].name +
                            "', which is not a tensor");
          t.shape = a->t.shape;
          t.dtype = spec.dtype.kind == DTypeSpec::Kind::kDefault
                        ? a->t.dtype
                        : ChooseDType(spec.dtype);
        } else {
          RValue shape = EvalAt(spec.shape);
          if (shape.kind != RValue::Kind::kIntList)
            throw RuleError("output shape '" + spec.shape.text +
                            "' is not a list");
          t.shape = std::move(shape.ints);
          t.dtype = ChooseDType(spec.dtype);
        }
        Set(slot, RValue::Tensor(std::move(t)));
      } else if (slots_[slot] == nullptr) {
        throw RuleError("output '" + v_.slot_names[slot] +
                        "' was not computed");
      } else if (spec.dtype.kind != DTypeSpec::Kind::kDefault &&
                 slots_[slot]->kind == RValue::Kind::kTensor) {
        storage_[slot].t.dtype = ChooseDType(spec.dtype);
      } else if (slots_[slot]->kind == RValue::Kind::kTensor &&
                 storage_[slot].t.dtype == DType::kUnknown) {
        storage_[slot].t.dtype = DefaultDType();
      }
      out_->outputs[i] = *slots_[slot];
    }
  }

  const OpRule& rule_;
  const Variant& v_;
  sym::Context& ctx_;
  Applied* out_;
  std::vector<const RValue*> slots_;
  std::vector<RValue> storage_;
  DType default_dtype_ = DType::kUnknown;
  RValue unknown_;
  RuleSettings settings_;
  // NB: collected here, so Applied keeps only a pointer for them.
  mutable std::vector<std::string> assumptions_;
};

std::string Where(const OpRule& rule) {
  return "rule '" + rule.ops[0] + "' (" + rule.file + ":" +
         std::to_string(rule.line) + ")";
}

}  // namespace

Status ApplyRule(const OpRule& rule, const std::vector<const RValue*>& args,
                 sym::Context& ctx, Applied* out, RuleSettings settings) {
  try {
    for (const Variant& v : rule.variants) {
      Application app(rule, v, ctx, out, settings);
      app.BindArgs(args);
      if (!app.WhenHolds()) continue;
      out->variant = &v;
      app.Run();
      return Status::Ok();
    }
    return Status::InvalidArgument(Where(rule) +
                                   ": no case applies to these arguments");
  } catch (const RuleError& e) {
    return Status::InvalidArgument(Where(rule) + ": " + e.what());
  } catch (const sym::Error& e) {
    return Status::InvalidArgument(Where(rule) + ": " + e.what());
  }
}

}  // namespace torchcost::rules
