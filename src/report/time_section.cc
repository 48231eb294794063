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

// The link's bandwidth per direction, and PCIe where it is that.
std::string LinkText(const Interconnect& net) {
  return fmt::format("{:.4g} GB/s per direction{}", net.link / 1e9,
                     net.link_type == LinkType::kPcie ? " over PCIe" : "");
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
  const std::string at_least = BoundMark(rate.communication_untimed, true),
                    at_most = BoundMark(rate.communication_untimed, false);
  if (rate.step_seconds < 0) return {"-", "-", "-"};
  const std::string per_second = RateText(rate.items_per_second);
  return {
      at_least + SecondsText(rate.step_seconds),
      per_second == "-" ? per_second : at_most + per_second,
      rate.mfu >= 0 ? at_most + fmt::format("{:.1f}%", 100 * rate.mfu) : "-"};
}

std::string BoundMark(const std::string& untimed, bool lower) {
  if (untimed.empty()) return "";
  return lower ? ">= " : "<= ";
}

std::string UntimedCommunicationNote(const std::string& untimed,
                                     const std::string& what) {
  if (untimed.empty()) return "";
  return "bounds (>= times, <= rates): collectives left out of " + what + ": " +
         untimed + "\n";
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
  const bool collectives =
      train && report.training.sharding.world > 1 &&
      report.training.sharding.strategy != ShardStrategy::kNone;
  if (collectives) {
    out +=
        Field("  Communication:",
              !t.communication_untimed.empty()
                  ? "not timed: " + t.communication_untimed
                  : fmt::format("{} per step (NCCL's ring, {}{}), "
                                "{} of it exposed",
                                SecondsText(t.communication_seconds),
                                LinkText(t.interconnect),
                                t.interconnect.network > 0
                                    ? fmt::format(" in a node, {:.4g} between",
                                                  t.interconnect.network / 1e9)
                                    : "",
                                SecondsText(t.exposed_communication_seconds)));
  }
  // NB: the graph's collectives exist only for tp > 1 or ep > 1, so a
  // count of 0 with a reason given is one that could not be timed.
  if (!report.collectives.empty()) {
    out += Field(
        "  TP/SP/EP comm:",
        t.model_parallel_communication_seconds == 0 &&
                !t.communication_untimed.empty()
            ? "not timed: " + t.communication_untimed
            : fmt::format(
                  "{} per step{}, in the forward and backward "
                  "above (NCCL's ring: latency, and bytes at {})",
                  SecondsText(t.model_parallel_communication_seconds),
                  t.model_parallel_overlapped_seconds > 0
                      ? " (" +
                            SecondsText(t.model_parallel_overlapped_seconds) +
                            " of it beside the backward's GEMMs, as "
                            "Megatron runs it)"
                      : "",
                  LinkText(t.interconnect)));
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
  // The note: what the times include, then what they leave out.
  std::string note =
      "NB: each node takes max(FLOPs / peak, bytes / bandwidth) at the "
      "datasheet's dense peak divided by its class's efficiency";
  std::vector<std::string> left_out;
  if (t.kernel_overhead > 0)
    note += ", plus the overhead per kernel";
  else
    left_out.push_back("the overhead per kernel (launch, dispatch)");
  if (t.host.modelled())
    note += "; a phase takes the larger of its device and host (launch) times";
  else
    left_out.push_back("the host's launch time");
  if (collectives) {
    note += "; the data-parallel collectives overlap the compute beside them";
    left_out.push_back("tensor-parallel communication");
  } else {
    left_out.push_back("communication");
  }
  note += "; ";
  for (size_t i = 0; i < left_out.size(); ++i) {
    note += (i == 0                     ? ""
             : i + 1 == left_out.size() ? " and "
                                        : ", ") +
            left_out[i];
  }
  out += note + (left_out.size() > 1 ? " are" : " is") +
         " not modelled (docs/calibration.md).\n";
  return out;
}

}  // namespace torchcost::report
