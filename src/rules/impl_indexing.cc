// Shape functions of advanced indexing, tensor_split and upsampling
// (rules/indexing.yaml, rules/upsample.yaml).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
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

// The entries of a Tensor?[] argument: a tensor or nullopt (None) each.
Result<std::vector<std::optional<TensorType>>> OptionalTensors(
    ImplContext& c, std::string_view name) {
  const RValue& l = c.Arg(name);
  std::vector<std::optional<TensorType>> out;
  if (l.kind == RValue::Kind::kTensorList) {
    for (const TensorType& t : l.tensors) out.emplace_back(t);
  } else if (l.kind == RValue::Kind::kList) {
    for (const RValue& item : l.items) {
      if (item.kind == RValue::Kind::kTensor)
        out.emplace_back(item.t);
      else if (item.kind == RValue::Kind::kNone)
        out.emplace_back(std::nullopt);
      else
        return Bad("argument " + Quote(name) +
                   " must be a list of tensors or None");
    }
  } else {
    return Bad("argument " + Quote(name) +
               " must be a list of tensors or None");
  }
  return out;
}

// Returns a float list argument (a list of floats, or one float), or nullopt if
// it is None.
Result<std::optional<std::vector<double>>> FloatListArg(ImplContext& c,
                                                        std::string_view name) {
  const RValue& v = c.Arg(name);
  if (v.kind == RValue::Kind::kNone || v.kind == RValue::Kind::kUnknown)
    return std::optional<std::vector<double>>();
  std::vector<double> out;
  auto add = [&](const RValue& x) -> bool {
    if (x.kind == RValue::Kind::kFloat) {
      out.push_back(x.f);
      return true;
    }
    if (x.kind == RValue::Kind::kInt) {
      if (auto k = x.i.AsConstant()) {
        out.push_back(static_cast<double>(*k));
        return true;
      }
    }
    return false;
  };
  bool ok = true;
  if (v.kind == RValue::Kind::kList) {
    for (const RValue& x : v.items) ok = ok && add(x);
  } else if (v.kind == RValue::Kind::kIntList) {
    for (const Expr& e : v.ints) ok = ok && add(RValue::Int(e));
  } else {
    ok = add(v);
  }
  if (!ok)
    return Bad("argument " + Quote(name) +
               " must be a list of constant floats");
  return std::optional<std::vector<double>>(std::move(out));
}

}  // namespace

// index.Tensor(self, indices): PyTorch's advanced indexing. The non-None
// indices broadcast to one shape B; if they are adjacent, B replaces the
// indexed dims in place, else B leads and the other dims follow (NumPy rule).
// NB: a bool or uint8 index selects a data-dependent number of elements: an
// error.
Status Index(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  TORCHCOST_ASSIGN_OR_RETURN(auto indices, OptionalTensors(c, "indices"));
  const size_t rank = self.shape.size();
  if (indices.size() > rank) {
    return Bad("index: too many indices (" + std::to_string(indices.size()) +
               ") for a tensor of rank " + std::to_string(rank) +
               " (argument 'indices')");
  }
  Shape b;
  bool first = true;
  int64_t lo = -1, hi = -1;
  bool adjacent = true;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i]) continue;
    const TensorType& t = *indices[i];
    if (t.dtype == DType::kBool || t.dtype == DType::kUInt8) {
      return Bad(
          "index: a bool or uint8 mask (argument 'indices') selects a "
          "data-dependent number of elements");
    }
    if (hi >= 0 && static_cast<int64_t>(i) != hi + 1) adjacent = false;
    if (lo < 0) lo = static_cast<int64_t>(i);
    hi = static_cast<int64_t>(i);
    if (first) {
      b = t.shape;
      first = false;
    } else {
      TORCHCOST_ASSIGN_OR_RETURN(
          b, BroadcastShapes(c, b, t.shape, "index: indices"));
    }
  }
  if (first) {  // every index None: self itself (a view, as PyTorch returns it)
    outputs->push_back(RValue::Tensor(self));
    return Status::Ok();
  }
  Shape out;
  if (adjacent) {
    out.insert(out.end(), self.shape.begin(), self.shape.begin() + lo);
    out.insert(out.end(), b.begin(), b.end());
    out.insert(out.end(), self.shape.begin() + hi + 1, self.shape.end());
  } else {
    out = b;
    for (size_t i = 0; i < rank; ++i) {
      if (i >= indices.size() || !indices[i]) out.push_back(self.shape[i]);
    }
  }
  outputs->push_back(RValue::Tensor(WithShape(self, std::move(out))));
  return Status::Ok();
}

// tensor_split.indices(self, indices, dim) / tensor_split.sections(self,
// sections, dim) -> Tensor[].
Status TensorSplit(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0)
    return Bad("tensor_split: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  const Expr size = self.shape[d];
  Shape sizes;
  const RValue& sections = c.Arg("sections");
  if (sections.kind == RValue::Kind::kInt) {
    // sections n: the first size % n pieces have size / n + 1 elements, the
    // rest size / n.
    auto n = sections.i.AsConstant();
    auto s = size.AsConstant();
    if (!n || *n <= 0)
      return Bad(
          "tensor_split: argument 'sections' must be a positive constant");
    if (!s)
      return Bad("tensor_split: sections of a symbolic dim " + size.ToString() +
                 " are not supported");
    for (int64_t i = 0; i < *n; ++i)
      sizes.push_back(*s / *n + (i < *s % *n ? 1 : 0));
  } else {
    TORCHCOST_ASSIGN_OR_RETURN(Shape idx, IntListArg(c, "indices"));
    TORCHCOST_ASSIGN_OR_RETURN(std::vector<int64_t> k,
                               ConstList(idx, "indices"));
    // Pieces [0, k0), [k0, k1), ..., [k_last, size): bounds clamped to [0,
    // size] (negative: from the end).
    Expr prev(0);
    for (int64_t v : k) {
      Expr x = v < 0 ? size + v : Expr(v);
      if (c.ctx().ProveLe(x, size) != sym::Truth::kTrue) x = sym::Min(x, size);
      if (c.ctx().ProveLe(prev, x) != sym::Truth::kTrue) x = sym::Max(x, prev);
      sizes.push_back(x - prev);
      prev = x;
    }
    sizes.push_back(size - prev);
  }
  std::vector<TensorType> pieces;
  for (const Expr& s : sizes) {
    Shape shape = self.shape;
    shape[d] = s;
    pieces.push_back(WithShape(self, std::move(shape)));
  }
  outputs->push_back(RValue::Tensors(std::move(pieces)));
  return Status::Ok();
}

// upsample_*{1,2,3}d(.vec): [N, C, *SP] -> [N, C, *OSP], OSP = output_size if
// given, else floor(SP * scale) per dim (PyTorch's compute_output_size).
Status Upsample(ImplContext& c, std::vector<RValue>* outputs) {
  std::string_view in_name;
  const RValue* in = FirstArg(c, {"input", "self"}, &in_name);
  if (in == nullptr || in->kind != RValue::Kind::kTensor)
    return Bad("upsample: argument 'input' must be a tensor");
  const TensorType& x = in->t;
  const RValue& os = c.Arg("output_size");
  std::optional<Shape> out_size;
  if (os.kind != RValue::Kind::kNone && os.kind != RValue::Kind::kUnknown) {
    out_size = AsIntList(os);
    if (!out_size)
      return Bad("upsample: argument 'output_size' must be a list of ints");
  }
  std::vector<double> scales;
  if (!out_size) {
    TORCHCOST_ASSIGN_OR_RETURN(auto sf, FloatListArg(c, "scale_factors"));
    if (!sf)
      return Bad(
          "upsample: either 'output_size' or 'scale_factors' must be given");
    scales = *sf;
  }
  // NB: one scale (a float given for float[]) applies to every spatial dim.
  if (!out_size && scales.size() == 1 && x.shape.size() > 3)
    scales.assign(x.shape.size() - 2, scales[0]);
  const size_t nsp = out_size ? out_size->size() : scales.size();
  if (nsp == 0 || x.shape.size() != nsp + 2) {
    return Bad("upsample: argument " + Quote(in_name) + " must be [N, C, " +
               std::to_string(nsp) + " spatial dims]; got " +
               ShapeToString(x.shape));
  }
  Shape out(x.shape.begin(), x.shape.begin() + 2);
  for (size_t i = 0; i < nsp; ++i) {
    if (out_size) {
      out.push_back((*out_size)[i]);
      continue;
    }
    const Expr& sp = x.shape[i + 2];
    const double s = scales[i];
    if (!(s > 0) || !std::isfinite(s))
      return Bad("upsample: argument 'scale_factors' must be positive");
    if (auto k = sp.AsConstant()) {
      // floor(in * scale)
      out.push_back(
          static_cast<int64_t>(std::floor(static_cast<double>(*k) * s)));
    } else if (s == std::floor(s)) {
      // an integer scale: in * scale exactly
      out.push_back(sp * static_cast<int64_t>(s));
    } else if (1.0 / s == std::floor(1.0 / s)) {
      // scale 1/m: floor(in / m)
      out.push_back(sym::FloorDiv(sp, static_cast<int64_t>(1.0 / s)));
    } else {
      return Bad("upsample: a symbolic size " + sp.ToString() +
                 " times the scale " + std::to_string(s) +
                 " is not an integer expression");
    }
  }
  outputs->push_back(RValue::Tensor(WithShape(x, std::move(out))));
  return Status::Ok();
}

}  // namespace torchcost::rules::impl
