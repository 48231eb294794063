// Storages: the allocations of a step. Every tensor value of the graph stands
// for one (a list for one per element); views share their input's, so a
// storage is allocated once and freed once whatever aliases it.
#ifndef TORCHCOST_SRC_MEMORY_STORAGES_H_
#define TORCHCOST_SRC_MEMORY_STORAGES_H_

#include <vector>

#include "ir/small_ints.h"
#include "passes/shape_prop.h"
#include "rules/value.h"
#include "torchcost/graph.h"
#include "torchcost/training.h"

namespace torchcost::memory {

// One allocation: a tensor's storage, shared by its views.
struct Storage {
  sym::Expr bytes;
  MemCategory category = MemCategory::kTemp;
  int id = -1;  // Its index in StorageTable::storages.
  bool live = false;
  // Held by the caller for the whole step (params, buffers, inputs, outputs).
  bool pinned = false;
  int last_use = -1;  // Last forward node that reads it.
  // Backward nodes (or checkpoint segments) that still hold it.
  int saved_by = 0;
  int grad_refs = 0;  // Gradient slots that point at it.
};

// A batched matmul's copy of one argument: bmm saves it instead of the
// argument's own storage.
struct FoldCopy {
  int node = -1;
  int value = -1;    // The argument.
  int storage = -1;  // A temporary of `node`.
};

// The storages of a step and the values and nodes that own them.
struct StorageTable {
  std::vector<Storage> storages;
  // Per value: its storage, or -1.
  std::vector<int> storage_of;
  // Per list value: its elements' storages.
  std::vector<ir::SmallInts> list_storages;
  // Per node: the storages its outputs allocate.
  std::vector<ir::SmallInts> node_new;
  // Per node: its temporaries' storages.
  std::vector<ir::SmallInts> node_temps;
  // Held before the step: params, buffers, inputs.
  std::vector<int> setup;
  // The copies batched matmuls fold their arguments into, in node order.
  std::vector<FoldCopy> fold_copies;

  // Adds a storage (not live) and returns its id.
  int Add(sym::Expr bytes, MemCategory category);
  // Appends the storages value `v` stands for (one for a tensor, one per
  // element for a list). `List` is a std::vector<int> or a ir::SmallInts.
  template <typename List>
  void Of(int v, List* out) const {
    if (storage_of[v] >= 0) out->push_back(storage_of[v]);
    for (int s : list_storages[v]) out->push_back(s);
  }
  // Returns true if storage `s` exists before the step.
  bool IsSetup(int s) const;
  Storage& operator[](int s) { return storages[s]; }
  const Storage& operator[](int s) const { return storages[s]; }
  int size() const { return static_cast<int>(storages.size()); }
  // Returns the storage of node `node`'s fold copy of value `value`, or -1.
  int FoldCopyOf(int node, int value) const;
};

// Returns a tensor's bytes: numel times the element size (4 for an unknown
// dtype).
sym::Expr BytesOf(const rules::TensorType& t);

// Returns true if `node`, a reshape or flatten of an expand, copies.
// NB: views alias their input, but a reshape (or flatten) of a broadcast, an
// expand that grew a size-1 dim, copies when it merges that stride-0 dim with
// another (PyTorch's reshape cannot view it): Hugging Face's repeat_kv,
// x[:, :, None].expand(b, kv, rep, s, hd).reshape(b, kv * rep, s, hd).
bool ReshapeCopiesBroadcast(const ir::Graph& g,
                            const passes::ShapeFacts& shapes,
                            const ir::Node& node);

// Returns the bytes of the copy that aten::matmul node `ni` makes of its
// argument `arg` (0 self, 1 other) when both are batched (rank >= 3), as an
// expression that is 0 where reshape views: whether it copies can depend on
// symbols (batch 1), so the bytes are ind(P0 > 1) * ind(P1 > 1) * the
// expanded argument's bytes, P0 and P1 the products of its stride-0 and other
// batch dims.
// NB: torch.matmul expands both arguments to the common batch shape and
// reshapes each to [prod(batch), n, m] for bmm, which saves those; a reshape
// that must merge a stride-0 dim (an expand's broadcast, or matmul's own)
// with another dim not 1 copies (the stride-0 dims are found through
// transposes and reshapes that add or drop 1s; other strides are taken as
// mergeable). Hugging Face's repeat_kv with one KV head views as
// [B, H, S, hd] with H of stride 0, so its matmuls copy K and V at B > 1.
sym::Expr MatmulFoldCopyBytes(const ir::Graph& g,
                              const passes::ShapeFacts& shapes, int ni,
                              int arg);

// Gives every value of `g` its storages: params, buffers and inputs first
// (pinned, held from the setup), then each node's new outputs and
// temporaries in graph order; outputs are pinned and count as OTH.
// NB: an op without a rule is taken to allocate each tensor output (no
// aliasing).
void AssignStorages(const ir::Graph& g, const passes::ShapeFacts& shapes,
                    StorageTable* table);

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_STORAGES_H_
