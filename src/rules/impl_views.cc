// Views and shape ops: view/reshape, flatten, unflatten, permute, transpose,
// t, squeeze, unsqueeze, expand, select, slice, narrow, chunk, split, unbind,
// cat, stack and pad.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/builtin.h"
#include "rules/impl_util.h"
#include "rules/impls.h"
#include "rules/value.h"
#include "torchcost/dtype.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules::impl {
namespace {

// Returns index made non-negative against `size`, requiring 0 <= index < size.
Result<Expr> CheckIndex(ImplContext& c, const Expr& index, const Expr& size,
                        const std::string& what) {
  std::optional<int64_t> k = index.AsConstant();
  std::optional<int64_t> n = size.AsConstant();
  if (k && n) {
    if (*k < -*n || *k >= *n) {
      return Status::OutOfRange("index " + std::to_string(*k) +
                                " out of range for " + what + " of size " +
                                std::to_string(*n));
    }
    return *k < 0 ? Expr(*k + *n) : index;
  }
  if (k && *k < 0) {
    TORCHCOST_RETURN_IF_ERROR(c.RequireLe(
        -*k, size, "index " + std::to_string(*k) + " must lie within " + what));
    return size + *k;
  }
  TORCHCOST_RETURN_IF_ERROR(
      c.RequireLe(index + 1, size,
                  "index " + index.ToString() + " must lie within " + what));
  return index;
}

// Returns a slice bound (start or end) normalized as PyTorch's slice does:
// negative counts from the end, then clamped to [lo, size].
Result<Expr> SliceBound(ImplContext& c, const Expr& v, const Expr& size,
                        const Expr& lo, const std::string& what) {
  Expr x = v;
  sym::Context& ctx = c.ctx();
  std::optional<int64_t> k = v.AsConstant();
  if (k && *k < 0) {
    x = size + *k;
  } else if (!k && ctx.ProveLe(0, v) != sym::Truth::kTrue) {
    TORCHCOST_RETURN_IF_ERROR(
        c.RequireLe(0, v, what + " is assumed non-negative"));
  }
  if (ctx.ProveLe(lo, x) != sym::Truth::kTrue) x = sym::Max(x, lo);
  if (ctx.ProveLe(x, size) != sym::Truth::kTrue) x = sym::Min(x, size);
  return x;
}

// Emits the pieces of dim `d` of `self` with the given sizes as a Tensor[].
void EmitPieces(const TensorType& self, int64_t d, const Shape& sizes,
                std::vector<RValue>* outputs) {
  std::vector<TensorType> pieces;
  for (const Expr& s : sizes) {
    Shape shape = self.shape;
    shape[d] = s;
    pieces.push_back(WithShape(self, shape));
  }
  outputs->push_back(RValue::Tensors(std::move(pieces)));
}

// Splits a dim of size `size` into pieces of `split` (the last one smaller).
// NB: with a symbolic size the number of pieces is unknown unless `pieces` is
// given (chunk): then the size is required to divide evenly.
Result<Shape> EvenPieces(ImplContext& c, const Expr& size, const Expr& split,
                         std::optional<int64_t> pieces,
                         const std::string& what) {
  std::optional<int64_t> n = size.AsConstant();
  std::optional<int64_t> s = split.AsConstant();
  if (n && s) {
    if (*s <= 0) {
      if (*n == 0 && *s == 0) return Shape{Expr(0)};
      return Bad(what + ": split size must be positive; got " +
                 std::to_string(*s));
    }
    if (*n == 0) return Shape{Expr(0)};
    const int64_t count = (*n + *s - 1) / *s;  // ceildiv(size, split) pieces
    Shape out(count, split);
    out.back() = *n - *s * (count - 1);  // the last piece takes the rest
    return out;
  }
  if (pieces) {
    // NB: symbolic size: require size == pieces * split, then every piece is
    // equal.
    TORCHCOST_RETURN_IF_ERROR(
        c.RequireEq(sym::Mod(size, *pieces), 0,
                    what + ": symbolic size " + size.ToString() +
                        " is assumed divisible by " + std::to_string(*pieces)));
    return Shape(*pieces, sym::FloorDiv(size, *pieces));
  }
  if (s && *s > 0) {
    // split(x, s) of a symbolic dim: one piece if size <= s is provable.
    if (c.ctx().ProveLe(size, split) == sym::Truth::kTrue) return Shape{size};
  }
  if (!s) {
    // split size equal to the dim (x.split(x.size(d))) or a divisor of it.
    if (c.ctx().ProveEq(size, split) == sym::Truth::kTrue) return Shape{size};
  }
  return Bad(what + ": the number of pieces of a dim of symbolic size " +
             size.ToString() + " split by " + split.ToString() +
             " is unknown; give the dim a concrete size");
}

// Returns the tensors of the list argument `name`.
Result<std::vector<TensorType>> TensorListArg(ImplContext& c,
                                              std::string_view name) {
  const RValue& v = c.Arg(name);
  if (v.kind == RValue::Kind::kTensorList) return v.tensors;
  if (v.kind == RValue::Kind::kList) {
    std::vector<TensorType> out;
    for (const RValue& item : v.items) {
      if (item.kind != RValue::Kind::kTensor)
        return Bad("argument " + Quote(name) + " must be a list of tensors");
      out.push_back(item.t);
    }
    return out;
  }
  return Bad("argument " + Quote(name) + " must be a list of tensors");
}

}  // namespace

// ---------------------------------------------------------------------------
// Views and shape ops.

// view(self, size) / reshape(self, shape) / _unsafe_view / view_as-less forms.
Status View(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  std::string_view name;
  const RValue* size = FirstArg(c, {"size", "shape"}, &name);
  if (size == nullptr)
    return Bad("view: the schema has no 'size' or 'shape' argument");
  std::optional<Shape> l = AsIntList(*size);
  if (!l) return Bad("argument " + Quote(name) + " must be a list of ints");
  Shape out;
  TORCHCOST_RETURN_IF_ERROR(InferShape(c, self.shape, *l, name, "view", &out));
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// flatten(self, start_dim=0, end_dim=-1): dims start..end become one.
Status Flatten(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(int64_t s0, ConstIntArg(c, "start_dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t e0, ConstIntArg(c, "end_dim", -1));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t s, WrapDim(s0, rank, "start_dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t e, WrapDim(e0, rank, "end_dim"));
  if (s > e)
    return Bad("flatten: start_dim " + std::to_string(s0) +
               " comes after end_dim " + std::to_string(e0));
  if (rank == 0) {  // A 0-dim tensor flattens to [1].
    outputs->push_back(RValue::Tensor(WithShape(self, {Expr(1)})));
    return Status::Ok();
  }
  Shape out(self.shape.begin(), self.shape.begin() + s);
  out.push_back(Product(self.shape, s, e + 1));
  out.insert(out.end(), self.shape.begin() + e + 1, self.shape.end());
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// unflatten(self, dim, sizes): dim becomes `sizes` (one -1 inferred).
Status Unflatten(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0) return Bad("unflatten: self must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(Shape sizes, IntListArg(c, "sizes"));
  if (sizes.empty())
    return Bad("unflatten: argument 'sizes' must be non-empty");
  Shape mid;
  TORCHCOST_RETURN_IF_ERROR(
      InferShape(c, {self.shape[d]}, sizes, "sizes", "unflatten", &mid));
  Shape out(self.shape.begin(), self.shape.begin() + d);
  out.insert(out.end(), mid.begin(), mid.end());
  out.insert(out.end(), self.shape.begin() + d + 1, self.shape.end());
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// permute(self, dims): a permutation of all dims.
Status Permute(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(Shape l, IntListArg(c, "dims"));
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstList(l, "dims"));
  if (static_cast<int64_t>(dims.size()) != rank) {
    return Bad("permute: argument 'dims' " + ListToString(dims) + " has " +
               std::to_string(dims.size()) + " entries for a tensor of rank " +
               std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t d0 : dims) {
    TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dims"));
    if (seen[d])
      return Bad("permute: dim " + std::to_string(d0) +
                 " repeats in argument 'dims' " + ListToString(dims));
    seen[d] = true;
    out.push_back(self.shape[d]);
  }
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// transpose(self, dim0, dim1): swaps two dims.
Status Transpose(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(int64_t a0, ConstIntArg(c, "dim0"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t b0, ConstIntArg(c, "dim1"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t a, WrapDim(a0, rank, "dim0"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t b, WrapDim(b0, rank, "dim1"));
  Shape out = self.shape;
  if (rank > 0) std::swap(out[a], out[b]);
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// t(self): transposes a matrix; vectors and scalars pass through.
Status T(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  if (self.shape.size() > 2) {
    return Bad("t: argument 'self' must have at most 2 dims; got shape " +
               ShapeToString(self.shape));
  }
  Shape out = self.shape;
  if (out.size() == 2) std::swap(out[0], out[1]);
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// squeeze(self), squeeze.dim(self, dim), squeeze.dims(self, dim[]).
// NB: a dim is removed only if it is provably 1. A symbolic dim that might be 1
// is kept, and the assumption "dim >= 2" is recorded.
Status Squeeze(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  std::vector<bool> candidate(rank, false);
  const RValue& dim = c.Arg("dim");
  if (dim.kind == RValue::Kind::kNone || dim.kind == RValue::Kind::kUnknown) {
    std::fill(candidate.begin(), candidate.end(), true);
  } else {
    std::optional<Shape> l = AsIntList(dim);
    if (!l) return Bad("argument 'dim' must be an int or a list of ints");
    TORCHCOST_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstList(*l, "dim"));
    for (int64_t d0 : dims) {
      TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
      if (rank > 0) candidate[d] = true;
    }
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    const Expr& d = self.shape[i];
    if (candidate[i]) {
      if (IsOne(c, d)) continue;
      if (!d.IsConstant()) {
        TORCHCOST_RETURN_IF_ERROR(c.RequireLe(
            2, d,
            "squeeze keeps dim " + std::to_string(i) + " of self " +
                ShapeToString(self.shape) + ", assuming it is not 1"));
      }
    }
    out.push_back(d);
  }
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// unsqueeze(self, dim): inserts a dim of size 1 at dim (in [-rank-1, rank]).
Status Unsqueeze(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank + 1, "dim"));
  Shape out = self.shape;
  out.insert(out.begin() + d, Expr(1));
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// expand(self, size) or expand_as(self, other): -1 keeps a dim; new dims lead.
Status Expand(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  Shape size;
  std::string arg = "size";
  const RValue& other = c.Arg("other");
  if (other.kind == RValue::Kind::kTensor) {
    size = other.t.shape;
    arg = "other";
  } else {
    TORCHCOST_ASSIGN_OR_RETURN(size, IntListArg(c, "size"));
  }
  const size_t rank = self.shape.size();
  if (size.size() < rank) {
    return Bad("expand: argument " + Quote(arg) + " " + ShapeToString(size) +
               " has fewer dims than self " + ShapeToString(self.shape));
  }
  const size_t lead = size.size() - rank;
  Shape out(size.size());
  for (size_t i = 0; i < size.size(); ++i) {
    std::optional<int64_t> k = size[i].AsConstant();
    if (i < lead) {
      if (k && *k < 0) {
        return Bad("expand: the new leading dim " + std::to_string(i) +
                   " cannot be " + std::to_string(*k) + " (argument " +
                   Quote(arg) + ")");
      }
      out[i] = size[i];
      continue;
    }
    const Expr& s = self.shape[i - lead];
    if (k && *k == -1) {
      out[i] = s;
    } else if (k && *k < -1) {
      return Bad("expand: invalid size " + std::to_string(*k) + " (argument " +
                 Quote(arg) + ")");
    } else if (s == size[i] || IsOne(c, s)) {
      out[i] = size[i];
    } else if (s.IsConstant() && k) {
      return Bad("expand: dim " + std::to_string(i) + " of self " +
                 ShapeToString(self.shape) + " is neither 1 nor " +
                 std::to_string(*k) + " (argument " + Quote(arg) + ")");
    } else {
      TORCHCOST_RETURN_IF_ERROR(c.RequireEq(s, size[i],
                                            "expand: a non-1 dim of self " +
                                                ShapeToString(self.shape) +
                                                " must keep its size"));
      out[i] = size[i];
    }
  }
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// select(self, dim, index): removes dim.
Status Select(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0)
    return Bad("select: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(Expr index, IntArg(c, "index"));
  Result<Expr> checked =
      CheckIndex(c, index, self.shape[d],
                 "dim " + std::to_string(d0) + " (argument 'index')");
  if (!checked.ok()) return checked.status();
  Shape out = self.shape;
  out.erase(out.begin() + d);
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// slice(self, dim=0, start=None, end=None, step=1).
Status Slice(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0)
    return Bad("slice: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(Expr step, IntArg(c, "step", Expr(1)));
  if (c.ctx().ProveLe(1, step) != sym::Truth::kTrue) {
    return Bad("slice: argument 'step' must be positive; got " +
               step.ToString());
  }
  const Expr size = self.shape[d];
  TORCHCOST_ASSIGN_OR_RETURN(Expr start0, IntArg(c, "start", Expr(0)));
  // NB: `x[a:]` traces as end = INT64_MAX; any constant at or past the size
  // means "to the end".
  const RValue& end_arg = c.Arg("end");
  Expr end0 = size;
  bool end_is_size = end_arg.kind == RValue::Kind::kNone ||
                     end_arg.kind == RValue::Kind::kUnknown;
  if (!end_is_size) {
    TORCHCOST_ASSIGN_OR_RETURN(end0, IntArg(c, "end"));
    std::optional<int64_t> k = end0.AsConstant();
    if (k && *k >= std::numeric_limits<int64_t>::max() / 4) end_is_size = true;
  }
  TORCHCOST_ASSIGN_OR_RETURN(Expr start,
                             SliceBound(c, start0, size, 0, "slice start"));
  Expr end = size;
  if (!end_is_size) {
    TORCHCOST_ASSIGN_OR_RETURN(end,
                               SliceBound(c, end0, size, start, "slice end"));
  }
  Shape out = self.shape;
  // ceil((end - start) / step) elements.
  out[d] = sym::CeilDiv(end - start, step);
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// narrow(self, dim, start, length): start + length must fit in the dim.
Status Narrow(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0)
    return Bad("narrow: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(Expr start, IntArg(c, "start"));
  TORCHCOST_ASSIGN_OR_RETURN(Expr length, IntArg(c, "length"));
  const Expr size = self.shape[d];
  std::optional<int64_t> ks = start.AsConstant();
  if (ks && *ks < 0) start = size + *ks;
  if (length.IsConstant() && *length.AsConstant() < 0) {
    return Bad("narrow: argument 'length' must be non-negative; got " +
               length.ToString());
  }
  TORCHCOST_RETURN_IF_ERROR(c.RequireLe(
      start + length, size,
      "narrow: start + length must not exceed dim " + std::to_string(d0) +
          " of self " + ShapeToString(self.shape)));
  Shape out = self.shape;
  out[d] = length;
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// chunk(self, chunks, dim=0) -> Tensor[]: pieces of ceildiv(size, chunks).
Status Chunk(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0)
    return Bad("chunk: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t chunks, ConstIntArg(c, "chunks"));
  if (chunks <= 0)
    return Bad("chunk: argument 'chunks' must be positive; got " +
               std::to_string(chunks));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  const Expr size = self.shape[d];
  Result<Shape> sizes =
      size.IsConstant()
          ? EvenPieces(c, size, sym::CeilDiv(size, chunks), chunks, "chunk")
          : EvenPieces(c, size, Expr(), chunks, "chunk");
  if (!sizes.ok()) return sizes.status();
  EmitPieces(self, d, *sizes, outputs);
  return Status::Ok();
}

// split.Tensor(self, split_size, dim), split.sizes / split_with_sizes(self,
// split_sizes, dim).
Status Split(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0)
    return Bad("split: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  const Expr size = self.shape[d];
  std::string_view name;
  const RValue* arg = FirstArg(c, {"split_sizes", "split_size"}, &name);
  if (arg == nullptr)
    return Bad(
        "split: the schema has no 'split_size' or 'split_sizes' argument");
  if (arg->kind == RValue::Kind::kIntList || arg->kind == RValue::Kind::kList) {
    std::optional<Shape> sizes = AsIntList(*arg);
    if (!sizes)
      return Bad("argument " + Quote(name) + " must be a list of ints");
    Expr total = 0;
    for (const Expr& s : *sizes) {
      if (s.IsConstant() && *s.AsConstant() < 0) {
        return Bad("split: argument " + Quote(name) + " has a negative size " +
                   s.ToString());
      }
      total = total + s;
    }
    TORCHCOST_RETURN_IF_ERROR(c.RequireEq(
        total, size,
        "split: the sizes in argument " + Quote(name) + " must sum to dim " +
            std::to_string(d0) + " of self " + ShapeToString(self.shape)));
    EmitPieces(self, d, *sizes, outputs);
    return Status::Ok();
  }
  TORCHCOST_ASSIGN_OR_RETURN(Expr split, IntArg(c, name));
  Result<Shape> sizes = EvenPieces(c, size, split, std::nullopt, "split");
  if (!sizes.ok()) return sizes.status();
  EmitPieces(self, d, *sizes, outputs);
  return Status::Ok();
}

// unbind(self, dim=0) -> Tensor[]: one tensor per index of dim (a constant
// size).
Status Unbind(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0)
    return Bad("unbind: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  std::optional<int64_t> n = self.shape[d].AsConstant();
  if (!n) {
    return Bad("unbind: dim " + std::to_string(d0) +
               " of self has symbolic size " + self.shape[d].ToString() +
               ", so the number of outputs is unknown");
  }
  Shape shape = self.shape;
  shape.erase(shape.begin() + d);
  outputs->push_back(
      RValue::Tensors(std::vector<TensorType>(*n, WithShape(self, shape))));
  return Status::Ok();
}

// cat(tensors, dim=0): dims other than `dim` must agree; `dim` sums.
// NB: as PyTorch still does, 1-D tensors of size 0 are skipped.
Status Cat(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<TensorType> all,
                             TensorListArg(c, "tensors"));
  std::vector<TensorType> ts;
  ResultTypeState state;
  for (const TensorType& t : all) {
    RValue v = RValue::Tensor(t);
    // Every operand of cat is a dimensioned tensor for promotion.
    v.t.shape.assign(1, 1);
    state.Add(v);
    if (t.shape.size() == 1 && t.shape[0] == Expr(0)) continue;
    ts.push_back(t);
  }
  if (all.empty()) return Bad("cat: argument 'tensors' must be non-empty");
  if (ts.empty()) {
    outputs->push_back(RValue::Tensor(all[0]));
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(ts[0].shape.size());
  if (rank == 0)
    return Bad(
        "cat: zero-dimensional tensor (argument 'tensors' item 0) cannot be "
        "concatenated");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  Shape out = ts[0].shape;
  for (size_t k = 1; k < ts.size(); ++k) {
    const Shape& s = ts[k].shape;
    if (static_cast<int64_t>(s.size()) != rank) {
      return Bad("cat: tensors must have the same rank; item 0 is " +
                 ShapeToString(ts[0].shape) + " and item " + std::to_string(k) +
                 " is " + ShapeToString(s) + " (argument 'tensors')");
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (i == d) continue;
      if (s[i] != out[i] && s[i].IsConstant() && out[i].IsConstant()) {
        return Bad("cat: sizes must match except in dim " + std::to_string(d0) +
                   "; item 0 is " + ShapeToString(ts[0].shape) + " and item " +
                   std::to_string(k) + " is " + ShapeToString(s) +
                   " (argument 'tensors')");
      }
      TORCHCOST_RETURN_IF_ERROR(
          c.RequireEq(s[i], out[i],
                      "cat: dim " + std::to_string(i) + " of item " +
                          std::to_string(k) + " must equal that of item 0"));
    }
    out[d] = out[d] + s[d];
  }
  TensorType t;
  t.shape = out;
  t.dtype = state.Result();
  outputs->push_back(RValue::Tensor(t));
  return Status::Ok();
}

// stack(tensors, dim=0): equal shapes; a new dim of size len(tensors) at dim.
Status Stack(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<TensorType> ts,
                             TensorListArg(c, "tensors"));
  if (ts.empty()) return Bad("stack: argument 'tensors' must be non-empty");
  const int64_t rank = static_cast<int64_t>(ts[0].shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank + 1, "dim"));
  ResultTypeState state;
  for (size_t k = 0; k < ts.size(); ++k) {
    RValue v = RValue::Tensor(ts[k]);
    v.t.shape.assign(1, 1);
    state.Add(v);
    const Shape& s = ts[k].shape;
    if (static_cast<int64_t>(s.size()) != rank) {
      return Bad("stack: tensors must have equal shapes; item 0 is " +
                 ShapeToString(ts[0].shape) + " and item " + std::to_string(k) +
                 " is " + ShapeToString(s) + " (argument 'tensors')");
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (s[i] != ts[0].shape[i] && s[i].IsConstant() &&
          ts[0].shape[i].IsConstant()) {
        return Bad("stack: tensors must have equal shapes; item 0 is " +
                   ShapeToString(ts[0].shape) + " and item " +
                   std::to_string(k) + " is " + ShapeToString(s) +
                   " (argument 'tensors')");
      }
      TORCHCOST_RETURN_IF_ERROR(
          c.RequireEq(s[i], ts[0].shape[i],
                      "stack: dim " + std::to_string(i) + " of item " +
                          std::to_string(k) + " must equal that of item 0"));
    }
  }
  TensorType t;
  t.shape = ts[0].shape;
  t.shape.insert(t.shape.begin() + d, Expr(static_cast<int64_t>(ts.size())));
  t.dtype = state.Result();
  outputs->push_back(RValue::Tensor(t));
  return Status::Ok();
}

// constant_pad_nd(self, pad) / pad(self, pad, mode): pad = [before_last,
// after_last, before_prev, after_prev, ...]; negative pads crop.
Status Pad(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  TORCHCOST_ASSIGN_OR_RETURN(Shape pad, IntListArg(c, "pad"));
  const size_t rank = self.shape.size();
  if (pad.size() % 2 != 0 || pad.size() / 2 > rank) {
    return Bad("pad: argument 'pad' has " + std::to_string(pad.size()) +
               " entries; it needs an even number, at most twice the rank " +
               std::to_string(rank));
  }
  Shape out = self.shape;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    Expr& d = out[rank - 1 - i];
    d = d + pad[2 * i] + pad[2 * i + 1];  // before + size + after
    TORCHCOST_RETURN_IF_ERROR(c.RequireLe(0, d,
                                          "pad: padded dim " +
                                              std::to_string(rank - 1 - i) +
                                              " must not be negative"));
  }
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

}  // namespace torchcost::rules::impl
