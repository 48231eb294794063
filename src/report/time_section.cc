// The time block of the text report and the units of its numbers.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "report/text_sections.h"

namespace torchcost::report {
namespace {

std::string Field(const std::string& label, const std::string& value) {
  return fmt::format("{:<20}{}\n", label, value);
}

}  // namespace

std::string SecondsText(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return "0 s";
  // Three significant digits in the largest unit that keeps the value >= 1.
  struct Unit {
    double scale;
    const char* name;
  };
  static constexpr Unit kUnits[] = {
      {1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
  for (const Unit& u : kUnits) {
    if (seconds >= u.scale || u.scale == 1e-9)
      return fmt::format("{:.3g} {}", seconds / u.scale, u.name);
  }
  return "0 s";
}

std::vector<std::string> StepTimeHeaders(const std::string& unit) {
  std::string rate = unit.empty() ? "Items" : unit;
  rate[0] =
      static_cast<char>(std::toupper(static_cast<unsigned char>(rate[0])));
  return {"Step time", rate + "/s", "MFU"};
}

std::vector<std::string> StepTimeCells(const StepRate& rate) {
  return {SecondsText(rate.step_seconds), RateText(rate.items_per_second),
          rate.mfu >= 0 ? fmt::format("{:.1f}%", 100 * rate.mfu) : "-"};
}

std::string RateText(double per_second) {
  if (!(per_second >= 0) || !std::isfinite(per_second)) return "-";
  return per_second >= 1000 ? fmt::format("{:.0f}", per_second)
                            : fmt::format("{:.4g}", per_second);
}

std::string TflopsText(double flops, double seconds) {
  if (!(seconds > 0)) return "-";
  // TFLOP/s = FLOPs / seconds / 1e12.
  return fmt::format("{:.2f}", flops / seconds / 1e12);
}

std::string TimeLabel(const TimeReport& t) {
  return t.calibrated ? t.source : "predicted: " + t.source;
}

std::string TimeSourceLabel(const std::string& source) {
  return source.rfind("calibrated", 0) == 0 ? source : "predicted: " + source;
}

std::string RenderTime(const Report& report) {
  const TimeReport& t = report.time;
  if (!t.present) return "";
  const bool train = report.training.mode == StepMode::kTrain;
  std::string out = "Time (" + TimeLabel(t) + ")\n";
  // With the host modelled, which of the two a phase waits for.
  auto bound = [&](double device, double host) {
    if (!t.host.modelled()) return std::string();
    return fmt::format(" ({}-bound: device {}, host {})",
                       host > device ? "host" : "device", SecondsText(device),
                       SecondsText(host));
  };
  out +=
      Field("  Forward:",
            SecondsText(t.forward_seconds) + (train ? " per micro-batch" : "") +
                bound(t.forward_device_seconds, t.forward_host_seconds));
  if (train) {
    out += Field("  Backward:",
                 SecondsText(t.backward_seconds) + " per micro-batch" +
                     bound(t.backward_device_seconds, t.backward_host_seconds));
    out += Field("  Optimizer:", SecondsText(t.optimizer_seconds) +
                                     bound(t.optimizer_device_seconds,
                                           t.optimizer_host_seconds));
  }
  out += Field("  Step:", SecondsText(t.step_seconds));
  out +=
      Field("  MFU:", fmt::format("{:.1f}% of {:.1f} TFLOP/s ({})", 100 * t.mfu,
                                  t.peak_flops / 1e12, t.peak_dtype));
  if (!t.throughput_unit.empty()) {
    out += Field(
        "  Throughput:",
        fmt::format("{} {}/s ({:.4g} per step)", RateText(t.items_per_second),
                    t.throughput_unit, t.items_per_step));
  }
  double kernels = 0;
  for (double k : t.class_kernels) kernels += k;
  if (t.kernel_overhead > 0) {
    // overhead = kernels x seconds per kernel, included in the times above.
    out += Field("  Overhead:",
                 fmt::format("{} ({:.0f} kernels x {} each)",
                             SecondsText(t.overhead_seconds), kernels,
                             SecondsText(t.kernel_overhead)));
  }
  out += std::string(
             "NB: each node takes max(FLOPs / peak, bytes / bandwidth) at the "
             "datasheet's dense peak divided by its class's efficiency") +
         (t.kernel_overhead > 0
              ? ", plus the overhead per kernel; "
              : "; the overhead per kernel (launch, dispatch), ") +
         (t.host.modelled()
              ? "a phase takes the larger of its device and host (launch) "
                "times; communication is not modelled"
              : "the host's launch time and communication are not "
                "modelled") +
         " (docs/calibration.md).\n";
  return out;
}

}  // namespace torchcost::report
