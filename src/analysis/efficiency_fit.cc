// Least squares for the inverse efficiencies: the samples' relative errors
// are linear in x_c = 1 / e_c, so one QR solve gives the fit.
#include "torchcost/efficiency_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace torchcost {

Result<EfficiencyFit> FitEfficiencies(const std::vector<TimingSample>& samples,
                                      double tie_penalty) {
  if (samples.empty()) {
    return Status::InvalidArgument("efficiency fit: no timing samples");
  }
  EfficiencyFit fit;
  for (const TimingSample& s : samples) {
    if (!(s.measured_seconds > 0) || !std::isfinite(s.measured_seconds)) {
      return Status::InvalidArgument("efficiency fit: sample '" + s.name +
                                     "' has a measured time not positive");
    }
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
  const int n = static_cast<int>(samples.size());
  const int k = static_cast<int>(cols.size());
  const int pairs = k * (k - 1) / 2;
  // Row i: r_ic / m_i, so that A x - 1 is the relative error of sample i.
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n + pairs, k);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n + pairs);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < k; ++j) {
      a(i, j) =
          samples[i].roofline_seconds[cols[j]] / samples[i].measured_seconds;
    }
    rhs(i) = 1;
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
  fit.rank = static_cast<int>(
      Eigen::ColPivHouseholderQR<Eigen::MatrixXd>(a.topRows(n)).rank());
  const Eigen::VectorXd x = a.colPivHouseholderQr().solve(rhs);
  for (int j = 0; j < k; ++j) {
    if (!(x(j) > 0) || !std::isfinite(x(j))) {
      return Status::InvalidArgument(
          "efficiency fit: the samples give op class " +
          std::string(OpClassName(static_cast<OpClass>(cols[j]))) +
          " a time not positive (they do not separate it from the others)");
    }
    fit.efficiency[cols[j]] = 1 / x(j);
  }
  // Each sample's prediction under the fit: sum_c r_ic / e_c.
  double sum_sq = 0;
  for (const TimingSample& s : samples) {
    double p = 0;
    for (int c = 0; c < kNumOpClasses; ++c)
      p += s.roofline_seconds[c] / fit.efficiency[c];
    fit.predicted_seconds.push_back(p);
    const double rel = p / s.measured_seconds - 1;
    sum_sq += rel * rel;
    fit.max_relative_error = std::max(fit.max_relative_error, std::abs(rel));
  }
  fit.rms_relative_error = std::sqrt(sum_sq / n);
  return fit;
}

}  // namespace torchcost
