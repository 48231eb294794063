// Least squares for the inverse efficiencies (and the per-kernel overhead):
// the samples' scaled errors are linear in x_c = 1 / e_c and o, so one QR
// solve gives the fit.
#include "torchcost/efficiency_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/fit_errors.h"

namespace torchcost {
namespace {

// NB: the overhead's column is n_i * 1 us / s_i, so that its unknown is o in
// microseconds, of the order of the x_c, and the QR's rank threshold treats
// the columns alike.
constexpr double kOverheadUnit = 1e-6;

// How many times the tie penalty may grow tenfold (kTiePenalty: to 1e13).
constexpr int kMaxTieSteps = 16;

// The least-squares solution over the classes `cols` (and the overhead if
// `overhead`): the unknowns in that order, and the rank of the samples' rows.
struct Solution {
  Eigen::VectorXd x;
  int rank = 0;
};

Solution Solve(const std::vector<TimingSample>& samples,
               const std::vector<int>& cols, bool overhead,
               double tie_penalty) {
  const int n = static_cast<int>(samples.size());
  const int k = static_cast<int>(cols.size());
  const int unknowns = k + (overhead ? 1 : 0);
  const int pairs = k * (k - 1) / 2;
  // Row i: r_ic / s_i (and n_i us / s_i), right-hand side m_i / s_i, so that
  // row i of A x - rhs is (p_i - m_i) / s_i.
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n + pairs, unknowns);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n + pairs);
  for (int i = 0; i < n; ++i) {
    const TimingSample& s = samples[i];
    const double scale =
        s.scale_seconds > 0 ? s.scale_seconds : s.measured_seconds;
    for (int j = 0; j < k; ++j) {
      a(i, j) = s.roofline_seconds[cols[j]] / scale;
    }
    if (overhead) a(i, k) = s.kernels * kOverheadUnit / scale;
    rhs(i) = s.measured_seconds / scale;
  }
  // Penalty rows sqrt(lambda) (x_c - x_d) = 0 for each pair of classes.
  const double w = std::sqrt(std::max(tie_penalty, 0.0));
  int row = n;
  for (int p = 0; p < k; ++p) {
    for (int q = p + 1; q < k; ++q, ++row) {
      a(row, p) = w;
      a(row, q) = -w;
    }
  }
  Solution out;
  out.rank = static_cast<int>(
      Eigen::ColPivHouseholderQR<Eigen::MatrixXd>(a.topRows(n)).rank());
  out.x = a.colPivHouseholderQr().solve(rhs);
  return out;
}

}  // namespace

Result<EfficiencyFit> FitEfficiencies(const std::vector<TimingSample>& samples,
                                      double tie_penalty, bool fit_overhead) {
  if (samples.empty()) {
    return Status::InvalidArgument("efficiency fit: no timing samples");
  }
  EfficiencyFit fit;
  bool any_kernels = false;
  for (const TimingSample& s : samples) {
    if (!(s.measured_seconds > 0) || !std::isfinite(s.measured_seconds)) {
      return Status::InvalidArgument("efficiency fit: sample '" + s.name +
                                     "' has a measured time not positive");
    }
    if (!(s.scale_seconds >= 0) || !std::isfinite(s.scale_seconds)) {
      return Status::InvalidArgument("efficiency fit: sample '" + s.name +
                                     "' has a scale that is negative");
    }
    if (!(s.kernels >= 0) || !std::isfinite(s.kernels)) {
      return Status::InvalidArgument("efficiency fit: sample '" + s.name +
                                     "' has a kernel count that is negative");
    }
    any_kernels = any_kernels || s.kernels > 0;
    for (int c = 0; c < kNumOpClasses; ++c) {
      if (!(s.roofline_seconds[c] >= 0) ||
          !std::isfinite(s.roofline_seconds[c])) {
        return Status::InvalidArgument(
            "efficiency fit: sample '" + s.name + "' has a roofline time of " +
            std::string(OpClassName(static_cast<OpClass>(c))) +
            " that is negative");
      }
      if (s.roofline_seconds[c] > 0) fit.fitted[c] = true;
    }
  }
  std::vector<int> cols;
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (fit.fitted[c]) cols.push_back(c);
  }
  if (cols.empty()) {
    return Status::InvalidArgument(
        "efficiency fit: no sample has roofline time in any op class");
  }
  const int k = static_cast<int>(cols.size());
  bool overhead = fit_overhead && any_kernels;
  Solution sol = Solve(samples, cols, overhead, tie_penalty);
  // NB: an overhead below 0 (kernels that take less than nothing), or one so
  // large that a class is left a time not positive, is dropped (o = 0).
  auto any_not_positive = [&] {
    for (int j = 0; j < k; ++j) {
      if (!(sol.x(j) > 0)) return true;
    }
    return false;
  };
  if (overhead && (!(sol.x(k) > 0) || any_not_positive())) {
    overhead = false;
    sol = Solve(samples, cols, overhead, tie_penalty);
  }
  // NB: a class still left a time not positive (samples that barely separate
  // it, measured on a busy machine) is pulled to the others by a penalty ten
  // times larger, and so on: as the penalty grows the fit tends to one common
  // 1/e, which is positive (every row and its right-hand side are), so a
  // bounded number of steps ends it.
  // A penalty of 0 asks for the plain least squares: no pull.
  fit.tie_penalty = std::max(tie_penalty, 0.0);
  for (int step = 0;
       fit.tie_penalty > 0 && any_not_positive() && step < kMaxTieSteps;
       ++step) {
    fit.tie_penalty *= 10;
    sol = Solve(samples, cols, overhead, fit.tie_penalty);
  }
  fit.rank = sol.rank;
  for (int j = 0; j < k; ++j) {
    if (!(sol.x(j) > 0) || !std::isfinite(sol.x(j))) {
      return Status::InvalidArgument(
          "efficiency fit: the samples give op class " +
          std::string(OpClassName(static_cast<OpClass>(cols[j]))) +
          " a time not positive (they do not separate it from the others)");
    }
    fit.efficiency[cols[j]] = 1 / sol.x(j);
  }
  if (overhead) {
    fit.overhead_fitted = true;
    fit.kernel_overhead = sol.x(k) * kOverheadUnit;
  }
  // Each sample's prediction under the fit: sum_c r_ic / e_c + n_i o.
  std::vector<double> measured;
  for (const TimingSample& s : samples) {
    fit.predicted_seconds.push_back(
        analysis::FittedSeconds(s, fit.efficiency, fit.kernel_overhead));
    measured.push_back(s.measured_seconds);
  }
  const analysis::RelativeErrors errors =
      analysis::RelativeErrorsOf(fit.predicted_seconds, measured);
  fit.rms_relative_error = errors.rms;
  fit.max_relative_error = errors.max;
  return fit;
}

}  // namespace torchcost
