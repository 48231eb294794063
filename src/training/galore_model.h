// What GaLore's AdamW keeps and allocates per parameter, following the
// reference implementation (github.com/jiaweizzhao/GaLore:
// galore_torch/adamw.py and galore_projector.py, proj_type 'std'): projected
// Adam states, the projector, the step's temporaries as a replayable event
// list, and FLOPs.
#ifndef TORCHCOST_SRC_ANALYSIS_GALORE_MODEL_H_
#define TORCHCOST_SRC_ANALYSIS_GALORE_MODEL_H_

#include <cstdint>
#include <vector>

#include "torchcost/dtype.h"
#include "torchcost/galore.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"
#include "training/memory_event.h"

namespace torchcost::training {

// The projection of one targeted [m, n] weight: 'std' projects on the smaller
// dim, so m >= n keeps P = Vh[:k, :] (right, low rank gradient [m, k]) and
// m < n keeps P = U[:, :k] (left, [k, n]); k = min(r, m, n) (slicing past the
// end).
struct GaloreShape {
  int64_t m = 0, n = 0;
  int64_t k = 0;       // Effective rank.
  bool right = false;  // m >= n.
  // Elements of the projected gradient and of each Adam state: m*k or k*n.
  int64_t projected = 0;
};

// Returns the projection of a [m, n] weight at rank r.
GaloreShape ShapeOf(int64_t m, int64_t n, int64_t rank);

// Bytes of the projector GaLore keeps for a weight (its ortho_matrix's
// storage). NB: in float32 the matrix is a slice of the SVD's Vh or U and keeps
// its whole storage alive: min(m, n)^2 * 4 bytes, not k * max(m, n) * 4; other
// dtypes keep a cast copy of the slice, k * (n or m) elements.
int64_t ProjectorBytes(const GaloreShape& s, DType dtype);

// Bytes of optimizer state of one parameter under GaLore's AdamW: exp_avg and
// exp_avg_sq of the projected size plus the projector if targeted, of the
// parameter's size otherwise. NB: the reference's `step` is a Python int (0
// bytes).
int64_t GaloreStateBytes(const std::vector<int64_t>& shape, DType dtype,
                         bool targeted, const GaloreConfig& c);

// FLOPs of one parameter's update, the SVD amortized over the gap.
int64_t GaloreFlops(const std::vector<int64_t>& shape, bool targeted,
                    const GaloreConfig& c);

// FLOPs of the thin SVD of an [m, n] matrix, U, S and V computed (Golub & Van
// Loan, Matrix Computations, 4th ed., Sec. 8.6.3, the R-SVD count): with
// a = max(m, n) and b = min(m, n), 6ab^2 + 11b^3.
int64_t SvdFlops(int64_t m, int64_t n);

// An update step is a sequence of memory events (training/memory_event.h),
// replayed by the step simulation: tensors are numbered per update, all TEMP;
// slots are the Python local names that outlive a parameter's iteration
// (rebinding one frees what it held). The local names of the reference's AdamW
// loop that hold temporaries.
inline constexpr int kGradSlot = 0, kDenomSlot = 1, kNormGradSlot = 2,
                     kNumSlots = 3;

// Returns the events of one parameter's update in GaLore's AdamW (an SVD
// first if `svd`); the slots are freed when step() returns.
std::vector<Event> GaloreUpdate(const std::vector<int64_t>& shape, DType dtype,
                                bool targeted, const GaloreConfig& c, bool svd);

// Returns, parallel to graph.params, whether GaLore projects each parameter:
// trainable, 2-D, the weight of a Linear module (scope type "Linear" or the
// weight of an aten::linear node) whose path (or whose name) matches the
// targets. Errors if the regex is bad or nothing matches.
Result<std::vector<bool>> GaloreTargets(const ir::Graph& graph,
                                        const std::vector<bool>& trainable,
                                        const GaloreConfig& c);

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_ANALYSIS_GALORE_MODEL_H_
