// RuleSet: rules by op name; the built-in ones compiled on first lookup.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "rules/builtin_rules_data.h"
#include "rules/rule_chunks.h"
#include "rules/rule_parser.h"
#include "torchcost/rules.h"

namespace torchcost {
namespace {

// A rule file indexed by op name, its rules compiled chunk by chunk on demand.
struct LazyFile;

// Rules of a LazyFile that compile together (rules/rule_chunks.h).
struct LazyChunk {
  const LazyFile* file = nullptr;
  const rules::RuleChunk* def = nullptr;
  std::once_flag once;
  Status status;                        // Set by the compile.
  std::unique_ptr<rules::OpRule> rule;  // Once compiled without error.
};

struct LazyFile {
  std::string owned;      // The text, if the set keeps a copy.
  std::string_view text;  // `owned`, or an embedded file's text.
  std::string path;
  rules::SplitFile split;
  std::vector<std::unique_ptr<LazyChunk>> chunks;
};

// Compiles `c` on its own; records the first error, naming its rule.
void CompileChunk(LazyChunk& c) {
  const LazyFile& f = *c.file;
  std::vector<int> line_of;
  const std::string text =
      rules::ChunkAsFile(f.text, f.split, c.def, false, &line_of);
  Result<rules::RuleFile> parsed = rules::ParseRuleFile(text, f.path, &line_of);
  if (!parsed.ok()) {
    // The message starts "path:line:col:"; name the rule holding that line.
    std::string message = parsed.status().message();
    const int line = std::atoi(message.c_str() +
                               std::min(message.size(), f.path.size() + 1)) -
                     1;
    for (const rules::RuleSpan& r : c.def->rules) {
      if (line >= r.first_line && line < r.end_line)
        message += " (rule " + r.ops[0] + ")";
    }
    c.status = Status::ParseError(message);
    return;
  }
  // The chunk's rule is the last; those before it only lend it their anchors.
  std::vector<std::unique_ptr<rules::OpRule>>& compiled = parsed->rules;
  const rules::RuleSpan& span = c.def->rules.back();
  if (compiled.size() != c.def->rules.size() ||
      compiled.back()->ops != span.ops) {
    c.status =
        Status::Internal(f.path + ":" + std::to_string(span.first_line + 1) +
                         ":1: the rule compiled is not the one indexed (rule " +
                         span.ops[0] + ")");
    return;
  }
  c.rule = std::move(compiled.back());
}

}  // namespace

struct RuleSet::Impl {
  // An op's rule: compiled (`rule`), or that of `chunk`, compiled on first
  // lookup.
  struct Entry {
    const rules::OpRule* rule = nullptr;
    LazyChunk* chunk = nullptr;
  };
  std::vector<std::unique_ptr<rules::OpRule>> owned;
  std::vector<std::unique_ptr<LazyFile>> lazy;
  std::unordered_map<std::string, Entry> by_name;
  std::unordered_set<std::string> ignored;

  // Returns the rule of `e`, compiling it if need be; nullptr and `*error` set
  // if it does not compile.
  static const rules::OpRule* Resolve(const Entry& e, const Status** error) {
    if (e.rule != nullptr || e.chunk == nullptr) return e.rule;
    std::call_once(e.chunk->once, [&] { CompileChunk(*e.chunk); });
    if (!e.chunk->status.ok()) {
      *error = &e.chunk->status;
      return nullptr;
    }
    return e.chunk->rule.get();
  }

  // Indexes `text` as `path` lazily; the eager path if its layout is not one
  // SplitRuleFile reads.
  Status AddLazy(RuleSet& set, std::string owned_text, std::string_view text,
                 const std::string& path);
};

RuleSet::RuleSet() : impl_(std::make_unique<Impl>()) {}
RuleSet::~RuleSet() = default;
RuleSet::RuleSet(RuleSet&&) noexcept = default;
RuleSet& RuleSet::operator=(RuleSet&&) noexcept = default;

Result<RuleSet> RuleSet::Builtin() {
  RuleSet set;
  for (const auto& f : rules::BuiltinRuleFiles()) {
    TORCHCOST_RETURN_IF_ERROR(
        set.impl_->AddLazy(set, std::string(), f.text, f.path));
  }
  return set;
}

Status RuleSet::AddTextLazy(std::string_view text, const std::string& file) {
  return impl_->AddLazy(*this, std::string(text), std::string_view(), file);
}

Status RuleSet::Impl::AddLazy(RuleSet& set, std::string owned_text,
                              std::string_view text, const std::string& path) {
  auto f = std::make_unique<LazyFile>();
  f->owned = std::move(owned_text);
  f->text = f->owned.empty() ? text : std::string_view(f->owned);
  f->path = path;
  Result<rules::SplitFile> split = rules::SplitRuleFile(f->text);
  // Compiled whole, as AddText reports it.
  if (!split.ok()) return set.AddText(f->text, path);
  f->split = std::move(split).value();
  for (const std::string& op : f->split.ignored) ignored.insert(op);
  if (f->split.ignored_first_line >= 0 && !f->split.ignored_read) {
    std::vector<int> line_of;
    const std::string text =
        rules::ChunkAsFile(f->text, f->split, nullptr, true, &line_of);
    TORCHCOST_ASSIGN_OR_RETURN(rules::RuleFile parsed,
                               rules::ParseRuleFile(text, path, &line_of));
    for (const auto& op : parsed.ignored) ignored.insert(op);
  }
  std::unordered_map<std::string, int> seen_here;
  by_name.reserve(by_name.size() + 2 * f->split.chunks.size());
  for (const rules::RuleChunk& def : f->split.chunks) {
    auto chunk = std::make_unique<LazyChunk>();
    chunk->file = f.get();
    chunk->def = &def;
    const int line = def.rules.back().first_line + 1;
    for (const std::string& name : def.rules.back().ops) {
      auto [it, added] = seen_here.emplace(name, line);
      if (!added) {
        return Status::ParseError(path + ":" + std::to_string(line) +
                                  ":1: duplicate rule for '" + name +
                                  "' (first defined at " + path + ":" +
                                  std::to_string(it->second) + ")");
      }
      // NB: a later file overrides an earlier one.
      by_name[name] = Entry{nullptr, chunk.get()};
    }
    f->chunks.push_back(std::move(chunk));
  }
  lazy.push_back(std::move(f));
  return Status::Ok();
}

Status RuleSet::CompileAll() const {
  for (const auto& f : impl_->lazy) {
    // NB: each file compiles whole, as eager loading would (a chunk alone
    // recompiles the rules whose anchors it uses); a file with an error
    // compiles chunk by chunk, so that its message is the one a lookup gives.
    Result<rules::RuleFile> whole = rules::ParseRuleFile(f->text, f->path);
    const bool use_whole =
        whole.ok() && whole->rules.size() == f->chunks.size();
    for (size_t i = 0; i < f->chunks.size(); ++i) {
      LazyChunk& c = *f->chunks[i];
      std::call_once(c.once, [&] {
        if (use_whole && whole->rules[i]->ops == c.def->rules.back().ops) {
          c.rule = std::move(whole->rules[i]);
        } else {
          CompileChunk(c);
        }
      });
      if (!c.status.ok()) return c.status;
    }
  }
  return Status::Ok();
}

Status RuleSet::AddText(std::string_view text, const std::string& file) {
  TORCHCOST_ASSIGN_OR_RETURN(rules::RuleFile parsed,
                             rules::ParseRuleFile(text, file));
  std::unordered_map<std::string, int> seen_here;
  for (auto& rule : parsed.rules) {
    for (const auto& name : rule->ops) {
      auto it = seen_here.find(name);
      if (it != seen_here.end()) {
        return Status::ParseError(file + ":" + std::to_string(rule->line) +
                                  ":1: duplicate rule for '" + name +
                                  "' (first defined at " + file + ":" +
                                  std::to_string(it->second) + ")");
      }
      seen_here[name] = rule->line;
      // NB: a later file overrides an earlier one.
      impl_->by_name[name] = Impl::Entry{rule.get()};
    }
    impl_->owned.push_back(std::move(rule));
  }
  for (const auto& op : parsed.ignored) impl_->ignored.insert(op);
  return Status::Ok();
}

Status RuleSet::AddDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::NotFound(dir + ": not a directory");
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".yaml")
      files.push_back(it->path());
  }
  if (ec) return Status::NotFound(dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) return Status::NotFound(f.string() + ": cannot read");
    std::stringstream ss;
    ss << in.rdbuf();
    TORCHCOST_RETURN_IF_ERROR(AddText(ss.str(), f.string()));
  }
  return Status::Ok();
}

const rules::OpRule* RuleSet::Find(std::string_view op,
                                   std::string_view overload) const {
  const Status* error = nullptr;
  if (!overload.empty()) {
    std::string full;
    full.reserve(op.size() + overload.size() + 1);
    full.append(op).append(".").append(overload);
    auto it = impl_->by_name.find(full);
    if (it != impl_->by_name.end()) return Impl::Resolve(it->second, &error);
  }
  auto it = impl_->by_name.find(std::string(op));
  return it == impl_->by_name.end() ? nullptr
                                    : Impl::Resolve(it->second, &error);
}

Result<const rules::OpRule*> RuleSet::Lookup(std::string_view op,
                                             std::string_view overload) const {
  const Status* error = nullptr;
  const rules::OpRule* rule = nullptr;
  auto it = impl_->by_name.end();
  if (!overload.empty())
    it = impl_->by_name.find(std::string(op) + "." + std::string(overload));
  if (it == impl_->by_name.end()) it = impl_->by_name.find(std::string(op));
  if (it != impl_->by_name.end()) rule = Impl::Resolve(it->second, &error);
  if (error != nullptr) return *error;
  return rule;
}

bool RuleSet::IsIgnored(std::string_view op) const {
  return impl_->ignored.count(std::string(op)) > 0;
}

size_t RuleSet::size() const { return impl_->by_name.size(); }

std::vector<std::string> RuleSet::OpNames() const {
  std::vector<std::string> names;
  for (const auto& kv : impl_->by_name) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace torchcost
