// torchcost._core: the Python extension over the library. Python's keyword
// arguments arrive as the command line's flags (torchcost/_options.py is the
// one place that translates them) and become a StepConfig as the command
// makes it; the library's AnalyzeStep runs the step, and its StepAnalysis is
// kept alive in an Analysis object that evaluates the figures and renders
// JSON, text, timelines and sweeps at any bindings without analysing again.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "python/src/analysis_holder.h"
#include "torchcost/device_host_fit.h"
#include "torchcost/efficiency_fit.h"
#include "torchcost/families.h"
#include "torchcost/report.h"
#include "torchcost/training.h"

namespace py = pybind11;

namespace torchcost::python {
namespace {

// A usage error (exit 2 of the CLI): bad options, an unreadable model.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// An analysis that strict mode rejects (exit 1 of the CLI): ops without rules.
struct StrictError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Raise(const cli::Outcome& o) {
  if (o.code == cli::kExitStrict) throw StrictError(o.message);
  throw UsageError(o.message);
}

// Returns `base` overridden by `extra`.
sym::Bindings Merge(const sym::Bindings& base, const sym::Bindings& extra) {
  sym::Bindings out = base;
  for (const auto& [k, v] : extra) out[k] = v;
  return out;
}

// An expression's value under `b` as a Python int (past int64 too), or its text
// with the bound symbols substituted.
py::object Value(const sym::Expr& e, const sym::Bindings& b) {
  Result<__int128> v = sym::Evaluate128(e, b);
  if (!v.ok()) return py::str(sym::Substitute(e, b).ToString());
  const std::string text = sym::Int128ToString(*v);
  return py::reinterpret_steal<py::object>(
      PyLong_FromString(text.c_str(), nullptr, 10));
}

// The step's headline figures under `b`, without rendering the JSON report
// (what evaluate() and a search loop read): a dict of ints or expression texts.
py::dict Figures(const AnalysisHolder& a, const sym::Bindings& b) {
  const Report& r = a.report();
  const TrainingReport& t = r.training;
  py::dict d;
  d["params"] = r.params;
  d["active_params"] = r.params - r.inactive_params;
  d["quantized_params"] = r.quantized_params;
  d["trainable_params"] =
      t.mode == StepMode::kTrain ? t.grad_params : r.trainable_params;
  d["buffers"] = r.buffers;
  d["param_bytes"] = r.param_bytes;
  d["buffer_bytes"] = r.buffer_bytes;
  d["macs"] = Value(r.macs, b);
  d["flops"] = Value(r.flops, b);
  d["flops_forward"] = Value(t.flops_forward, b);
  d["flops_backward"] = Value(t.flops_backward, b);
  d["flops_optimizer"] = Value(t.flops_optimizer, b);
  d["flops_step"] = Value(t.flops_step, b);
  d["saved_bytes"] = Value(t.saved_bytes, b);
  const PeakInfo peak = EvaluatePeak(t, b, /*category_max=*/false);
  if (!peak.error.empty()) {
    d["error"] = peak.error;
    return d;
  }
  if (t.cuda_allocator) {
    // The CUDA allocator model: the peak and its breakdown are the allocated
    // blocks'.
    const AllocatorPeak a = EvaluateAllocator(t, b);
    if (!a.error.empty()) {
      d["error"] = a.error;
      return d;
    }
    d["peak_bytes"] = py::int_(a.allocated_peak);
    py::dict at;
    for (int k = 0; k < kNumMemCategories; ++k) {
      at[py::str(std::string(MemCategoryName(static_cast<MemCategory>(k))))] =
          py::int_(a.at_peak[k]);
    }
    d["memory"] = at;
    d["peak_phase"] = a.point >= 0
                          ? py::object(py::str(std::string(
                                StepPhaseName(t.timeline[a.point].phase))))
                          : py::object(py::none());
    py::dict alloc;
    alloc["tensor_peak"] = Value(peak.peak, b);
    alloc["allocated_peak"] = py::int_(a.allocated_peak);
    alloc["reserved_peak"] = py::int_(a.reserved_peak);
    alloc["fragmentation"] = py::int_(a.fragmentation);
    alloc["context_bytes"] = py::int_(a.context_bytes);
    alloc["device_peak"] = py::int_(a.device_peak);
    alloc["segments"] = py::int_(a.segments);
    d["allocator"] = alloc;
    return d;
  }
  d["peak_bytes"] = Value(peak.peak, b);
  py::dict at;
  if (peak.decided) {
    for (int k = 0; k < kNumMemCategories; ++k) {
      at[py::str(std::string(MemCategoryName(static_cast<MemCategory>(k))))] =
          Value(peak.at_peak[k], b);
    }
  }
  d["memory"] = at;
  d["peak_phase"] = peak.decided && peak.point >= 0
                        ? py::object(py::str(std::string(
                              StepPhaseName(t.timeline[peak.point].phase))))
                        : py::object(py::none());
  return d;
}

std::unique_ptr<AnalysisHolder> AnalyzeArgs(
    const std::vector<std::string>& args, const std::string& name) {
  auto holder = std::make_unique<AnalysisHolder>();
  cli::Outcome o;
  {
    // NB: the analysis touches no Python object.
    py::gil_scoped_release release;
    o = holder->Run(args, name);
  }
  if (!o.ok()) Raise(o);
  return holder;
}

std::string CompareArgs(const std::vector<std::string>& args) {
  std::string out;
  cli::Outcome o;
  {
    py::gil_scoped_release release;
    o = RunCompareArgs(args, out);
  }
  if (!o.ok()) Raise(o);
  return out;
}

std::string GenerateArgs(const std::vector<std::string>& args) {
  std::string out;
  cli::Outcome o;
  {
    py::gil_scoped_release release;
    o = RunGenerateArgs(args, out);
  }
  if (!o.ok()) Raise(o);
  return out;
}

std::string ArchConfigArgs(const std::vector<std::string>& args) {
  std::string out;
  cli::Outcome o;
  {
    py::gil_scoped_release release;
    o = RunArchConfigArgs(args, out);
  }
  if (!o.ok()) Raise(o);
  return out;
}

// Returns what both time fits give as a dict: efficiencies (and which were
// fitted), seconds per kernel, errors and predictions.
template <typename Fit>
py::dict FitDict(const Fit& fit) {
  py::dict out;
  out["efficiency"] =
      std::vector<double>(fit.efficiency.begin(), fit.efficiency.end());
  out["fitted"] = std::vector<bool>(fit.fitted.begin(), fit.fitted.end());
  out["kernel_overhead_seconds"] = fit.kernel_overhead;
  out["rms_relative_error"] = fit.rms_relative_error;
  out["max_relative_error"] = fit.max_relative_error;
  out["predicted_seconds"] = fit.predicted_seconds;
  return out;
}

}  // namespace
}  // namespace torchcost::python

PYBIND11_MODULE(_core, m) {
  using torchcost::python::AnalysisHolder;
  using torchcost::python::Merge;
  namespace tp = torchcost::python;
  m.doc() =
      "torchcost's C++ analysis; use the torchcost package, not this module.";
  static py::exception<tp::UsageError> usage(m, "UsageError", PyExc_ValueError);
  static py::exception<tp::StrictError> strict(m, "StrictError",
                                               PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tp::UsageError& e) {
      usage(e.what());
    } catch (const tp::StrictError& e) {
      strict(e.what());
    }
  });

  py::class_<AnalysisHolder>(m, "Analysis",
                             "One analysed step, kept alive for rendering.")
      .def_property_readonly("symbols", &AnalysisHolder::symbols,
                             "Free symbols of the input shapes, sorted.")
      .def_property_readonly(
          "bindings", [](const AnalysisHolder& a) { return a.bindings(); },
          "The symbol values given with set=.")
      .def(
          "figures",
          [](const AnalysisHolder& a, const torchcost::sym::Bindings& extra) {
            return tp::Figures(a, Merge(a.bindings(), extra));
          },
          py::arg("bindings") = torchcost::sym::Bindings{},
          "The headline figures, without the JSON report.")
      .def(
          "json",
          [](const AnalysisHolder& a, const torchcost::sym::Bindings& extra) {
            return torchcost::RenderJson(a.graph(), a.report(),
                                         Merge(a.bindings(), extra));
          },
          py::arg("bindings") = torchcost::sym::Bindings{},
          "The JSON report (docs/json-schema.md).")
      .def(
          "text",
          [](const AnalysisHolder& a, int depth, int top_k, int top_depth,
             const torchcost::sym::Bindings& extra) {
            torchcost::TextOptions t;
            t.depth = depth;
            t.top_k = top_k;
            t.top_depth = top_depth;
            t.bindings = Merge(a.bindings(), extra);
            return torchcost::RenderText(a.graph(), a.report(), t);
          },
          py::arg("depth") = -1, py::arg("top_k") = 3,
          py::arg("top_depth") = -1,
          py::arg("bindings") = torchcost::sym::Bindings{},
          "The CLI's text report.")
      .def(
          "timeline_svg",
          [](const AnalysisHolder& a, const torchcost::sym::Bindings& extra) {
            const torchcost::sym::Bindings b = Merge(a.bindings(), extra);
            const std::vector<std::string> unbound =
                torchcost::UnboundTimelineSymbols(a.report(), b);
            if (!unbound.empty()) {
              std::string names;
              for (const std::string& s : unbound)
                names += (names.empty() ? "" : ", ") + s;
              throw tp::UsageError("timeline_svg needs every symbol bound: " +
                                   names);
            }
            return torchcost::RenderTimelineSvg(a.graph(), a.report(), b);
          },
          py::arg("bindings") = torchcost::sym::Bindings{},
          "The memory timeline as SVG.")
      .def(
          "sweep_json",
          [](const AnalysisHolder& a, const std::vector<std::string>& specs,
             const torchcost::sym::Bindings& extra) {
            std::vector<torchcost::SweepSpec> sweeps;
            for (const std::string& text : specs) {
              auto s = torchcost::ParseSweep(text);
              if (!s.ok()) throw tp::UsageError(s.status().message());
              sweeps.push_back(std::move(s).value());
            }
            auto out = torchcost::RenderSweepJson(a.graph(), a.report(), sweeps,
                                                  Merge(a.bindings(), extra),
                                                  a.timing());
            if (!out.ok()) throw tp::UsageError(out.status().message());
            return std::move(out).value();
          },
          py::arg("sweeps"), py::arg("bindings") = torchcost::sym::Bindings{},
          "FLOPs and peak at every point of the sweeps (schema "
          "torchcost.sweep).");
  m.def("analyze", &tp::AnalyzeArgs, py::arg("args"), py::arg("name") = "",
        "Analyses what the command-line arguments describe; `name` names the "
        "model in reports.");
  m.def("generate", &tp::GenerateArgs, py::arg("args"),
        "Runs `torchcost --mode generate --json` on the arguments; returns its "
        "output.");
  m.def("arch_config", &tp::ArchConfigArgs, py::arg("args"),
        "Runs `torchcost --arch-symbol ... --json` on the arguments; returns "
        "its output.");
  m.def(
      "fit_efficiencies",
      [](const std::vector<std::tuple<std::string, std::vector<double>, double,
                                      double, double>>& rows,
         bool overhead) {
        std::vector<torchcost::TimingSample> samples;
        for (const auto& [name, roofline, measured, kernels, scale] : rows) {
          if (roofline.size() != static_cast<size_t>(torchcost::kNumOpClasses))
            throw tp::UsageError("efficiency fit: sample '" + name +
                                 "' needs one roofline time per op class");
          torchcost::TimingSample s;
          s.name = name;
          std::copy(roofline.begin(), roofline.end(),
                    s.roofline_seconds.begin());
          s.measured_seconds = measured;
          s.kernels = kernels;
          s.scale_seconds = scale;
          samples.push_back(std::move(s));
        }
        auto fit = torchcost::FitEfficiencies(samples, torchcost::kTiePenalty,
                                              overhead);
        if (!fit.ok()) throw tp::UsageError(fit.status().message());
        py::dict out = tp::FitDict(*fit);
        out["overhead_fitted"] = fit->overhead_fitted;
        out["rank"] = fit->rank;
        out["tie_penalty"] = fit->tie_penalty;
        return out;
      },
      py::arg("samples"), py::arg("overhead") = false,
      "Fits the efficiency per op class (matmul, attention, pointwise, "
      "reduction, optimizer, convolution), and with "
      "`overhead` the seconds per kernel, to samples (name, roofline seconds "
      "per class, measured seconds, "
      "kernels, the seconds its error is relative to or 0 for its own) by "
      "least squares; returns the fit as a dict.");
  m.def(
      "fit_device_and_host",
      [](const std::vector<std::tuple<std::string, std::vector<double>, double,
                                      std::vector<double>, std::vector<double>,
                                      double, std::string, double>>& rows) {
        std::vector<torchcost::DeviceTimingSample> samples;
        for (const auto& [name, roofline, wall, class_kernels, device_classes,
                          device, phase, tensors] : rows) {
          const size_t n = torchcost::kNumOpClasses;
          if (roofline.size() != n || device_classes.size() != n ||
              class_kernels.size() != n)
            throw tp::UsageError("device and host fit: sample '" + name +
                                 "' needs one roofline time, kernel count "
                                 "and device time per op class");
          if (phase != "forward" && phase != "backward" && phase != "optimizer")
            throw tp::UsageError("device and host fit: sample '" + name +
                                 "': phase '" + phase +
                                 "' (forward, backward, optimizer)");
          torchcost::DeviceTimingSample d;
          d.timing.name = name;
          std::copy(roofline.begin(), roofline.end(),
                    d.timing.roofline_seconds.begin());
          d.timing.measured_seconds = wall;
          std::copy(class_kernels.begin(), class_kernels.end(),
                    d.class_kernels.begin());
          for (double k : class_kernels) d.timing.kernels += k;
          std::copy(device_classes.begin(), device_classes.end(),
                    d.device_class_seconds.begin());
          d.device_seconds = device;
          d.phase = phase == "optimizer"  ? torchcost::StepPhase::kOptimizer
                    : phase == "backward" ? torchcost::StepPhase::kBackward
                                          : torchcost::StepPhase::kForward;
          d.tensors = tensors;
          samples.push_back(std::move(d));
        }
        auto fit = torchcost::FitDeviceAndHost(samples);
        if (!fit.ok()) throw tp::UsageError(fit.status().message());
        py::dict out = tp::FitDict(*fit);
        py::dict host;
        host["forward_kernel_seconds"] = fit->host.forward_kernel;
        host["backward_kernel_seconds"] = fit->host.backward_kernel;
        host["optimizer_kernel_seconds"] = fit->host.optimizer_kernel;
        host["optimizer_tensor_seconds"] = fit->host.optimizer_tensor;
        out["host"] = host;
        out["host_bound"] =
            std::vector<bool>(fit->host_bound.begin(), fit->host_bound.end());
        return out;
      },
      py::arg("samples"),
      "Fits a GPU's efficiency per op class, device seconds per kernel and "
      "host launch costs to phases (name, roofline seconds per class, wall "
      "seconds, kernels per class, device seconds per class, device seconds, "
      "phase, optimizer tensors) by least squares; returns the fit as a "
      "dict.");
  m.def(
      "named_config",
      [](const std::string& name, const std::string& config) {
        auto c = torchcost::builder::ResolveNamedConfig(name, config);
        if (!c.ok()) throw tp::UsageError(c.status().message());
        py::dict values;
        for (const auto& [k, v] : c->values) values[py::str(k)] = v;
        return py::make_tuple(c->family, values);
      },
      py::arg("name"), py::arg("config") = "",
      "The family of a family or preset name and its config with the preset "
      "and `config` applied: "
      "(family, {key: value text}).");
  m.def("compare", &tp::CompareArgs, py::arg("args"),
        "Runs `torchcost compare` on the arguments; returns its output.");
}
