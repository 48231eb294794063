// Reading a calibration file's roofline device and fitted efficiencies.
#include "step/gpu_file.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace torchcost::step {
namespace {

using Json = nlohmann::json;

Status Bad(const std::string& file, const std::string& key,
           const std::string& what) {
  return Status::InvalidArgument(file + ": key " + key + ": " + what);
}

// The positive number at j[key], or an error naming `path`.
Result<double> Positive(const Json& j, const std::string& key,
                        const std::string& file, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) return Bad(file, path, "missing");
  if (!it->is_number() || !(it->get<double>() > 0)) {
    return Bad(file, path, "expected a positive number");
  }
  return it->get<double>();
}

// The device figures: a built-in GPU by name, or the file's own peaks.
Result<GpuSpec> Device(const Json& r, const std::string& file) {
  if (r.contains("gpu")) {
    if (!r["gpu"].is_string()) {
      return Bad(file, "roofline.gpu", "expected a GPU name");
    }
    Result<GpuSpec> g = FindGpu(r["gpu"].get<std::string>());
    if (!g.ok()) return Bad(file, "roofline.gpu", g.status().message());
    return g;
  }
  GpuSpec g;
  g.name = r.value("name", std::string("calibrated device"));
  // bandwidth_gbs and tflops in gpus/gpus.yaml's units: 1e9 B/s, 1e12 FLOP/s.
  Result<double> bw =
      Positive(r, "bandwidth_gbs", file, "roofline.bandwidth_gbs");
  if (!bw.ok()) return bw.status();
  g.bandwidth = *bw * 1e9;
  if (!r.contains("tflops") || !r["tflops"].is_object()) {
    return Bad(file, "roofline.tflops",
               "expected a map of dtype to TFLOP/s with fp32");
  }
  const Json& t = r["tflops"];
  struct Rate {
    const char* key;
    double GpuSpec::*field;
  };
  constexpr Rate kRates[] = {
      {"fp32", &GpuSpec::fp32}, {"fp32_matrix", &GpuSpec::fp32_matrix},
      {"tf32", &GpuSpec::tf32}, {"fp16", &GpuSpec::fp16},
      {"bf16", &GpuSpec::bf16}, {"fp8", &GpuSpec::fp8},
      {"int8", &GpuSpec::int8}};
  for (auto it = t.begin(); it != t.end(); ++it) {
    const Rate* rate = nullptr;
    for (const Rate& r : kRates) {
      if (it.key() == r.key) rate = &r;
    }
    if (!rate) {
      return Bad(file, "roofline.tflops." + it.key(),
                 "unknown dtype (fp32, fp32_matrix, tf32, fp16, bf16, fp8, "
                 "int8)");
    }
    Result<double> v =
        Positive(t, it.key(), file, "roofline.tflops." + it.key());
    if (!v.ok()) return v.status();
    g.*(rate->field) = *v * 1e12;
  }
  if (!(g.fp32 > 0)) return Bad(file, "roofline.tflops.fp32", "missing");
  return g;
}

}  // namespace

Result<CalibratedGpu> ParseGpuFile(std::string_view text,
                                   const std::string& file) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument(file + ": not a JSON object");
  }
  if (!doc.contains("roofline") || !doc["roofline"].is_object()) {
    return Bad(file, "roofline", "missing (the device's peaks or GPU name)");
  }
  const Json& r = doc["roofline"];
  CalibratedGpu out;
  out.device = r.value("device", std::string("cuda"));
  if (out.device != "cuda" && out.device != "cpu") {
    return Bad(file, "roofline.device", "expected cuda or cpu");
  }
  Result<GpuSpec> gpu = Device(r, file);
  if (!gpu.ok()) return gpu.status();
  out.gpu = std::move(gpu).value();
  if (!doc.contains("fit") || !doc["fit"].is_object() ||
      !doc["fit"].contains("efficiency") ||
      !doc["fit"]["efficiency"].is_object()) {
    return Bad(file, "fit.efficiency", "missing (no fit in this file)");
  }
  const Json& e = doc["fit"]["efficiency"];
  for (auto it = e.begin(); it != e.end(); ++it) {
    Result<OpClass> c = ParseOpClass(it.key());
    if (!c.ok()) {
      return Bad(file, "fit.efficiency." + it.key(), c.status().message());
    }
    Result<double> v =
        Positive(e, it.key(), file, "fit.efficiency." + it.key());
    if (!v.ok()) return v.status();
    out.gpu.efficiency[static_cast<int>(*c)] = *v;
  }
  // NB: files fitted before convolutions had a class of their own fitted them
  // as matmul.
  if (e.contains("matmul") && !e.contains("convolution")) {
    out.gpu.efficiency[static_cast<int>(OpClass::kConvolution)] =
        out.gpu.efficiency[static_cast<int>(OpClass::kMatmul)];
  }
  // The fitted seconds per kernel, if the fit has one (else the table's).
  if (auto it = doc["fit"].find("kernel_overhead_seconds");
      it != doc["fit"].end()) {
    if (!it->is_number() || !(it->get<double>() >= 0)) {
      return Bad(file, "fit.kernel_overhead_seconds", "expected a number >= 0");
    }
    out.gpu.kernel_overhead = it->get<double>();
  }
  // The host's launch costs, if fitted (a GPU's device and host fit).
  if (auto it = doc["fit"].find("host"); it != doc["fit"].end()) {
    if (!it->is_object()) return Bad(file, "fit.host", "expected an object");
    struct Cost {
      const char* key;
      double HostCost::*field;
    };
    constexpr Cost kCosts[] = {
        {"forward_kernel_seconds", &HostCost::forward_kernel},
        {"backward_kernel_seconds", &HostCost::backward_kernel},
        {"optimizer_kernel_seconds", &HostCost::optimizer_kernel},
        {"optimizer_tensor_seconds", &HostCost::optimizer_tensor}};
    for (const Cost& c : kCosts) {
      auto v = it->find(c.key);
      if (v == it->end()) continue;
      if (!v->is_number() || !(v->get<double>() >= 0)) {
        return Bad(file, std::string("fit.host.") + c.key,
                   "expected a number >= 0");
      }
      out.gpu.host.*(c.field) = v->get<double>();
    }
  }
  if (auto it = doc.find("cuda_context_bytes"); it != doc.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Bad(file, "cuda_context_bytes", "expected an integer >= 0");
    }
    out.cuda_context_bytes = it->get<int64_t>();
  }
  return out;
}

Result<CalibratedGpu> ReadGpuFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseGpuFile(text.str(), path);
}

}  // namespace torchcost::step
