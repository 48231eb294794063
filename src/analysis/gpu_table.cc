// The GPU table: gpus/gpus.yaml parsed into GpuSpecs, and the peak a kernel
// gets. NB: read with the rules' YAML loader (its fast subset parser, yaml-cpp
// outside it): yaml-cpp alone took ~7M instructions, a tenth of a CLI run.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "analysis/gpu_table_data.h"
#include "rules/yaml_load.h"
#include "torchcost/gpu.h"

namespace torchcost {
namespace {

using rules::YamlNode;

struct TableError {
  rules::YamlMark mark;
  std::string message;
};

[[noreturn]] void Fail(const YamlNode& at, const std::string& message) {
  throw TableError{at.Mark(), message};
}

// True if `n` is a scalar that reads whole as a number (`*v`).
bool Number(const YamlNode& n, double* v) {
  if (!n.IsScalar() || n.Scalar().empty()) return false;
  const char* text = n.Scalar().c_str();
  char* end = nullptr;
  errno = 0;
  *v = std::strtod(text, &end);
  return errno == 0 && *end == '\0';
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Returns the positive number at `n`; `what` names it in the error.
double Positive(const YamlNode& n, const std::string& what) {
  double v = 0;
  if (!Number(n, &v) || !(v > 0) || !std::isfinite(v)) {
    Fail(n, what + ": expected a positive number");
  }
  return v;
}

GpuSpec ParseGpu(const YamlNode& n) {
  if (!n.IsMap())
    Fail(n,
         "a GPU entry must be a map (name, source, memory_gb, bandwidth_gbs, "
         "tflops)");
  GpuSpec g;
  for (const auto& kv : n) {
    const std::string& key = kv.first.Scalar();
    if (key != "name" && key != "aliases" && key != "source" &&
        key != "memory_gb" && key != "bandwidth_gbs" && key != "tflops" &&
        key != "kernel_overhead_us" && key != "link_gbs" &&
        key != "link_type" && key != "compute_capability") {
      Fail(kv.first, "unknown key '" + key +
                         "' (name, aliases, source, memory_gb, bandwidth_gbs, "
                         "link_gbs, link_type, compute_capability, tflops, "
                         "kernel_overhead_us)");
    }
  }
  for (const char* required :
       {"name", "source", "memory_gb", "bandwidth_gbs", "tflops"}) {
    if (!n[required])
      Fail(n, std::string("a GPU entry needs '") + required + "'");
  }
  if (!n["name"].IsScalar() || n["name"].Scalar().empty())
    Fail(n["name"], "name: expected a non-empty string");
  g.name = n["name"].Scalar();
  if (const YamlNode a = n["aliases"]) {
    if (!a.IsSequence())
      Fail(a, g.name + ": aliases: expected a list of names");
    for (const YamlNode& x : a) {
      if (!x.IsScalar() || x.Scalar().empty())
        Fail(x, g.name + ": aliases: expected a list of names");
      g.aliases.push_back(x.Scalar());
    }
  }
  if (!n["source"].IsScalar() || n["source"].Scalar().empty())
    Fail(n["source"], g.name + ": source: expected the datasheet");
  g.source = n["source"].Scalar();
  g.memory_gb = Positive(n["memory_gb"], g.name + ": memory_gb");
  // GB/s to bytes per second: 1 GB = 1e9 bytes.
  g.bandwidth = Positive(n["bandwidth_gbs"], g.name + ": bandwidth_gbs") * 1e9;
  if (n["link_gbs"]) {
    // GB/s to bytes per second, per direction.
    g.interconnect.link = Positive(n["link_gbs"], g.name + ": link_gbs") * 1e9;
  }
  if (const YamlNode l = n["link_type"]) {
    if (!n["link_gbs"]) Fail(l, g.name + ": link_type needs link_gbs");
    Result<LinkType> type = ParseLinkType(l.IsScalar() ? l.Scalar() : "");
    if (!type.ok()) Fail(l, g.name + ": link_type: " + type.status().message());
    g.interconnect.link_type = *type;
  }
  if (const YamlNode c = n["compute_capability"]) {
    // "9.0" to 90: major * 10 + minor.
    double v = 0;
    if (!Number(c, &v) || !(v >= 1) || !(v < 100) ||
        std::abs(v * 10 - std::round(v * 10)) > 1e-9) {
      Fail(c, g.name + ": compute_capability: expected MAJOR.MINOR (8.0, 9.0)");
    }
    g.interconnect.compute_capability = static_cast<int>(std::round(v * 10));
  }
  const YamlNode t = n["tflops"];
  if (!t.IsMap())
    Fail(t, g.name + ": tflops: expected a map of dtype to TFLOP/s");
  for (const auto& kv : t) {
    const std::string& dtype = kv.first.Scalar();
    // TFLOP/s to FLOP/s: 1 TFLOP/s = 1e12 FLOP/s.
    const double rate =
        Positive(kv.second, g.name + ": tflops." + dtype) * 1e12;
    if (dtype == "fp32")
      g.fp32 = rate;
    else if (dtype == "fp32_matrix")
      g.fp32_matrix = rate;
    else if (dtype == "tf32")
      g.tf32 = rate;
    else if (dtype == "fp16")
      g.fp16 = rate;
    else if (dtype == "bf16")
      g.bf16 = rate;
    else if (dtype == "fp8")
      g.fp8 = rate;
    else if (dtype == "int8")
      g.int8 = rate;
    else
      Fail(kv.first, g.name + ": unknown dtype '" + dtype +
                         "' (fp32, fp32_matrix, tf32, fp16, bf16, fp8, int8)");
  }
  if (g.fp32 <= 0)
    Fail(t,
         g.name + ": tflops needs fp32 (the rate every other falls back to)");
  if (const YamlNode o = n["kernel_overhead_us"]) {
    double us = 0;
    if (!Number(o, &us) || !(us >= 0) || !std::isfinite(us)) {
      Fail(o, g.name + ": kernel_overhead_us: expected a number >= 0");
    }
    g.kernel_overhead = us * 1e-6;  // Microseconds to seconds.
  }
  return g;
}

}  // namespace

Result<std::vector<GpuSpec>> ParseGpuTable(std::string_view yaml,
                                           const std::string& file) {
  auto at = [&](const rules::YamlMark& mark) {
    return file + ":" + std::to_string(mark.line + 1) + ":" +
           std::to_string(mark.column + 1) + ": ";
  };
  rules::YamlMark error_mark;
  Result<rules::YamlDocument> doc = rules::LoadYaml(yaml, &error_mark);
  if (!doc.ok())
    return Status::InvalidArgument(at(error_mark) + doc.status().message());
  try {
    const YamlNode root = doc->root();
    if (!root.IsMap() || !root["gpus"] || !root["gpus"].IsSequence()) {
      Fail(root, "expected a map with 'version: 1' and a list 'gpus'");
    }
    if (!root["version"] || root["version"].Scalar() != "1")
      Fail(root, "expected 'version: 1'");
    std::vector<GpuSpec> out;
    std::set<std::string> names;
    for (const YamlNode& n : root["gpus"]) {
      GpuSpec g = ParseGpu(n);
      for (const std::string& name : [&] {
             std::vector<std::string> all = g.aliases;
             all.push_back(g.name);
             return all;
           }()) {
        if (!names.insert(Lower(name)).second)
          Fail(n, "the name '" + name + "' is given twice");
      }
      out.push_back(std::move(g));
    }
    return out;
  } catch (const TableError& e) {
    return Status::InvalidArgument(at(e.mark) + e.message);
  }
}

const std::vector<GpuSpec>& BuiltinGpus() {
  // NB: never freed (no exit-time destructor); a bad built-in table is a build
  // defect the unit tests catch.
  static const std::vector<GpuSpec>* const kGpus = [] {
    Result<std::vector<GpuSpec>> r =
        ParseGpuTable(analysis::BuiltinGpuTableText(), "gpus/gpus.yaml");
    return new std::vector<GpuSpec>(r.ok() ? std::move(r).value()
                                           : std::vector<GpuSpec>());
  }();
  return *kGpus;
}

Result<GpuSpec> FindGpu(std::string_view name) {
  const std::string want = Lower(name);
  std::string known;
  for (const GpuSpec& g : BuiltinGpus()) {
    if (Lower(g.name) == want) return g;
    for (const std::string& a : g.aliases) {
      if (Lower(a) == want) return g;
    }
    known += (known.empty() ? "" : ", ") + g.name;
  }
  return Status::InvalidArgument("unknown GPU '" + std::string(name) +
                                 "'; known: " + known);
}

double PeakFlops(const GpuSpec& gpu, OpClass c, DType dtype, bool tf32) {
  if (c != OpClass::kMatmul && c != OpClass::kConvolution &&
      c != OpClass::kAttention)
    return gpu.fp32;
  double rate = 0;
  switch (dtype) {
    case DType::kFloat16:
      rate = gpu.fp16;
      break;
    case DType::kBFloat16:
      rate = gpu.bf16;
      break;
    case DType::kInt8:
    case DType::kUInt8:
      rate = gpu.int8;
      break;
    case DType::kFloat32:
      rate = tf32 ? gpu.tf32 : gpu.fp32_matrix;
      break;
    default:
      break;
  }
  return rate > 0 ? rate
                  : std::max(gpu.fp32,
                             dtype == DType::kFloat32 ? gpu.fp32_matrix : 0.0);
}

}  // namespace torchcost
