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
  // Kernels the piece launches (TimeReport::class_kernels).
  double kernels = 0;
  // The seconds the sample's error is relative to: the measured time of the
  // whole step it is a piece of, so that every step weighs alike and each of
  // its pieces by its share of it; 0 means measured_seconds (each sample its
  // own relative error).
  double scale_seconds = 0;
};

// The fitted efficiencies and how well they explain the samples.
struct EfficiencyFit {
  // Achieved fraction of peak per OpClass; 1 for a class no sample has time
  // in. NB: may exceed 1 where the peak underrates the device (a CPU's
  // caches).
  std::array<double, kNumOpClasses> efficiency = kPureRoofline;
  std::array<bool, kNumOpClasses> fitted{};  // Classes some sample has time in.
  // Seconds per kernel (TimeReport::kernel_overhead); 0 unless fitted.
  double kernel_overhead = 0;
  bool overhead_fitted = false;  // If true, kernel_overhead was fitted.
  int rank = 0;  // Rank of the samples' matrix over the fitted unknowns.
  // The tie penalty of this fit: the one asked for, or a larger one where that
  // left a class a time not positive (FitEfficiencies).
  double tie_penalty = 0;
  // Root mean square and largest |predicted / measured - 1| over the samples
  // (each sample's own relative error, whatever its scale_seconds).
  double rms_relative_error = 0, max_relative_error = 0;
  std::vector<double> predicted_seconds;  // Per sample, with the fit.
};

// Returns the efficiencies e_c (and, if `fit_overhead` and some sample
// launches kernels, the overhead o) that minimise sum_i ((p_i - m_i) / s_i)^2,
// where p_i = sum_c r_ic / e_c + n_i o and s_i the sample's scale_seconds (or
// m_i where that is 0), plus tie_penalty * sum over pairs of
// fitted classes of (1/e_c - 1/e_d)^2 (NB: the penalty picks, among fits the
// samples cannot tell apart, the one nearest a common efficiency, and pulls a
// class that has little time in every sample towards the others; it does not
// touch o). An overhead fitted below 0, or with a class fitted to a time not
// positive, is dropped: o = 0 and the efficiencies refitted without it. A class
// still fitted to a time not positive raises a positive penalty tenfold until
// none is (EfficiencyFit::tie_penalty says which). Errors: no sample, a
// measured time not positive, a scale negative, or a roofline time or kernel
// count negative (the sample named), a class fitted to a time not positive
// (at a penalty of 0, or at the largest).
Result<EfficiencyFit> FitEfficiencies(const std::vector<TimingSample>& samples,
                                      double tie_penalty = kTiePenalty,
                                      bool fit_overhead = false);

}  // namespace torchcost

#endif  // TORCHCOST_EFFICIENCY_FIT_H_
