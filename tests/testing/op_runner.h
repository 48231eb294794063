// Runs one operator through the rules and the analysis, for rule unit tests.
#ifndef TORCHCOST_TESTS_TESTING_OP_RUNNER_H_
#define TORCHCOST_TESTS_TESTING_OP_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/dtype.h"
#include "torchcost/rules.h"
#include "torchcost/sym.h"

namespace torchcost::testing {

// One argument of an op call: a tensor given by its shape, or a constant.
struct OpArg {
  enum class Kind {
    kTensor,
    kInt,
    kIntList,
    kFloat,
    kBool,
    kNone,
    kString,
    kTensorList
  };
  Kind kind = Kind::kNone;
  // kTensor: "N,3,H,W" (ints or symbols); kTensorList: shapes joined by ';'
  std::string shape;
  DType dtype = DType::kFloat32;
  int64_t i = 0;
  std::vector<int64_t> ints;
  double f = 0;
  bool b = false;
  std::string s;

  static OpArg Tensor(std::string shape, DType dtype = DType::kFloat32);
  static OpArg TensorList(std::vector<std::string> shapes,
                          DType dtype = DType::kFloat32);
  static OpArg Int(int64_t v);
  static OpArg Ints(std::vector<int64_t> v);
  static OpArg Float(double v);
  static OpArg Bool(bool v);
  static OpArg None();
  static OpArg Str(std::string v);
};

// One tensor the node saves for backward (Report.training.saved).
struct OpSaved {
  // The rule's name for it: "self", "out", "mask", "self_copy".
  std::string what;
  sym::Expr bytes;  // Bytes of its storage.
  // The tensor input (0, 1, ... in argument order) whose storage it is; -1: a
  // new storage.
  int input = -1;
  bool counted = false;  // Counted in saved_bytes (a storage's first save).
};

// What the analysis found for the one node.
struct OpResult {
  bool has_rule = false;
  // Canonical text: "[N, 8, floordiv(H - 1, 2) + 1]".
  std::vector<std::string> output_shapes;
  std::vector<DType> output_dtypes;
  sym::Expr macs, flops, transcendentals;
  OpClass op_class = OpClass::kPointwise;  // The kernel class it is timed as.
  std::vector<std::string> errors;         // Error diagnostics' messages.
  std::vector<std::string> assumptions;
  // Training (only with OpRunner::set_inputs_require_grad(true); else nothing
  // requires a gradient):
  sym::Expr bwd_flops;         // Backward FLOPs of the node.
  sym::Expr saved_bytes;       // Report.training.saved_bytes.
  std::vector<OpSaved> saved;  // Report.training.saved, in order.
};

// Builds a one-node graph for each call and analyses it with the builtin rules.
class OpRunner {
 public:
  OpRunner();
  // Also loads `extra_rules` (YAML text named "extra.yaml") over the builtin
  // rules; aborts if it does not parse.
  explicit OpRunner(std::string_view extra_rules);
  // Runs `op` ("aten::conv2d" or "aten::add.Tensor") with arguments named as in
  // its schema.
  OpResult Run(const std::string& op,
               const std::vector<std::pair<std::string, OpArg>>& args);
  // The device whose kernels are modelled (device() in rules): "cuda" (default)
  // or "cpu".
  void set_device(std::string device) { device_ = std::move(device); }
  // Sets the attention kernel modelled ("auto", "math", "flash", "efficient").
  void set_attention_backend(std::string backend) {
    attention_backend_ = std::move(backend);
  }
  // The PyTorch whose autograd formulas are modelled (torch_version() in
  // rules): "2" (default) or "1.13".
  void set_torch_version(std::string version) {
    torch_version_ = std::move(version);
  }
  // If true, floating-point tensor arguments require gradients, so the node has
  // a grad_fn and OpResult reports what it saves (default false).
  void set_inputs_require_grad(bool v) { inputs_require_grad_ = v; }
  // The step modelled (default kTrain). NB: training flags (dropout's `train`,
  // batch_norm's `training`) follow it, whatever the arguments say.
  void set_mode(StepMode mode) { mode_ = mode; }
  // Returns the context that every Run's symbols live in (one per runner).
  sym::Context& ctx() { return *ctx_; }
  // Returns a symbol of the current context, for building expected expressions.
  sym::Expr S(const std::string& name) { return ctx_->Symbol(name); }

 private:
  RuleSet rules_;
  std::unique_ptr<sym::Context> ctx_;
  std::string device_ = "cuda";
  std::string attention_backend_ = "auto";
  std::string torch_version_ = "2";
  bool inputs_require_grad_ = false;
  StepMode mode_ = StepMode::kTrain;
};

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_OP_RUNNER_H_
