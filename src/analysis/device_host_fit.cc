// The device and host fit: least squares by Eigen's QR, each step linear in
// its unknowns.
#include "torchcost/device_host_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/fit_errors.h"

namespace torchcost {
namespace {

// NB: the per-kernel columns are n * 1 us, so that their unknowns are in
// microseconds, of the order of the 1/e_c, and the QR's rank threshold treats
// the columns alike.
constexpr double kMicro = 1e-6;

// The x minimising |A x - b|^2; empty where A's columns are dependent.
std::vector<double> Solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  if (a.rows() == 0) return {};
  const auto qr = a.colPivHouseholderQr();
  if (qr.rank() < a.cols()) return {};
  const Eigen::VectorXd x = qr.solve(b);
  return std::vector<double>(x.data(), x.data() + x.size());
}

// Step (1): the inverse efficiencies of the classes `cols` and, if
// `overhead`, the device's microseconds per kernel after them.
std::vector<double> SolveDevice(const std::vector<DeviceTimingSample>& samples,
                                const std::vector<int>& cols, bool overhead) {
  const int k = static_cast<int>(cols.size());
  std::vector<std::array<double, kNumOpClasses + 1>> rows;
  std::vector<double> rhs;
  for (const DeviceTimingSample& d : samples) {
    for (int c = 0; c < kNumOpClasses; ++c) {
      const double r = d.timing.roofline_seconds[c];
      if (!(r > 0) && !(d.device_class_seconds[c] > 0)) continue;
      std::array<double, kNumOpClasses + 1> row{};
      for (int j = 0; j < k; ++j)
        if (cols[j] == c) row[j] = r / d.device_seconds;
      if (overhead) row[k] = d.class_kernels[c] * kMicro / d.device_seconds;
      rows.push_back(row);
      rhs.push_back(d.device_class_seconds[c] / d.device_seconds);
    }
  }
  const int n = k + (overhead ? 1 : 0);
  Eigen::MatrixXd a(rows.size(), n);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int j = 0; j < n; ++j) a(i, j) = rows[i][j];
  return Solve(a, Eigen::Map<const Eigen::VectorXd>(rhs.data(), rhs.size()));
}

// Step (2): the host's costs per (kernels, tensors) of the host-bound phases
// `rows` ({n_i, T_i, W_i}) over the first `n` columns: both >= 0, or where
// one comes out below 0, the better of each alone.
std::array<double, 2> SolveHost(const std::vector<std::array<double, 3>>& rows,
                                int n) {
  auto fit =
      [&](std::vector<int> use) -> std::pair<std::vector<double>, double> {
    Eigen::MatrixXd a(rows.size(), use.size());
    Eigen::VectorXd b = Eigen::VectorXd::Ones(rows.size());
    for (size_t i = 0; i < rows.size(); ++i)
      for (size_t j = 0; j < use.size(); ++j)
        a(i, j) = rows[i][use[j]] / rows[i][2];  // Relative to W_i.
    std::vector<double> x = Solve(a, b);
    double sum_sq = 0;
    if (!x.empty())
      sum_sq = (a * Eigen::Map<Eigen::VectorXd>(x.data(), x.size()) - b)
                   .squaredNorm();
    return {x, sum_sq};
  };
  std::array<double, 2> out{};
  if (rows.empty()) return out;
  if (n == 2) {
    auto [x, unused] = fit({0, 1});
    if (!x.empty() && x[0] >= 0 && x[1] >= 0) return {x[0], x[1]};
  }
  double best = -1;
  for (int j = 0; j < n; ++j) {
    auto [x, sum_sq] = fit({j});
    if (!x.empty() && x[0] > 0 && (best < 0 || sum_sq < best)) {
      out = {};
      out[j] = x[0];
      best = sum_sq;
    }
  }
  return out;
}

Status Check(const DeviceTimingSample& d) {
  const TimingSample& s = d.timing;
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument("device and host fit: sample '" + s.name +
                                   "' has " + what);
  };
  if (!(s.measured_seconds > 0) || !std::isfinite(s.measured_seconds))
    return bad("a wall time not positive");
  if (!(d.device_seconds > 0) || !std::isfinite(d.device_seconds))
    return bad("a device time not positive");
  // NB: !(v >= 0) is true for NaN too.
  auto bad_count = [](double v) { return !(v >= 0) || !std::isfinite(v); };
  if (bad_count(s.kernels) || bad_count(d.tensors))
    return bad("a kernel or tensor count negative or not finite");
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (bad_count(s.roofline_seconds[c]) ||
        bad_count(d.device_class_seconds[c]) || bad_count(d.class_kernels[c])) {
      return bad("a roofline time, device time or kernel count of " +
                 std::string(OpClassName(static_cast<OpClass>(c))) +
                 " negative or not finite");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<DeviceHostFit> FitDeviceAndHost(
    const std::vector<DeviceTimingSample>& samples) {
  if (samples.empty()) {
    return Status::InvalidArgument("device and host fit: no timing samples");
  }
  for (const DeviceTimingSample& d : samples)
    TORCHCOST_RETURN_IF_ERROR(Check(d));
  DeviceHostFit fit;
  std::vector<int> cols;
  for (int c = 0; c < kNumOpClasses; ++c) {
    for (const DeviceTimingSample& d : samples)
      fit.fitted[c] = fit.fitted[c] || d.timing.roofline_seconds[c] > 0;
    if (fit.fitted[c]) cols.push_back(c);
  }
  if (cols.empty()) {
    return Status::InvalidArgument(
        "device and host fit: no sample has roofline time in any op class");
  }
  const int k = static_cast<int>(cols.size());
  // (1), with the overhead; without it where it comes out below 0 or leaves a
  // class a time not positive.
  auto all_positive = [&](const std::vector<double>& x) {
    return !x.empty() &&
           std::all_of(x.begin(), x.end(), [](double v) { return v > 0; });
  };
  std::vector<double> x = SolveDevice(samples, cols, /*overhead=*/true);
  if (!all_positive(x)) x = SolveDevice(samples, cols, /*overhead=*/false);
  if (!all_positive(x)) {
    return Status::InvalidArgument(
        "device and host fit: the device's seconds give an op class a time "
        "not positive (they do not separate the classes)");
  }
  for (int j = 0; j < k; ++j) fit.efficiency[cols[j]] = 1 / x[j];
  if (static_cast<int>(x.size()) > k) fit.kernel_overhead = x[k] * kMicro;
  // (2) The host-bound phases of each kind.
  std::array<std::vector<std::array<double, 3>>, 3> host_rows;
  for (const DeviceTimingSample& d : samples) {
    const bool host_bound =
        d.timing.measured_seconds > kHostBoundRatio * d.device_seconds;
    fit.host_bound.push_back(host_bound);
    if (!host_bound) continue;
    const int kind = d.phase == StepPhase::kOptimizer  ? 2
                     : d.phase == StepPhase::kBackward ? 1
                                                       : 0;
    host_rows[kind].push_back(
        {d.timing.kernels, d.tensors, d.timing.measured_seconds});
  }
  fit.host.forward_kernel = SolveHost(host_rows[0], 1)[0];
  fit.host.backward_kernel = SolveHost(host_rows[1], 1)[0];
  const std::array<double, 2> opt = SolveHost(host_rows[2], 2);
  fit.host.optimizer_kernel = opt[0];
  fit.host.optimizer_tensor = opt[1];
  // Each phase: max(device, host).
  std::vector<double> walls;
  for (const DeviceTimingSample& d : samples) {
    const TimingSample& s = d.timing;
    const double device =
        analysis::FittedSeconds(s, fit.efficiency, fit.kernel_overhead);
    const double host = fit.host.Seconds(d.phase, s.kernels, d.tensors);
    fit.predicted_seconds.push_back(std::max(device, host));
    walls.push_back(s.measured_seconds);
  }
  const analysis::RelativeErrors errors =
      analysis::RelativeErrorsOf(fit.predicted_seconds, walls);
  fit.rms_relative_error = errors.rms;
  fit.max_relative_error = errors.max;
  return fit;
}

}  // namespace torchcost
