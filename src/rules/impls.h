// Shape functions in C++ for what the rule language cannot say: reshape with
// -1, permute, squeeze, slicing, splitting, concatenation, reductions over dim
// lists, and PyTorch broadcasting with type promotion. Rules select them with
// `impl: NAME` (rules/README.md, "Shape functions in C++").
//
// Conventions shared by every function here:
// - Dim arguments (`int dim`, `int[] dims`) must be constants; negative dims
//   count from the end (PyTorch's maybe_wrap_dim; a 0-dim tensor accepts
//   dims -1 and 0).
// - Sizes may be symbolic. A fact the function needs but cannot prove is
//   handed to ImplContext::RequireEq / RequireLe, which fails on a disproven
//   fact and records an assumption on an unknown one.
// - Errors are one line and name the argument:
//   "dim 5 out of range for a tensor of rank 4 (argument 'dim')".
//
// Each is defined in impl_pointwise.cc, impl_views.cc or impl_reductions.cc
// and registered by name in builtin.cc.
#ifndef TORCHCOST_SRC_RULES_IMPLS_H_
#define TORCHCOST_SRC_RULES_IMPLS_H_

#include <vector>

#include "rules/builtin.h"
#include "rules/value.h"
#include "torchcost/status.h"

namespace torchcost::rules::impl {

// ---------------------------------------------------------------------------
// Elementwise ops and casts (impl_pointwise.cc).

// Broadcasts every tensor operand; the dtype follows type promotion.
Status Broadcast(ImplContext& c, std::vector<RValue>* outputs);
// Like Broadcast, with a bool result (comparisons, logical ops).
Status BroadcastBool(ImplContext& c, std::vector<RValue>* outputs);
// Like Broadcast, but an integer or bool result becomes the default float
// dtype.
Status BroadcastFloat(ImplContext& c, std::vector<RValue>* outputs);
// In-place elementwise ops (add_, mul_, ...): other operands broadcast to self,
// the output.
Status BroadcastInplace(ImplContext& c, std::vector<RValue>* outputs);
// to(...) overloads and type_as: self's shape with the dtype of `dtype` or
// `other`.
Status To(ImplContext& c, std::vector<RValue>* outputs);

// ---------------------------------------------------------------------------
// Views and shape ops (impl_views.cc).

// view / reshape / _unsafe_view: self reshaped to `size` (one -1 inferred).
Status View(ImplContext& c, std::vector<RValue>* outputs);
// flatten(self, start_dim=0, end_dim=-1): dims start..end become one.
Status Flatten(ImplContext& c, std::vector<RValue>* outputs);
// unflatten(self, dim, sizes): dim becomes `sizes` (one -1 inferred).
Status Unflatten(ImplContext& c, std::vector<RValue>* outputs);
// permute(self, dims): a permutation of all dims.
Status Permute(ImplContext& c, std::vector<RValue>* outputs);
// transpose(self, dim0, dim1): swaps two dims.
Status Transpose(ImplContext& c, std::vector<RValue>* outputs);
// t(self): transposes a matrix; vectors and scalars pass through.
Status T(ImplContext& c, std::vector<RValue>* outputs);
// squeeze(self), squeeze.dim(self, dim), squeeze.dims(self, dim[]): removes
// dims of size 1.
Status Squeeze(ImplContext& c, std::vector<RValue>* outputs);
// unsqueeze(self, dim): inserts a dim of size 1 at dim.
Status Unsqueeze(ImplContext& c, std::vector<RValue>* outputs);
// expand(self, size) or expand_as(self, other): -1 keeps a dim; new dims lead.
Status Expand(ImplContext& c, std::vector<RValue>* outputs);
// select(self, dim, index): removes dim.
Status Select(ImplContext& c, std::vector<RValue>* outputs);
// slice(self, dim=0, start=None, end=None, step=1).
Status Slice(ImplContext& c, std::vector<RValue>* outputs);
// narrow(self, dim, start, length): start + length must fit in the dim.
Status Narrow(ImplContext& c, std::vector<RValue>* outputs);
// chunk(self, chunks, dim=0) -> Tensor[]: pieces of ceildiv(size, chunks).
Status Chunk(ImplContext& c, std::vector<RValue>* outputs);
// split.Tensor / split.sizes / split_with_sizes -> Tensor[].
Status Split(ImplContext& c, std::vector<RValue>* outputs);
// unbind(self, dim=0) -> Tensor[]: one tensor per index of dim.
Status Unbind(ImplContext& c, std::vector<RValue>* outputs);
// cat(tensors, dim=0): dims other than `dim` must agree; `dim` sums.
Status Cat(ImplContext& c, std::vector<RValue>* outputs);
// stack(tensors, dim=0): equal shapes; a new dim of size len(tensors) at dim.
Status Stack(ImplContext& c, std::vector<RValue>* outputs);
// constant_pad_nd(self, pad) / pad(self, pad, mode): pads (or crops) trailing
// dims.
Status Pad(ImplContext& c, std::vector<RValue>* outputs);

// ---------------------------------------------------------------------------
// Reductions (impl_reductions.cc).

// Reduces the `dim` dims (all if none); the dtype is `dtype` or self's.
Status Reduce(ImplContext& c, std::vector<RValue>* outputs);
// Like Reduce, but integers and bools accumulate in int64 (sum, prod).
Status ReduceSum(ImplContext& c, std::vector<RValue>* outputs);
// Like Reduce, with a bool result, or uint8 for a uint8 self (all, any).
Status ReduceBool(ImplContext& c, std::vector<RValue>* outputs);
// Like Reduce, with an int64 result (argmax, argmin).
Status ReduceIndex(ImplContext& c, std::vector<RValue>* outputs);
// Like Reduce, returning (values, int64 indices) (max.dim, min.dim).
Status ReduceWithIndices(ImplContext& c, std::vector<RValue>* outputs);

// ---------------------------------------------------------------------------
// Transformer ops (impl_transformer.cc).

// einsum(equation, tensors): the output shape the equation gives
// (rules/einsum.h).
Status Einsum(ImplContext& c, std::vector<RValue>* outputs);
// _scaled_dot_product_flash_attention: output [*N, L, Ev], logsumexp [*N, L]
// float32, empty cum_seq_q/k, max_q = L and max_k = S (SymInts), philox seed
// and offset, debug_attn_mask ([*N, L, S] if return_debug_mask, else [0]).
Status SdpaFlash(ImplContext& c, std::vector<RValue>* outputs);

// ---------------------------------------------------------------------------
// Indexing and resampling (impl_indexing.cc).
// index.Tensor(self, indices): advanced indexing by int64 tensors (None keeps a
// dim).
Status Index(ImplContext& c, std::vector<RValue>* outputs);
// tensor_split.indices / .sections -> Tensor[]: pieces between the indices, or
// n near-equal pieces.
Status TensorSplit(ImplContext& c, std::vector<RValue>* outputs);
// upsample_*(.vec): [N, C, *SP] -> [N, C, *output_size] or floor(SP *
// scale_factors).
Status Upsample(ImplContext& c, std::vector<RValue>* outputs);
}  // namespace torchcost::rules::impl

#endif  // TORCHCOST_SRC_RULES_IMPLS_H_
