// Fitting the achieved fraction of peak per op class from measured times: each
// sample is a measured time and the roofline seconds of its kernels per class
// (docs/calibration.md, "The fit").
#ifndef TORCHCOST_EFFICIENCY_FIT_H_
#define TORCHCOST_EFFICIENCY_FIT_H_

#include <array>
#include <string>
#include <vector>

#include "torchcost/op_class.h"
#include "torchcost/status.h"

namespace torchcost {

// The default weight of the penalty on differences between inverse
// efficiencies (relative to a sample's squared relative error).
inline constexpr double kTiePenalty = 1e-3;

// One measured piece of a step (a phase of one model, say) beside what the
// pure roofline (every efficiency 1) predicts for it, per OpClass.
struct TimingSample {
  std::string name;  // "mlp.py:mlp forward", for errors and reports.
  std::array<double, kNumOpClasses> roofline_seconds{};  // Per OpClass.
  double measured_seconds = 0;
};

// The fitted efficiencies and how well they explain the samples.
struct EfficiencyFit {
  // Achieved fraction of peak per OpClass; 1 for a class no sample has time
  // in. NB: may exceed 1 where the peak underrates the device (a CPU's
  // caches).
  std::array<double, kNumOpClasses> efficiency{1, 1, 1, 1, 1};
  std::array<bool, kNumOpClasses> fitted{};  // Classes some sample has time in.
  int rank = 0;  // Rank of the samples' matrix over the fitted classes.
  // Root mean square and largest |predicted / measured - 1| over the samples.
  double rms_relative_error = 0, max_relative_error = 0;
  std::vector<double> predicted_seconds;  // Per sample, with the fit.
};

// Returns the efficiencies e_c that minimise sum_i (p_i / m_i - 1)^2, where
// p_i = sum_c r_ic / e_c, plus tie_penalty * sum over pairs of fitted classes
// of (1/e_c - 1/e_d)^2 (NB: the penalty picks, among fits the samples cannot
// tell apart, the one nearest a common efficiency, and pulls a class that
// has little time in every sample towards the others). Errors: no sample, a
// measured time not positive or a roofline time negative (the sample named),
// a class fitted to a time not positive.
Result<EfficiencyFit> FitEfficiencies(const std::vector<TimingSample>& samples,
                                      double tie_penalty = kTiePenalty);

}  // namespace torchcost

#endif  // TORCHCOST_EFFICIENCY_FIT_H_
