#include "import/ts_pickle.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace torchcost::import {
namespace {

Status Bad(const std::string& what) {
  return Status::InvalidArgument("pickle: " + what);
}

PickleRef Make(PickleValue::Kind kind) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  return v;
}

// NB: containers nest at most kMaxDepth levels (a torch pickle nests a few per
// module level), so that nothing that walks or frees a value recurses without
// bound.
constexpr int kMaxDepth = 1000;

// The nesting depth of a value (0 for a scalar); more than kMaxDepth if it is
// deeper. Each value is visited once (`memo`), so values shared through the
// memo do not make it exponential.
int DepthOf(const PickleValue& v, int limit,
            std::unordered_map<const PickleValue*, int>* memo) {
  // NB: a cut path is kMaxDepth + 1 long: the caller's result is over the
  // limit.
  if (limit <= 0) return 0;
  auto it = memo->find(&v);
  if (it != memo->end()) return it->second;
  int d = 0;
  for (const PickleRef& item : v.items)
    d = std::max(d, 1 + DepthOf(*item, limit - 1, memo));
  for (const auto& attr : v.attrs)
    d = std::max(d, 1 + DepthOf(*attr.second, limit - 1, memo));
  (*memo)[&v] = d;
  return d;
}

int DepthOf(const PickleValue& v) {
  std::unordered_map<const PickleValue*, int> memo;
  return DepthOf(v, kMaxDepth + 1, &memo);
}

// True if `target` can be reached from `v` (adding `v` into `target` would make
// a cycle).
bool Reaches(const PickleValue& v, const PickleValue* target) {
  std::vector<const PickleValue*> stack{&v};
  std::unordered_set<const PickleValue*> seen{&v};
  while (!stack.empty()) {
    const PickleValue* x = stack.back();
    stack.pop_back();
    if (x == target) return true;
    auto push = [&](const PickleValue* y) {
      if (seen.insert(y).second) stack.push_back(y);
    };
    for (const PickleRef& item : x->items) push(item.get());
    for (const auto& attr : x->attrs) push(attr.second.get());
  }
  return false;
}

// Reads the integers of a tuple of ints (sizes, strides).
bool IntTuple(const PickleValue& v, std::vector<int64_t>* out) {
  if (v.kind != PickleValue::Kind::kTuple) return false;
  out->clear();
  for (const PickleRef& item : v.items) {
    if (item->kind != PickleValue::Kind::kInt) return false;
    out->push_back(item->i);
  }
  return true;
}

class Unpickler {
 public:
  explicit Unpickler(std::string_view bytes) : b_(bytes) {}

  Result<PickleRef> Run() {
    while (true) {
      if (at_ >= b_.size()) return Bad("truncated (no STOP)");
      const uint8_t op = static_cast<uint8_t>(b_[at_++]);
      switch (op) {
        case 0x80:  // PROTO
          TORCHCOST_RETURN_IF_ERROR(Skip(1));
          break;
        case '.':  // STOP
          if (stack_.size() != 1)
            return Bad("STOP with " + std::to_string(stack_.size()) +
                       " values");
          return stack_.back();
        case 'c': {  // GLOBAL
          std::string module, name;
          TORCHCOST_RETURN_IF_ERROR(Line(&module));
          TORCHCOST_RETURN_IF_ERROR(Line(&name));
          PickleRef g = Make(PickleValue::Kind::kGlobal);
          g->s = module + "." + name;
          stack_.push_back(g);
          break;
        }
        case 'q': {  // BINPUT
          uint32_t n = 0;
          TORCHCOST_RETURN_IF_ERROR(Uint(1, &n));
          TORCHCOST_RETURN_IF_ERROR(Put(n));
          break;
        }
        case 'r': {  // LONG_BINPUT
          uint32_t n = 0;
          TORCHCOST_RETURN_IF_ERROR(Uint(4, &n));
          TORCHCOST_RETURN_IF_ERROR(Put(n));
          break;
        }
        case 'h':
        case 'j': {  // BINGET, LONG_BINGET
          uint32_t n = 0;
          TORCHCOST_RETURN_IF_ERROR(Uint(op == 'h' ? 1 : 4, &n));
          auto it = memo_.find(n);
          if (it == memo_.end())
            return Bad("memo " + std::to_string(n) +
                       " read before it was written");
          stack_.push_back(it->second);
          break;
        }
        case '(':  // MARK
          marks_.push_back(stack_.size());
          break;
        case ')':  // EMPTY_TUPLE
          stack_.push_back(Make(PickleValue::Kind::kTuple));
          break;
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          const size_t n = op - 0x84;
          if (stack_.size() < n) return Bad("stack underflow");
          PickleRef t = Make(PickleValue::Kind::kTuple);
          t->items.assign(stack_.end() - n, stack_.end());
          stack_.resize(stack_.size() - n);
          if (DepthOf(*t) > kMaxDepth) return Bad("values nested too deeply");
          stack_.push_back(t);
          break;
        }
        case 't': {  // TUPLE
          PickleRef t = Make(PickleValue::Kind::kTuple);
          TORCHCOST_RETURN_IF_ERROR(PopMark(&t->items));
          if (DepthOf(*t) > kMaxDepth) return Bad("values nested too deeply");
          stack_.push_back(t);
          break;
        }
        case '}':  // EMPTY_DICT
          stack_.push_back(Make(PickleValue::Kind::kDict));
          break;
        case ']':  // EMPTY_LIST
          stack_.push_back(Make(PickleValue::Kind::kList));
          break;
        case 'a': {  // APPEND
          if (stack_.size() < 2 ||
              stack_[stack_.size() - 2]->kind != PickleValue::Kind::kList)
            return Bad("APPEND to a non-list");
          PickleRef v = stack_.back();
          stack_.pop_back();
          TORCHCOST_RETURN_IF_ERROR(Add(stack_.back().get(), {v}));
          break;
        }
        case 'e': {  // APPENDS
          std::vector<PickleRef> items;
          TORCHCOST_RETURN_IF_ERROR(PopMark(&items));
          if (stack_.empty() || stack_.back()->kind != PickleValue::Kind::kList)
            return Bad("APPENDS to a non-list");
          TORCHCOST_RETURN_IF_ERROR(Add(stack_.back().get(), std::move(items)));
          break;
        }
        case 's':
        case 'u': {  // SETITEM, SETITEMS
          std::vector<PickleRef> items;
          if (op == 's') {
            if (stack_.size() < 3) return Bad("stack underflow");
            items.assign(stack_.end() - 2, stack_.end());
            stack_.resize(stack_.size() - 2);
          } else {
            TORCHCOST_RETURN_IF_ERROR(PopMark(&items));
          }
          if (stack_.empty() ||
              stack_.back()->kind != PickleValue::Kind::kDict ||
              items.size() % 2 != 0) {
            return Bad("SETITEMS on a non-dict");
          }
          TORCHCOST_RETURN_IF_ERROR(Add(stack_.back().get(), std::move(items)));
          break;
        }
        case 'J': {  // BININT
          uint32_t n = 0;
          TORCHCOST_RETURN_IF_ERROR(Uint(4, &n));
          PickleRef v = Make(PickleValue::Kind::kInt);
          v->i = static_cast<int32_t>(n);
          stack_.push_back(v);
          break;
        }
        case 'K':
        case 'M': {  // BININT1, BININT2
          uint32_t n = 0;
          TORCHCOST_RETURN_IF_ERROR(Uint(op == 'K' ? 1 : 2, &n));
          PickleRef v = Make(PickleValue::Kind::kInt);
          v->i = n;
          stack_.push_back(v);
          break;
        }
        case 0x8a: {  // LONG1
          uint32_t n = 0;
          TORCHCOST_RETURN_IF_ERROR(Uint(1, &n));
          if (n > 8 || at_ + n > b_.size())
            return Bad("LONG1 of " + std::to_string(n) + " bytes");
          uint64_t x = 0;
          for (uint32_t k = 0; k < n; ++k)
            x |= static_cast<uint64_t>(static_cast<uint8_t>(b_[at_ + k]))
                 << (8 * k);
          if (n > 0 && n < 8 && (static_cast<uint8_t>(b_[at_ + n - 1]) & 0x80))
            x |= ~uint64_t{0} << (8 * n);
          at_ += n;
          PickleRef v = Make(PickleValue::Kind::kInt);
          v->i = static_cast<int64_t>(x);
          stack_.push_back(v);
          break;
        }
        case 'G': {  // BINFLOAT, big-endian
          if (at_ + 8 > b_.size()) return Bad("truncated BINFLOAT");
          uint64_t x = 0;
          for (int k = 0; k < 8; ++k)
            x = x << 8 | static_cast<uint8_t>(b_[at_ + k]);
          at_ += 8;
          PickleRef v = Make(PickleValue::Kind::kFloat);
          std::memcpy(&v->f, &x, sizeof(double));
          stack_.push_back(v);
          break;
        }
        case 'X':
        case 0x8c: {  // BINUNICODE, SHORT_BINUNICODE
          uint32_t n = 0;
          TORCHCOST_RETURN_IF_ERROR(Uint(op == 'X' ? 4 : 1, &n));
          if (at_ + n > b_.size()) return Bad("truncated string");
          PickleRef v = Make(PickleValue::Kind::kString);
          v->s.assign(b_.substr(at_, n));
          at_ += n;
          stack_.push_back(v);
          break;
        }
        case 0x88:
        case 0x89: {  // NEWTRUE, NEWFALSE
          PickleRef v = Make(PickleValue::Kind::kBool);
          v->b = op == 0x88;
          stack_.push_back(v);
          break;
        }
        case 'N':
          stack_.push_back(Make(PickleValue::Kind::kNone));
          break;
        case 'Q': {  // BINPERSID
          if (stack_.empty()) return Bad("stack underflow");
          PickleRef pid = stack_.back();
          stack_.pop_back();
          TORCHCOST_ASSIGN_OR_RETURN(PickleRef storage, Storage(*pid));
          stack_.push_back(storage);
          break;
        }
        case 'R': {  // REDUCE
          if (stack_.size() < 2) return Bad("stack underflow");
          PickleRef args = stack_.back();
          stack_.pop_back();
          PickleRef fn = stack_.back();
          stack_.pop_back();
          TORCHCOST_ASSIGN_OR_RETURN(PickleRef v, Reduce(*fn, *args));
          stack_.push_back(v);
          break;
        }
        case 0x81: {  // NEWOBJ
          if (stack_.size() < 2) return Bad("stack underflow");
          PickleRef args = stack_.back();
          stack_.pop_back();
          PickleRef cls = stack_.back();
          stack_.pop_back();
          if (cls->kind != PickleValue::Kind::kGlobal ||
              args->kind != PickleValue::Kind::kTuple || !args->items.empty()) {
            return Bad(
                "NEWOBJ of something other than a class without arguments");
          }
          PickleRef obj = Make(PickleValue::Kind::kObject);
          obj->s = cls->s;
          stack_.push_back(obj);
          break;
        }
        case 'b': {  // BUILD
          if (stack_.size() < 2) return Bad("stack underflow");
          PickleRef state = stack_.back();
          stack_.pop_back();
          PickleValue& obj = *stack_.back();
          if (obj.kind != PickleValue::Kind::kObject ||
              state->kind != PickleValue::Kind::kDict) {
            return Bad("BUILD of something other than an object from a dict (" +
                       obj.s + ")");
          }
          for (size_t k = 0; k + 1 < state->items.size(); k += 2) {
            if (state->items[k]->kind != PickleValue::Kind::kString)
              return Bad("object state with a non-string key");
            TORCHCOST_RETURN_IF_ERROR(CheckAdd(obj, *state->items[k + 1]));
            obj.attrs.emplace_back(state->items[k]->s, state->items[k + 1]);
          }
          break;
        }
        default:
          return Bad("unsupported opcode 0x" + Hex(op) + " at byte " +
                     std::to_string(at_ - 1));
      }
    }
  }

 private:
  static std::string Hex(uint8_t op) {
    static const char* digits = "0123456789abcdef";
    return std::string{digits[op >> 4], digits[op & 15]};
  }

  // Checks that adding `item` into `container` makes no cycle and nests no
  // deeper than kMaxDepth.
  static Status CheckAdd(const PickleValue& container,
                         const PickleValue& item) {
    if (Reaches(item, &container)) return Bad("a value that contains itself");
    if (DepthOf(item) >= kMaxDepth) return Bad("values nested too deeply");
    return Status::Ok();
  }

  // Adds `items` to a list or dict (key, value, ...), as APPENDS and SETITEMS
  // do.
  static Status Add(PickleValue* container, std::vector<PickleRef> items) {
    for (PickleRef& v : items) {
      TORCHCOST_RETURN_IF_ERROR(CheckAdd(*container, *v));
      container->items.push_back(std::move(v));
    }
    return Status::Ok();
  }

  Status Skip(size_t n) {
    if (at_ + n > b_.size()) return Bad("truncated");
    at_ += n;
    return Status::Ok();
  }
  Status Uint(size_t n, uint32_t* out) {
    if (at_ + n > b_.size()) return Bad("truncated");
    *out = 0;
    for (size_t k = 0; k < n; ++k)
      *out |= static_cast<uint32_t>(static_cast<uint8_t>(b_[at_ + k]))
              << (8 * k);
    at_ += n;
    return Status::Ok();
  }
  Status Line(std::string* out) {
    const size_t end = b_.find('\n', at_);
    if (end == std::string_view::npos) return Bad("truncated GLOBAL");
    out->assign(b_.substr(at_, end - at_));
    at_ = end + 1;
    return Status::Ok();
  }
  Status Put(uint32_t n) {
    if (stack_.empty()) return Bad("memo put on an empty stack");
    memo_[n] = stack_.back();
    return Status::Ok();
  }
  Status PopMark(std::vector<PickleRef>* out) {
    if (marks_.empty() || marks_.back() > stack_.size()) return Bad("no MARK");
    const size_t mark = marks_.back();
    marks_.pop_back();
    out->assign(stack_.begin() + static_cast<std::ptrdiff_t>(mark),
                stack_.end());
    stack_.resize(mark);
    return Status::Ok();
  }

  // ('storage', torch.FloatStorage, key, device, numel) -> a storage.
  static Result<PickleRef> Storage(const PickleValue& pid) {
    if (pid.kind != PickleValue::Kind::kTuple || pid.items.size() != 5 ||
        pid.items[0]->kind != PickleValue::Kind::kString ||
        pid.items[0]->s != "storage" ||
        pid.items[1]->kind != PickleValue::Kind::kGlobal ||
        pid.items[2]->kind != PickleValue::Kind::kString ||
        pid.items[3]->kind != PickleValue::Kind::kString ||
        pid.items[4]->kind != PickleValue::Kind::kInt) {
      return Bad("unsupported persistent id");
    }
    const std::string& cls = pid.items[1]->s;
    const std::string prefix = "torch.";
    const int type = cls.compare(0, prefix.size(), prefix) == 0
                         ? ScalarTypeOfStorage(cls.substr(prefix.size()))
                         : -1;
    if (type < 0) return Bad("unsupported storage class " + cls);
    PickleRef s = Make(PickleValue::Kind::kStorage);
    s->tensor.storage_key = pid.items[2]->s;
    s->tensor.scalar_type = type;
    s->tensor.device = pid.items[3]->s;
    s->tensor.storage_numel = pid.items[4]->i;
    return s;
  }

  // Checks a tensor's geometry as LibTorch does when it sets a tensor's
  // storage: non-negative sizes, strides and offset, and every element inside
  // the storage.
  static Status CheckBounds(const PickledTensor& t) {
    if (t.sizes.size() != t.strides.size() || t.sizes.size() > 64)
      return Bad("a tensor with sizes and strides of other lengths");
    if (t.offset < 0 || t.storage_numel < 0)
      return Bad("a tensor with a negative offset");
    // The last element's index: offset + sum((size - 1) * stride).
    int64_t last = t.offset;
    bool empty = false;
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      if (t.sizes[d] < 0 || t.strides[d] < 0)
        return Bad("a tensor with a negative size or stride");
      empty |= t.sizes[d] == 0;
      int64_t span = 0;
      if (t.sizes[d] > 0 &&
          (__builtin_mul_overflow(t.sizes[d] - 1, t.strides[d], &span) ||
           __builtin_add_overflow(last, span, &last))) {
        return Bad("a tensor larger than 2^63 elements");
      }
    }
    if (!empty && last >= t.storage_numel)
      return Bad("a tensor that does not fit its storage");
    return Status::Ok();
  }

  static Result<PickleRef> Reduce(const PickleValue& fn,
                                  const PickleValue& args) {
    if (fn.kind != PickleValue::Kind::kGlobal ||
        args.kind != PickleValue::Kind::kTuple)
      return Bad("REDUCE of a non-global");
    if (fn.s == "collections.OrderedDict" && args.items.empty())
      return Make(PickleValue::Kind::kDict);
    if (fn.s == "torch._utils._rebuild_tensor_v2" && args.items.size() == 6) {
      const PickleValue& storage = *args.items[0];
      PickleRef t = Make(PickleValue::Kind::kTensor);
      t->tensor = storage.tensor;
      if (storage.kind != PickleValue::Kind::kStorage ||
          args.items[1]->kind != PickleValue::Kind::kInt ||
          !IntTuple(*args.items[2], &t->tensor.sizes) ||
          !IntTuple(*args.items[3], &t->tensor.strides) ||
          args.items[4]->kind != PickleValue::Kind::kBool ||
          args.items[5]->kind != PickleValue::Kind::kDict ||
          !args.items[5]->items.empty()) {
        return Bad("unsupported _rebuild_tensor_v2 arguments");
      }
      t->tensor.offset = args.items[1]->i;
      t->tensor.requires_grad = args.items[4]->b;
      TORCHCOST_RETURN_IF_ERROR(CheckBounds(t->tensor));
      return t;
    }
    return Bad("unsupported callable " + fn.s);
  }

  std::string_view b_;
  size_t at_ = 0;
  std::vector<PickleRef> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, PickleRef> memo_;
};

}  // namespace

const PickleValue* PickleValue::Attr(const std::string& name) const {
  for (const auto& [key, value] : attrs) {
    if (key == name) return value.get();
  }
  return nullptr;
}

int ScalarTypeOfStorage(std::string_view storage_class) {
  // c10::ScalarType's codes (c10/core/ScalarType.h).
  static const std::pair<std::string_view, int> kTypes[] = {
      {"ByteStorage", 0},           {"CharStorage", 1},
      {"ShortStorage", 2},          {"IntStorage", 3},
      {"LongStorage", 4},           {"HalfStorage", 5},
      {"FloatStorage", 6},          {"DoubleStorage", 7},
      {"ComplexHalfStorage", 8},    {"ComplexFloatStorage", 9},
      {"ComplexDoubleStorage", 10}, {"BoolStorage", 11},
      {"QInt8Storage", 12},         {"QUInt8Storage", 13},
      {"QInt32Storage", 14},        {"BFloat16Storage", 15},
  };
  for (const auto& [name, code] : kTypes) {
    if (name == storage_class) return code;
  }
  return -1;
}

Result<PickleRef> Unpickle(std::string_view bytes) {
  return Unpickler(bytes).Run();
}

}  // namespace torchcost::import
