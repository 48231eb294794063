#include "rules/rule_parser.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "rules/yaml_load.h"

namespace torchcost::rules {
namespace {

// Thrown while compiling a rule; carries the 1-based position in the file.
struct CompileError {
  int line, col;
  std::string message;
};

// The lines of the file the text parsed is part of (ParseRuleFile's `line_of`),
// if any.
thread_local const std::vector<int>* t_line_of = nullptr;

// Returns the 1-based line in the file of a 0-based line of the text parsed.
int Line(int text_line) {
  const std::vector<int>* map = t_line_of;
  if (map == nullptr || map->empty() || text_line < 0) return text_line + 1;
  const int n = static_cast<int>(map->size());
  return (text_line < n ? (*map)[text_line]
                        : map->back() + (text_line - n + 1)) +
         1;
}

[[noreturn]] void Fail(const YamlNode& at, const std::string& msg) {
  throw CompileError{Line(at.Mark().line), at.Mark().column + 1, msg};
}

const std::set<std::string>& RuleKeys() {
  static const auto* kKeys = new std::set<std::string>{"op",
                                                       "schema",
                                                       "cases",
                                                       "bind",
                                                       "match",
                                                       "require",
                                                       "let",
                                                       "outputs",
                                                       "macs",
                                                       "flops",
                                                       "transcendentals",
                                                       "saved",
                                                       "temporaries",
                                                       "alias",
                                                       "inplace",
                                                       "impl",
                                                       "doc",
                                                       "autocast",
                                                       "workspace",
                                                       "differentiable",
                                                       "bytes",
                                                       "collectives",
                                                       "grad_into",
                                                       "class"};
  return *kKeys;
}

std::string Scalar(const YamlNode& n, const std::string& what) {
  if (!n.IsScalar()) Fail(n, what + " must be a scalar");
  return n.Scalar();
}

// Compiles one variant from the merged keys of a rule (and a case).
class VariantCompiler {
 public:
  VariantCompiler(const Schema& schema, const std::string& rule_name)
      : schema_(schema), rule_name_(rule_name) {
    for (const auto& a : schema.args) AddSlot(a.name);
  }

  Variant Compile(const std::map<std::string, YamlNode>& keys,
                  const YamlNode* when) {
    if (when) v_.when = ParseExpr(*when);
    auto get = [&](const char* k) -> const YamlNode* {
      auto it = keys.find(k);
      return it == keys.end() ? nullptr : &it->second;
    };
    if (auto* n = get("bind")) {
      if (!n->IsMap()) Fail(*n, "'bind' must be a map of name: expression");
      for (const auto& kv : *n) {
        SourceExpr e = ParseExpr(kv.second);
        v_.binds.push_back({AddSlot(kv.first.Scalar(), kv.first), e});
      }
    }
    if (auto* n = get("match")) CompileMatch(*n);
    // Output names are in scope from here on, so lets may use impl outputs.
    CompileOutputNames(get("outputs"));
    if (auto* n = get("require")) {
      if (!n->IsSequence()) Fail(*n, "'require' must be a list of conditions");
      for (const auto& r : *n) v_.requires_.push_back(ParseExpr(r));
    }
    if (auto* n = get("impl")) {
      v_.impl_name = Scalar(*n, "'impl'");
      v_.impl = FindImpl(v_.impl_name);
      if (!v_.impl) {
        std::string names;
        for (const auto& s : ImplNames())
          names += (names.empty() ? "" : " ") + s;
        Fail(*n, "unknown impl '" + v_.impl_name + "'; known: " + names);
      }
    }
    if (auto* n = get("let")) {
      if (!n->IsMap()) Fail(*n, "'let' must be a map of name: expression");
      for (const auto& kv : *n) {
        SourceExpr e = ParseExpr(kv.second);
        v_.lets.push_back({AddSlot(kv.first.Scalar(), kv.first), e});
      }
    }
    if (auto* n = get("outputs")) CompileOutputs(*n);
    if (!v_.impl) {
      for (size_t i = 0; i < v_.outputs.size(); ++i) {
        if (!v_.outputs[i].given) {
          Fail(n_outputs_at_ ? *n_outputs_at_ : YamlNode(),
               "output '" + v_.slot_names[v_.output_slots[i]] +
                   "' has no shape (give it under 'outputs' or use 'impl')");
        }
      }
    }
    if (auto* n = get("temporaries")) CompileTemporaries(*n);
    if (auto* n = get("macs")) v_.macs = ParseExpr(*n);
    if (auto* n = get("flops"))
      CompileCosts(*n, &v_.flops_fwd, &v_.flops_bwd, "flops");
    if (auto* n = get("transcendentals"))
      CompileCosts(*n, &v_.trans_fwd, &v_.trans_bwd, "transcendentals");
    if (auto* n = get("workspace")) CompileWorkspace(*n);
    if (auto* n = get("bytes"))
      CompileCosts(*n, &v_.bytes_fwd, &v_.bytes_bwd, "bytes");
    if (auto* n = get("collectives")) CompileCollectives(*n);
    if (auto* n = get("class")) {
      Result<OpClass> c = ParseOpClass(Scalar(*n, "'class'"));
      if (!c.ok()) Fail(*n, "'class': " + c.status().message());
      v_.op_class = static_cast<int>(*c);
    }
    if (auto* n = get("differentiable")) {
      if (n->IsSequence()) {
        // The tensor arguments that get gradients; the others never do
        // (type_as's other).
        v_.differentiable_args.clear();
        for (const auto& a : *n)
          v_.differentiable_args.push_back(
              ArgIndex(a, a.Scalar(), "'differentiable'"));
      } else {
        const std::string b = Scalar(*n, "'differentiable'");
        if (b != "true" && b != "false")
          Fail(*n,
               "'differentiable' must be true, false or a list of arguments");
        v_.differentiable = b == "true";
      }
    }
    if (auto* n = get("autocast")) CompileAutocast(*n);
    if (auto* n = get("saved")) CompileSaved(*n);
    if (auto* n = get("alias")) CompileAlias(*n, false);
    if (auto* n = get("inplace")) CompileAlias(*n, true);
    if (auto* n = get("grad_into")) CompileGradInto(*n);
    return std::move(v_);
  }

 private:
  int AddSlot(const std::string& name, const YamlNode& at = YamlNode()) {
    auto it = names_.find(name);
    if (it != names_.end()) {
      if (at.IsDefined() && !at.IsNull())
        Fail(at, "name '" + name + "' is already defined in rule '" +
                     rule_name_ + "'");
      return it->second;
    }
    int slot = static_cast<int>(v_.slot_names.size());
    v_.slot_names.push_back(name);
    names_[name] = slot;
    return slot;
  }
  int Lookup(std::string_view name) const {
    auto it = names_.find(std::string(name));
    return it == names_.end() ? -1 : it->second;
  }
  std::string NamesInScope() const {
    std::string s;
    for (const auto& n : v_.slot_names) s += (s.empty() ? "" : " ") + n;
    return s;
  }

  SourceExpr ParseExprText(const YamlNode& at, const std::string& text) {
    SourceExpr e;
    e.text = text;
    e.line = Line(at.Mark().line);
    int quote = (at.Tag() == "!") ? 1 : 0;
    e.col = at.Mark().column + 1 + quote;
    try {
      e.root = ParseRuleExpr(
          text, [this](std::string_view n) { return Lookup(n); }, &v_.pool);
    } catch (const RuleError& err) {
      std::string msg =
          "rule '" + rule_name_ + "': " + err.what() + " in '" + text + "'";
      if (std::string(err.what()).rfind("unknown name", 0) == 0)
        msg += "; names in scope: " + NamesInScope();
      throw CompileError{e.line, e.col + std::max(err.col, 0), msg};
    }
    return e;
  }
  SourceExpr ParseExpr(const YamlNode& n) {
    if (n.IsSequence()) {
      // A YAML list as a shape: join the items into one list expression.
      std::string text = "[";
      for (size_t i = 0; i < n.size(); ++i)
        text += (i ? ", " : "") + Scalar(n[i], "a shape item");
      text += "]";
      return ParseExprText(n, text);
    }
    return ParseExprText(n, Scalar(n, "an expression"));
  }

  int ArgIndex(const YamlNode& at, const std::string& name, const char* what) {
    int i = schema_.FindArg(name);
    if (i < 0) {
      std::string args;
      for (const auto& a : schema_.args)
        args += (args.empty() ? "" : " ") + a.name;
      Fail(at,
           std::string(what) + " names '" + name +
               "', which is not an argument of the schema; arguments: " + args);
    }
    return i;
  }

  void CompileMatch(const YamlNode& n) {
    if (!n.IsMap()) Fail(n, "'match' must be a map of argument: pattern");
    for (const auto& kv : n) {
      TensorPattern p;
      p.arg = ArgIndex(kv.first, kv.first.Scalar(), "'match'");
      if (schema_.args[p.arg].type.base != ArgType::Base::kTensor)
        Fail(kv.first, "'match' argument '" + kv.first.Scalar() +
                           "' is not a Tensor in the schema");
      p.line = Line(kv.second.Mark().line);
      p.col = kv.second.Mark().column + 1;
      if (!kv.second.IsSequence())
        Fail(kv.second, "a pattern must be a list like [N, C, *S]");
      bool unbound_run = false;
      for (const auto& item : kv.second) {
        std::string text = Scalar(item, "a pattern item");
        p.text += (p.text.empty() ? "" : ", ") + text;
        PatternItem it;
        bool star = !text.empty() && text[0] == '*';
        std::string body = star ? text.substr(1) : text;
        bool is_ident = !body.empty() &&
                        (std::isalpha(static_cast<unsigned char>(body[0])) ||
                         body[0] == '_');
        for (char c : body)
          is_ident = is_ident &&
                     (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
        if (body == "_" && !star) {
          it.kind = PatternItem::Kind::kWildcard;
        } else if (is_ident && Lookup(body) < 0) {
          it.kind =
              star ? PatternItem::Kind::kBindRun : PatternItem::Kind::kBindDim;
          if (star) {
            if (unbound_run)
              Fail(item, "a pattern may have at most one unbound '*' run");
            unbound_run = true;
          }
          it.slot = AddSlot(body);
        } else {
          it.kind = star ? PatternItem::Kind::kCheckRun
                         : PatternItem::Kind::kCheckDim;
          it.expr = ParseExprText(item, body);
        }
        p.items.push_back(std::move(it));
      }
      v_.matches.push_back(std::move(p));
    }
  }

  void CompileOutputNames(const YamlNode* outputs) {
    n_outputs_at_ = outputs;
    size_t n = std::max<size_t>(schema_.returns.size(), 1);
    std::vector<std::string> names;
    if (outputs) {
      if (!outputs->IsMap())
        Fail(*outputs, "'outputs' must be a map of name: shape");
      for (const auto& kv : *outputs) names.push_back(kv.first.Scalar());
      if (!schema_.returns.empty() && names.size() != schema_.returns.size())
        Fail(*outputs, "'outputs' gives " + std::to_string(names.size()) +
                           " outputs but the schema returns " +
                           std::to_string(schema_.returns.size()));
      n = names.size();
    } else {
      for (size_t i = 0; i < n; ++i) {
        if (i < schema_.returns.size() && !schema_.returns[i].name.empty())
          names.push_back(schema_.returns[i].name);
        else
          names.push_back(n == 1 ? "out" : "out" + std::to_string(i));
      }
    }
    for (const auto& name : names) v_.output_slots.push_back(AddSlot(name));
    v_.outputs.resize(n);
  }

  DTypeSpec CompileDType(const YamlNode& n) {
    DTypeSpec d;
    std::string s = Scalar(n, "'dtype'");
    if (s.rfind("acc(", 0) == 0 && s.back() == ')') {
      // The accumulation type of a tensor argument (norm statistics).
      d.kind = DTypeSpec::Kind::kAcc;
      std::string args = s.substr(4, s.size() - 5);
      const size_t comma = args.find(',');
      if (comma != std::string::npos) {
        std::string second = args.substr(comma + 1);
        second.erase(0, second.find_first_not_of(' '));
        d.slot2 = ArgIndex(n, second, "'dtype: acc(..., ...)'");
        args = args.substr(0, comma);
      }
      d.slot = ArgIndex(n, args, "'dtype: acc(...)'");
      return d;
    }
    if (s.rfind("arg(", 0) == 0 && s.back() == ')') {
      std::string a = s.substr(4, s.size() - 5);
      d.kind = DTypeSpec::Kind::kArg;
      d.slot = ArgIndex(n, a, "'dtype: arg(...)'");
      return d;
    }
    int slot = Lookup(s);
    if (slot >= 0) {
      d.kind = DTypeSpec::Kind::kSameAs;
      d.slot = slot;
      return d;
    }
    auto parsed = ParseDType(s);
    if (!parsed.ok()) Fail(n, "unknown dtype '" + s + "'");
    d.kind = DTypeSpec::Kind::kFixed;
    d.fixed = *parsed;
    return d;
  }

  void CompileOutputSpec(const YamlNode& n, OutputSpec* o) {
    o->given = true;
    if (n.IsMap()) {
      if (n["shape"]) {
        const YamlNode s = n["shape"];
        if (s.IsScalar() && schema_.FindArg(s.Scalar()) >= 0 &&
            schema_.args[schema_.FindArg(s.Scalar())].type.base ==
                ArgType::Base::kTensor) {
          o->same_as = schema_.FindArg(s.Scalar());
        } else {
          o->shape = ParseExpr(s);
        }
      } else if (!v_.impl) {
        Fail(n, "an output needs 'shape'");
      } else {
        o->given = false;  // Shape from impl; only the dtype is overridden.
      }
      if (n["dtype"]) o->dtype = CompileDType(n["dtype"]);
      for (const auto& kv : n) {
        std::string k = kv.first.Scalar();
        if (k != "shape" && k != "dtype")
          Fail(kv.first, "unknown key '" + k + "' in an output (shape, dtype)");
      }
      return;
    }
    if (n.IsScalar()) {
      int arg = schema_.FindArg(n.Scalar());
      if (arg >= 0 && schema_.args[arg].type.base == ArgType::Base::kTensor) {
        o->same_as = arg;
        return;
      }
    }
    o->shape = ParseExpr(n);
  }

  void CompileOutputs(const YamlNode& n) {
    size_t i = 0;
    for (const auto& kv : n) CompileOutputSpec(kv.second, &v_.outputs[i++]);
  }

  void CompileTemporaries(const YamlNode& n) {
    if (!n.IsMap())
      Fail(n, "'temporaries' must be a map of name: {shape, dtype}");
    for (const auto& kv : n) {
      TemporarySpec t;
      t.name = kv.first.Scalar();
      t.slot = AddSlot(t.name, kv.first);
      if (!kv.second.IsMap() || !kv.second["shape"])
        Fail(kv.second, "a temporary needs 'shape'");
      t.shape = ParseExpr(kv.second["shape"]);
      if (kv.second["dtype"]) t.dtype = CompileDType(kv.second["dtype"]);
      v_.temporaries.push_back(std::move(t));
    }
  }

  // `collectives: {group: RANKS, fwd: {KIND: BYTES}, bwd: {input: {KIND:
  // BYTES}, ...}}`; a list of {KIND: BYTES} for several calls.
  void CompileCollectives(const YamlNode& n) {
    if (!n.IsMap())
      Fail(n, "'collectives' must be a map with group, fwd and bwd");
    // One {KIND: BYTES} entry, or a list of them.
    std::function<void(const YamlNode&, int)> call = [&](const YamlNode& c,
                                                         int arg) {
      if (c.IsSequence() && c.size() > 0) {
        for (const YamlNode& one : c) {
          if (one.IsSequence()) Fail(one, "a collective list cannot nest");
          call(one, arg);
        }
        return;
      }
      if (!c.IsMap() || c.size() != 1)
        Fail(c,
             "a collective must be one KIND: BYTES (all_reduce, "
             "reduce_scatter, all_gather, all_to_all), or a list of them");
      for (const auto& kv : c) {
        Result<CollectiveKind> kind = ParseCollectiveKind(kv.first.Scalar());
        if (!kind.ok()) Fail(kv.first, kind.status().message());
        v_.collectives.push_back({arg, *kind, ParseExpr(kv.second)});
      }
    };
    for (const auto& kv : n) {
      const std::string k = kv.first.Scalar();
      if (k == "group") {
        v_.collective_group = ParseExpr(kv.second);
      } else if (k == "fwd") {
        call(kv.second, -1);
      } else if (k == "bwd") {
        if (!kv.second.IsMap())
          Fail(kv.second,
               "'collectives.bwd' must be a map of input: {KIND: "
               "BYTES}");
        for (const auto& g : kv.second)
          call(g.second, ArgIndex(g.first, g.first.Scalar(), "a collective"));
      } else {
        Fail(kv.first,
             "unknown key '" + k + "' in 'collectives' (group, fwd, bwd)");
      }
    }
    if (!v_.collective_group.present())
      Fail(n, "'collectives' needs 'group' (the ranks that run them)");
  }

  void CompileCosts(const YamlNode& n, SourceExpr* fwd,
                    std::vector<GradCost>* bwd, const char* what) {
    if (n.IsScalar()) {
      *fwd = ParseExpr(n);
      return;
    }
    if (!n.IsMap())
      Fail(n, std::string("'") + what +
                  "' must be an expression or a map with fwd and bwd");
    for (const auto& kv : n) {
      std::string k = kv.first.Scalar();
      if (k == "fwd") {
        *fwd = ParseExpr(kv.second);
      } else if (k == "bwd") {
        if (!kv.second.IsMap())
          Fail(kv.second, std::string("'") + what +
                              ".bwd' must be a map of input: expression");
        for (const auto& g : kv.second) {
          GradCost c;
          c.arg = ArgIndex(g.first, g.first.Scalar(), "a backward cost");
          c.expr = ParseExpr(g.second);
          bwd->push_back(std::move(c));
        }
      } else {
        Fail(kv.first, std::string("unknown key '") + k + "' in '" + what +
                           "' (fwd, bwd)");
      }
    }
  }

  void CompileWorkspace(const YamlNode& n) {
    if (!n.IsMap())
      Fail(n,
           "'workspace' must be a map with fwd and/or bwd or bwd_phases "
           "(bytes)");
    for (const auto& kv : n) {
      std::string k = kv.first.Scalar();
      if (k == "bwd_phases" && n["bwd"].IsDefined()) {
        Fail(kv.first, "'workspace' takes bwd or bwd_phases, not both");
      }
      if (k == "fwd") {
        v_.workspace_fwd = ParseExpr(kv.second);
      } else if (k == "bwd" && kv.second.IsMap()) {
        // Per input gradient: the phases run one after another, so the node's
        // backward scratch is the largest of those whose gradient is needed.
        for (const auto& g : kv.second) {
          GradCost c;
          c.arg = ArgIndex(g.first, g.first.Scalar(), "a backward workspace");
          c.expr = ParseExpr(g.second);
          v_.workspace_bwd.push_back(std::move(c));
        }
      } else if (k == "bwd") {
        GradCost c;
        c.expr = ParseExpr(kv.second);
        v_.workspace_bwd.push_back(std::move(c));
      } else if (k == "bwd_phases") {
        // One phase per needed input gradient, in argument order: each entry
        // is the scratch at its phase's peak beyond the gradients made so far.
        if (!kv.second.IsMap())
          Fail(kv.second, "'bwd_phases' must be a map of input: bytes");
        v_.workspace_bwd_phased = true;
        for (const auto& g : kv.second) {
          GradCost c;
          c.arg = ArgIndex(g.first, g.first.Scalar(), "a backward workspace");
          c.expr = ParseExpr(g.second);
          v_.workspace_bwd.push_back(std::move(c));
        }
      } else {
        Fail(kv.first,
             "unknown key '" + k + "' in 'workspace' (fwd, bwd, bwd_phases)");
      }
    }
  }

  static AutocastPolicy ParsePolicy(const YamlNode& n) {
    const std::string s = Scalar(n, "an autocast policy");
    if (s == "lower") return AutocastPolicy::kLower;
    if (s == "fp32") return AutocastPolicy::kFp32;
    if (s == "promote") return AutocastPolicy::kPromote;
    if (s == "none") return AutocastPolicy::kNone;
    Fail(n, "unknown autocast policy '" + s + "' (lower, fp32, promote, none)");
  }

  // `autocast: POLICY` (both devices) or `{cuda: POLICY, cpu: POLICY, only:
  // [ops]}` (a device left out: none).
  void CompileAutocast(const YamlNode& n) {
    AutocastSpec& a = v_.autocast;
    a = AutocastSpec();
    if (n.IsScalar()) {
      a.cuda = a.cpu = ParsePolicy(n);
      return;
    }
    if (!n.IsMap())
      Fail(n,
           "'autocast' must be a policy or a map {cuda: POLICY, cpu: POLICY, "
           "only: [ops]}");
    for (const auto& kv : n) {
      const std::string k = kv.first.Scalar();
      if (k == "cuda") {
        a.cuda = ParsePolicy(kv.second);
      } else if (k == "cpu") {
        a.cpu = ParsePolicy(kv.second);
      } else if (k == "only") {
        if (!kv.second.IsSequence())
          Fail(kv.second, "'autocast.only' must be a list of op names");
        for (const auto& o : kv.second)
          a.only.push_back(Scalar(o, "an op name"));
      } else {
        Fail(kv.first,
             "unknown key '" + k + "' in 'autocast' (cuda, cpu, only)");
      }
    }
  }

  void CompileSaved(const YamlNode& n) {
    if (!n.IsMap())
      Fail(n, "'saved' must be a map of tensor: {needed_for: [inputs]}");
    for (const auto& kv : n) {
      SavedSpec s;
      s.slot = Lookup(kv.first.Scalar());
      if (s.slot < 0)
        Fail(kv.first, "'saved' names '" + kv.first.Scalar() +
                           "', which is not an argument, output or temporary");
      if (kv.second.IsMap() && kv.second["needed_for"]) {
        for (const auto& a : kv.second["needed_for"])
          s.needed_for.push_back(ArgIndex(a, a.Scalar(), "'needed_for'"));
      }
      v_.saved.push_back(std::move(s));
    }
  }

  void CompileAlias(const YamlNode& n, bool inplace) {
    if (!n.IsMap() || n.size() != 1)
      Fail(n, std::string("'") + (inplace ? "inplace" : "alias") +
                  "' must be {output: argument}");
    for (const auto& kv : n) {
      v_.alias_output = Lookup(kv.first.Scalar());
      if (v_.alias_output < 0)
        Fail(kv.first, "unknown output '" + kv.first.Scalar() + "'");
      v_.alias_arg = ArgIndex(kv.second, kv.second.Scalar(),
                              inplace ? "'inplace'" : "'alias'");
    }
    v_.inplace = inplace;
  }

  // `grad_into: {input: argument}`: the input's gradient is written into the
  // argument's storage.
  void CompileGradInto(const YamlNode& n) {
    if (!n.IsMap() || n.size() == 0)
      Fail(n, "'grad_into' must be a map of input: argument");
    for (const auto& kv : n) {
      v_.grad_into.emplace_back(
          ArgIndex(kv.first, kv.first.Scalar(), "'grad_into'"),
          ArgIndex(kv.second, Scalar(kv.second, "'grad_into'"), "'grad_into'"));
    }
  }

  const Schema& schema_;
  std::string rule_name_;
  Variant v_;
  std::unordered_map<std::string, int> names_;
  const YamlNode* n_outputs_at_ = nullptr;
};

std::unique_ptr<OpRule> CompileRule(const YamlNode& r,
                                    const std::string& file) {
  if (!r.IsMap()) Fail(r, "a rule must be a map with 'op' and 'schema'");
  auto rule = std::make_unique<OpRule>();
  rule->file = file;
  rule->line = Line(r.Mark().line);
  const YamlNode op = r["op"];
  if (!op) Fail(r, "a rule needs 'op'");
  if (op.IsSequence()) {
    for (const auto& o : op) rule->ops.push_back(Scalar(o, "'op'"));
    if (rule->ops.empty())
      Fail(op, "'op' is an empty list; it names the ops the rule covers");
  } else {
    rule->ops.push_back(Scalar(op, "'op'"));
  }
  for (const auto& name : rule->ops) {
    if (name.find("::") == std::string::npos)
      Fail(op,
           "op '" + name + "' must be qualified, like 'aten::" + name + "'");
  }
  const YamlNode schema = r["schema"];
  if (!schema) Fail(r, "rule '" + rule->ops[0] + "' needs 'schema'");
  auto parsed = ParseSchema(Scalar(schema, "'schema'"));
  if (!parsed.ok())
    Fail(schema, "rule '" + rule->ops[0] + "': " + parsed.status().message());
  rule->schema = std::move(parsed).value();

  std::map<std::string, YamlNode> top;
  for (const auto& kv : r) {
    std::string k = kv.first.Scalar();
    if (!RuleKeys().count(k))
      Fail(kv.first, "unknown key '" + k + "' in rule '" + rule->ops[0] + "'");
    if (k != "op" && k != "schema" && k != "cases" && k != "doc")
      top[k] = kv.second;
  }
  if (r["cases"]) {
    if (!r["cases"].IsSequence()) Fail(r["cases"], "'cases' must be a list");
    for (const auto& c : r["cases"]) {
      if (!c.IsMap()) Fail(c, "a case must be a map");
      std::map<std::string, YamlNode> merged = top;
      const YamlNode* when = nullptr;
      YamlNode when_node;
      for (const auto& kv : c) {
        std::string k = kv.first.Scalar();
        if (k == "when") {
          when_node = kv.second;
          when = &when_node;
          continue;
        }
        if (!RuleKeys().count(k) || k == "op" || k == "schema" || k == "cases")
          Fail(kv.first, "unknown key '" + k + "' in a case of rule '" +
                             rule->ops[0] + "'");
        merged[k] = kv.second;  // A case's key replaces the rule's.
      }
      rule->variants.push_back(
          VariantCompiler(rule->schema, rule->ops[0]).Compile(merged, when));
    }
  } else {
    rule->variants.push_back(
        VariantCompiler(rule->schema, rule->ops[0]).Compile(top, nullptr));
  }
  for (const auto& v : rule->variants) {
    for (const auto& name : v.autocast.only) {
      if (std::find(rule->ops.begin(), rule->ops.end(), name) ==
          rule->ops.end()) {
        Fail(r["autocast"] ? r["autocast"] : r,
             "'autocast.only' names '" + name +
                 "', which is not an op of rule '" + rule->ops[0] + "'");
      }
    }
  }
  return rule;
}

}  // namespace

Result<RuleFile> ParseRuleFile(std::string_view text, const std::string& file,
                               const std::vector<int>* line_of) {
  // NB: set for this call only (compiles on other threads have their own).
  struct LineMap {
    explicit LineMap(const std::vector<int>* m) { t_line_of = m; }
    ~LineMap() { t_line_of = nullptr; }
  } line_map(line_of);
  RuleFile out;
  YamlMark error_mark;
  Result<YamlDocument> loaded = LoadYaml(text, &error_mark);
  if (!loaded.ok()) {
    return Status::ParseError(file + ":" +
                              std::to_string(Line(error_mark.line)) + ":" +
                              std::to_string(error_mark.column + 1) + ": " +
                              loaded.status().message());
  }
  const YamlNode doc = loaded->root();
  try {
    if (!doc.IsMap())
      return Status::ParseError(
          file + ":1:1: a rule file must be a map with 'version' and 'rules'");
    for (const auto& kv : doc) {
      std::string k = kv.first.Scalar();
      if (k != "version" && k != "rules" && k != "ignored")
        Fail(kv.first,
             "unknown top-level key '" + k + "' (version, rules, ignored)");
    }
    if (!doc["version"] || doc["version"].Scalar() != "1")
      Fail(doc, "expected 'version: 1'");
    if (doc["rules"]) {
      if (!doc["rules"].IsSequence())
        Fail(doc["rules"], "'rules' must be a list");
      for (const auto& r : doc["rules"])
        out.rules.push_back(CompileRule(r, file));
    }
    if (doc["ignored"]) {
      if (!doc["ignored"].IsSequence())
        Fail(doc["ignored"], "'ignored' must be a list of op names");
      for (const auto& o : doc["ignored"]) {
        out.ignored.push_back(Scalar(o, "an ignored op"));
        out.ignored_lines.push_back(Line(o.Mark().line));
      }
    }
  } catch (const CompileError& e) {
    return Status::ParseError(file + ":" + std::to_string(e.line) + ":" +
                              std::to_string(e.col) + ": " + e.message);
  }
  return out;
}

}  // namespace torchcost::rules
