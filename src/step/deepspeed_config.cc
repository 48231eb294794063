#include "torchcost/deepspeed_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "torchcost/dtype.h"

namespace torchcost {
namespace {

using Json = nlohmann::json;

// Keys that change a rank's memory but are not modelled, as dotted paths.
constexpr const char* kNotModelled[] = {
    "train_micro_batch_size_per_gpu",
    "activation_checkpointing",
    "data_types.grad_accum_dtype",
    "zero_optimization.allgather_bucket_size",
    "zero_optimization.sub_group_size",
    "zero_optimization.zero_hpz_partition_size",
    "zero_optimization.zero_quantized_weights",
    "zero_optimization.zero_quantized_gradients",
    "zero_optimization.offload_optimizer.ratio",
};

bool IsAuto(const Json& v) { return v.is_string() && v == "auto"; }

// The value at dotted `path`, or nullptr.
const Json* Find(const Json& doc, const std::string& path) {
  const Json* v = &doc;
  size_t from = 0;
  while (from <= path.size()) {
    const size_t dot = std::min(path.find('.', from), path.size());
    if (!v->is_object()) return nullptr;
    auto it = v->find(path.substr(from, dot - from));
    if (it == v->end()) return nullptr;
    v = &*it;
    from = dot + 1;
  }
  return v;
}

// Reads the keys of a parsed config into a StepConfig, checking each.
class Reader {
 public:
  Reader(const Json& doc, const std::string& file, StepConfig& c)
      : doc_(doc), file_(file), c_(c) {}

  Status Run() {
    if (!doc_.is_object()) return Bad("", "expected a JSON object");
    int stage = 0;
    if (const Json* v = Find(doc_, "zero_optimization.stage")) {
      if (!v->is_number_integer() || *v < 0 || *v > 3)
        return Bad("zero_optimization.stage", "expected 0, 1, 2 or 3");
      stage = v->get<int>();
    }
    // NB: stage 0 all-reduces whole gradients as one device holds them.
    const char* shards[] = {"none", "zero1", "zero2", "zero3"};
    TORCHCOST_RETURN_IF_ERROR(Set(c_.shard, std::string("none"),
                                  std::string(shards[stage]), "shard",
                                  "zero_optimization.stage"));
    TORCHCOST_RETURN_IF_ERROR(Accumulation());
    TORCHCOST_RETURN_IF_ERROR(Buckets());
    if (stage == 3) TORCHCOST_RETURN_IF_ERROR(Zero3Schedule());
    TORCHCOST_RETURN_IF_ERROR(Offload(stage));
    TORCHCOST_RETURN_IF_ERROR(Precision());
    return Optimizer();
  }

  std::vector<std::string> Notes() const {
    std::string keys;
    for (const char* key : kNotModelled) {
      if (Find(doc_, key) != nullptr)
        keys += std::string(keys.empty() ? "" : ", ") + key;
    }
    if (keys.empty()) return {};
    return {"DeepSpeed config " + file_ + ": not modelled: " + keys};
  }

 private:
  Status Bad(const std::string& key, const std::string& what) const {
    return Status::InvalidArgument(file_ + (key.empty() ? "" : ": " + key) +
                                   ": " + what);
  }

  // Sets `field` to the file's `value` unless the caller set it to another
  // value than `default_value`.
  template <typename T>
  Status Set(T& field, const T& default_value, const T& value,
             const std::string& field_name, const std::string& key) {
    if (field != default_value && field != value) {
      std::ostringstream text;
      text << std::boolalpha << "StepConfig." << field_name << " " << field
           << " disagrees with " << file_ << ": " << key << " (" << value
           << ")";
      return Status::InvalidArgument(text.str());
    }
    field = value;
    return Status::Ok();
  }

  // A boolean key, or "auto" (left as the caller has it).
  Status Flag(const std::string& key, bool& field, bool default_value,
              const std::string& field_name) {
    const Json* v = Find(doc_, key);
    if (v == nullptr || IsAuto(*v)) return Status::Ok();
    if (!v->is_boolean()) return Bad(key, "expected true, false or \"auto\"");
    return Set(field, default_value, v->get<bool>(), field_name, key);
  }

  Status Accumulation() {
    const Json* v = Find(doc_, "gradient_accumulation_steps");
    if (v == nullptr || IsAuto(*v)) return Status::Ok();
    if (!v->is_number_integer() || *v < 1 || *v > 1 << 20) {
      return Bad("gradient_accumulation_steps",
                 "expected a whole number from 1 to 2^20 or \"auto\"");
    }
    return Set(c_.accumulate, 1, v->get<int>(), "accumulate",
               "gradient_accumulation_steps");
  }

  // A count of elements at `key` into `field`: a whole number from `least`
  // to 2^50, or "auto": Hugging Face's Trainer's `auto_of_hidden` (of the
  // model's hidden size h; transformers/integrations/deepspeed.py,
  // trainer_config_finalize), or left as the caller has it where that is
  // null.
  Status Elements(const std::string& key, double least, double& field,
                  double default_value, const std::string& field_name,
                  const char* auto_text, double (*auto_of_hidden)(double)) {
    const Json* v = Find(doc_, "zero_optimization." + key);
    if (v == nullptr) return Status::Ok();
    double elements = 0;
    if (IsAuto(*v)) {
      if (auto_of_hidden == nullptr) return Status::Ok();
      if (c_.hidden_size <= 0) {
        return Bad("zero_optimization." + key,
                   std::string("\"auto\" is ") + auto_text +
                       ", and the model's hidden size is unknown: give a "
                       "number");
      }
      elements = auto_of_hidden(static_cast<double>(c_.hidden_size));
    } else if (v->is_number() && v->get<double>() >= least &&
               v->get<double>() <= 0x1p50 &&
               v->get<double>() == std::floor(v->get<double>())) {
      elements = v->get<double>();
    } else {
      return Bad("zero_optimization." + key,
                 "expected a whole number of elements from " +
                     std::to_string(static_cast<int>(least)) +
                     " to 2^50 or \"auto\"");
    }
    return Set(field, default_value, elements, field_name,
               "zero_optimization." + key);
  }

  Status Buckets() {
    const StepConfig defaults;
    TORCHCOST_RETURN_IF_ERROR(Elements(
        "reduce_bucket_size", 1, c_.reduce_bucket, defaults.reduce_bucket,
        "reduce_bucket", "hidden_size^2", [](double h) { return h * h; }));
    TORCHCOST_RETURN_IF_ERROR(Flag("zero_optimization.overlap_comm",
                                   c_.overlap_comm, defaults.overlap_comm,
                                   "overlap_comm"));
    return Flag("zero_optimization.contiguous_gradients",
                c_.contiguous_gradients, defaults.contiguous_gradients,
                "contiguous_gradients");
  }

  // ZeRO-3's fetch schedule (stage3_*).
  Status Zero3Schedule() {
    const StepConfig d;
    TORCHCOST_RETURN_IF_ERROR(Elements(
        "stage3_prefetch_bucket_size", 0, c_.zero3_prefetch_bucket,
        d.zero3_prefetch_bucket, "zero3_prefetch_bucket", "0.9 hidden_size^2",
        [](double h) { return std::floor(0.9 * h * h); }));
    TORCHCOST_RETURN_IF_ERROR(
        Elements("stage3_param_persistence_threshold", 0, c_.zero3_persistence,
                 d.zero3_persistence, "zero3_persistence", "10 hidden_size",
                 [](double h) { return 10 * h; }));
    TORCHCOST_RETURN_IF_ERROR(Elements("stage3_max_live_parameters", 0,
                                       c_.zero3_max_live, d.zero3_max_live,
                                       "zero3_max_live", "", nullptr));
    return Elements("stage3_max_reuse_distance", 0, c_.zero3_max_reuse,
                    d.zero3_max_reuse, "zero3_max_reuse", "", nullptr);
  }

  // An offload section's device: true for cpu or nvme (both off the device).
  Result<bool> Offloaded(const std::string& section) const {
    const Json* v = Find(doc_, section + ".device");
    if (v == nullptr) return false;
    if (!v->is_string() || (*v != "cpu" && *v != "nvme" && *v != "none"))
      return Bad(section + ".device", "expected \"cpu\", \"nvme\" or \"none\"");
    return *v != "none";
  }

  Status Offload(int stage) {
    Result<bool> optimizer = Offloaded("zero_optimization.offload_optimizer");
    if (!optimizer.ok()) return optimizer.status();
    Result<bool> params = Offloaded("zero_optimization.offload_param");
    if (!params.ok()) return params.status();
    if (*params && (stage != 3 || !*optimizer)) {
      return Bad("zero_optimization.offload_param",
                 "modelled with stage 3 and offload_optimizer only");
    }
    if (*optimizer && stage < 2) {
      return Bad("zero_optimization.offload_optimizer",
                 "modelled with stage 2 or 3 only");
    }
    if (!*optimizer) return Status::Ok();
    // NB: NVMe (ZeRO-Infinity) is off the device as the host is.
    return Set(c_.offload, std::string(),
               std::string(*params ? "params" : "optimizer"), "offload",
               *params ? "zero_optimization.offload_param"
                       : "zero_optimization.offload_optimizer");
  }

  Status Precision() {
    for (const char* dtype : {"bf16", "fp16"}) {
      const std::string key = std::string(dtype) + ".enabled";
      const Json* v = Find(doc_, key);
      if (v == nullptr || IsAuto(*v)) continue;
      if (!v->is_boolean()) return Bad(key, "expected true, false or \"auto\"");
      if (!v->get<bool>()) continue;
      // The caller's spelling of the same dtype agrees.
      Result<DType> given = ParseDType(c_.param_dtype);
      Result<DType> wanted = ParseDType(dtype);
      if (!c_.param_dtype.empty() &&
          (!given.ok() || !wanted.ok() || *given != *wanted)) {
        return Status::InvalidArgument("StepConfig.param_dtype " +
                                       c_.param_dtype + " disagrees with " +
                                       file_ + ": " + key + " (true)");
      }
      c_.param_dtype = dtype;
      c_.master_weights = true;
    }
    return Status::Ok();
  }

  Status Optimizer() {
    const Json* type = Find(doc_, "optimizer.type");
    if (type == nullptr) return Status::Ok();
    if (!type->is_string()) return Bad("optimizer.type", "expected a string");
    const std::string t = type->get<std::string>();
    std::string name;
    if (t == "Adam" || t == "adam") {
      // DeepSpeed's Adam is AdamW unless params.adam_w_mode is false.
      const Json* w = Find(doc_, "optimizer.params.adam_w_mode");
      name =
          w != nullptr && w->is_boolean() && !w->get<bool>() ? "adam" : "adamw";
    } else if (t == "AdamW" || t == "adamw") {
      name = "adamw";
    } else if (t == "SGD" || t == "sgd") {
      const Json* m = Find(doc_, "optimizer.params.momentum");
      name = m != nullptr && m->is_number() && m->get<double>() > 0
                 ? "sgd_momentum"
                 : "sgd";
    } else if (t == "Adagrad" || t == "adagrad") {
      name = "adagrad";
    } else if (t == "Lion" || t == "lion") {
      name = "lion";
    } else {
      return Bad(
          "optimizer.type",
          "'" + t + "' is not modelled (Adam, AdamW, SGD, Adagrad, Lion)");
    }
    TORCHCOST_RETURN_IF_ERROR(Set(c_.optimizer, StepConfig().optimizer, name,
                                  "optimizer", "optimizer.type"));
    // DeepSpeed builds its Adam as FusedAdam (in place, no temporaries)
    // unless params.torch_adam asks for torch's.
    const Json* torch_adam = Find(doc_, "optimizer.params.torch_adam");
    if ((name == "adam" || name == "adamw") &&
        !(torch_adam != nullptr && torch_adam->is_boolean() &&
          torch_adam->get<bool>())) {
      if (c_.optimizer_impl != "auto" && c_.optimizer_impl != "fused") {
        return Status::InvalidArgument("StepConfig.optimizer_impl " +
                                       c_.optimizer_impl + " disagrees with " +
                                       file_ + ": optimizer.type " + t +
                                       " (DeepSpeed's FusedAdam)");
      }
      c_.optimizer_impl = "fused";
    }
    return Status::Ok();
  }

  const Json& doc_;
  const std::string& file_;
  StepConfig& c_;
};

}  // namespace

Result<std::vector<std::string>> ApplyDeepSpeedConfigText(
    std::string_view text, const std::string& file, StepConfig* config) {
  const Json doc = Json::parse(text.begin(), text.end(), nullptr,
                               /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Status::InvalidArgument(file + ": not valid JSON");
  Reader reader(doc, file, *config);
  TORCHCOST_RETURN_IF_ERROR(reader.Run());
  return reader.Notes();
}

Result<std::vector<std::string>> ApplyDeepSpeedConfig(const std::string& path,
                                                      StepConfig* config) {
  // NB: a path never starts with '{' in practice; JSON text always does.
  if (!path.empty() && path.front() == '{')
    return ApplyDeepSpeedConfigText(path, "<inline DeepSpeed config>", config);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return ApplyDeepSpeedConfigText(text.str(), path, config);
}

}  // namespace torchcost
