// GraphBuilder's layer and tensor ops: aten nodes with the argument names and
// overloads of torch 1.13's schemas, and the constants a trace records for the
// arguments left at their defaults.
#include "torchcost/builder.h"

namespace torchcost::builder {

Ref GraphBuilder::Linear(Ref input, Ref weight, Arg bias) {
  return Op1("aten::linear", "",
             {{"input", input}, {"weight", weight}, {"bias", bias}});
}

Ref GraphBuilder::Addmm(Ref self, Ref mat1, Ref mat2) {
  return Op1("aten::addmm", "",
             {{"self", self},
              {"mat1", mat1},
              {"mat2", mat2},
              {"beta", 1},
              {"alpha", 1}});
}

Ref GraphBuilder::Embedding(Ref weight, Ref indices) {
  return Op1("aten::embedding", "",
             {{"weight", weight},
              {"indices", indices},
              {"padding_idx", -1},
              {"scale_grad_by_freq", false},
              {"sparse", false}});
}

Ref GraphBuilder::LayerNorm(Ref input, Ref normalized_shape, Ref weight,
                            Ref bias, double eps) {
  return Op1("aten::layer_norm", "",
             {{"input", input},
              {"normalized_shape", normalized_shape},
              {"weight", weight},
              {"bias", bias},
              {"eps", eps},
              {"cudnn_enable", true}});
}

Ref GraphBuilder::Matmul(Ref self, Ref other) {
  return Op1("aten::matmul", "", {{"self", self}, {"other", other}});
}

Ref GraphBuilder::Bmm(Ref self, Ref mat2) {
  return Op1("aten::bmm", "", {{"self", self}, {"mat2", mat2}});
}

Ref GraphBuilder::Softmax(Ref self, int64_t dim, Arg dtype) {
  return Op1("aten::softmax", "int",
             {{"self", self}, {"dim", dim}, {"dtype", dtype}});
}

Ref GraphBuilder::MaskedFill(Ref self, Ref mask, Arg value) {
  return Op1("aten::masked_fill", "Scalar",
             {{"self", self}, {"mask", mask}, {"value", value}});
}

Ref GraphBuilder::Where(Ref condition, Ref self, Ref other) {
  return Op1("aten::where", "self",
             {{"condition", condition}, {"self", self}, {"other", other}});
}

Ref GraphBuilder::Gelu(Ref self, const char* approximate) {
  return Op1("aten::gelu", "", {{"self", self}, {"approximate", approximate}});
}

Ref GraphBuilder::Silu(Ref self) {
  return Op1("aten::silu", "", {{"self", self}});
}
Ref GraphBuilder::Relu(Ref self) {
  return Op1("aten::relu", "", {{"self", self}});
}
Ref GraphBuilder::Relu_(Ref self) {
  return Op1("aten::relu_", "", {{"self", self}});
}
Ref GraphBuilder::Neg(Ref self) {
  return Op1("aten::neg", "", {{"self", self}});
}
Ref GraphBuilder::Rsqrt(Ref self) {
  return Op1("aten::rsqrt", "", {{"self", self}});
}
Ref GraphBuilder::Cos(Ref self) {
  return Op1("aten::cos", "", {{"self", self}});
}
Ref GraphBuilder::Sin(Ref self) {
  return Op1("aten::sin", "", {{"self", self}});
}
Ref GraphBuilder::Reciprocal(Ref self) {
  return Op1("aten::reciprocal", "", {{"self", self}});
}
Ref GraphBuilder::Detach(Ref self) {
  return Op1("aten::detach", "", {{"self", self}});
}

Ref GraphBuilder::Mul(Ref self, Ref other) {
  return Op1("aten::mul", "Tensor", {{"self", self}, {"other", other}});
}
Ref GraphBuilder::Div(Ref self, Ref other) {
  return Op1("aten::div", "Tensor", {{"self", self}, {"other", other}});
}

Ref GraphBuilder::DivMode(Ref self, Ref other, Arg rounding_mode) {
  return Op1(
      "aten::div", "Tensor_mode",
      {{"self", self}, {"other", other}, {"rounding_mode", rounding_mode}});
}

Ref GraphBuilder::FloorDivide(Ref self, Ref other) {
  return Op1("aten::floor_divide", "", {{"self", self}, {"other", other}});
}

Ref GraphBuilder::Add(Ref self, Ref other, Arg alpha) {
  return Op1("aten::add", "Tensor",
             {{"self", self}, {"other", other}, {"alpha", alpha}});
}

Ref GraphBuilder::Add_(Ref self, Ref other, Arg alpha) {
  return Op1("aten::add_", "Tensor",
             {{"self", self}, {"other", other}, {"alpha", alpha}});
}

Ref GraphBuilder::PowScalar(Ref self, Arg exponent) {
  return Op1("aten::pow", "Tensor_Scalar",
             {{"self", self}, {"exponent", exponent}});
}

Ref GraphBuilder::PowTensor(Ref self, Ref exponent) {
  return Op1("aten::pow", "Tensor_Tensor",
             {{"self", self}, {"exponent", exponent}});
}

Ref GraphBuilder::MeanDim(Ref self, Ref dim, bool keepdim, Arg dtype) {
  return Op1(
      "aten::mean", "dim",
      {{"self", self}, {"dim", dim}, {"keepdim", keepdim}, {"dtype", dtype}});
}

Ref GraphBuilder::Outer(Ref self, Ref vec2) {
  return Op1("aten::outer", "", {{"self", self}, {"vec2", vec2}});
}

Ref GraphBuilder::Triu(Ref self, int64_t diagonal) {
  return Op1("aten::triu", "", {{"self", self}, {"diagonal", diagonal}});
}

Ref GraphBuilder::RepeatInterleave(Ref self, int64_t repeats, int64_t dim) {
  return Op1("aten::repeat_interleave", "self_int",
             {{"self", self},
              {"repeats", repeats},
              {"dim", dim},
              {"output_size", Arg::None()}});
}

Ref GraphBuilder::View(Ref self, Ref size) {
  return Op1("aten::view", "", {{"self", self}, {"size", size}});
}

Ref GraphBuilder::Reshape(Ref self, Ref shape) {
  return Op1("aten::reshape", "", {{"self", self}, {"shape", shape}});
}

Ref GraphBuilder::Transpose(Ref self, int64_t dim0, int64_t dim1) {
  return Op1("aten::transpose", "int",
             {{"self", self}, {"dim0", dim0}, {"dim1", dim1}});
}

Ref GraphBuilder::Permute(Ref self, Ref dims) {
  return Op1("aten::permute", "", {{"self", self}, {"dims", dims}});
}

Ref GraphBuilder::Contiguous(Ref self) {
  // memory_format 0: torch.contiguous_format.
  return Op1("aten::contiguous", "", {{"self", self}, {"memory_format", 0}});
}

Ref GraphBuilder::Unsqueeze(Ref self, int64_t dim) {
  return Op1("aten::unsqueeze", "", {{"self", self}, {"dim", dim}});
}

Ref GraphBuilder::Flatten(Ref self, int64_t start_dim, int64_t end_dim) {
  return Op1("aten::flatten", "using_ints",
             {{"self", self}, {"start_dim", start_dim}, {"end_dim", end_dim}});
}

Ref GraphBuilder::Expand(Ref self, Ref size) {
  return Op1("aten::expand", "",
             {{"self", self}, {"size", size}, {"implicit", false}});
}

Ref GraphBuilder::Slice(Ref self, int64_t dim, IntItem start, IntItem end,
                        int64_t step) {
  auto arg = [](const IntItem& it) {
    return it.is_value() ? Arg(it.value()) : Arg(it.constant());
  };
  return Op1("aten::slice", "Tensor",
             {{"self", self},
              {"dim", dim},
              {"start", arg(start)},
              {"end", arg(end)},
              {"step", step}});
}

Ref GraphBuilder::Select(Ref self, int64_t dim, int64_t index) {
  return Op1("aten::select", "int",
             {{"self", self}, {"dim", dim}, {"index", index}});
}

Ref GraphBuilder::Cat(Ref tensors, int64_t dim) {
  return Op1("aten::cat", "", {{"tensors", tensors}, {"dim", dim}});
}

std::vector<Ref> GraphBuilder::Split(Ref self, int64_t split_size, int64_t dim,
                                     int n) {
  Ref list = Op("aten::split", "Tensor",
                {{"self", self}, {"split_size", split_size}, {"dim", dim}}, 1,
                ir::ValueKind::kList)[0];
  return Unpack(list, n);
}

std::vector<Ref> GraphBuilder::Chunk(Ref self, int64_t chunks, int64_t dim) {
  Ref list =
      Op("aten::chunk", "", {{"self", self}, {"chunks", chunks}, {"dim", dim}},
         1, ir::ValueKind::kList)[0];
  return Unpack(list, static_cast<int>(chunks));
}

Ref GraphBuilder::ToDtype(Ref self, DType dtype) {
  return Op1("aten::to", "dtype",
             {{"self", self},
              {"dtype", Arg::ScalarType(dtype)},
              {"non_blocking", false},
              {"copy", false},
              {"memory_format", Arg::None()}});
}

Ref GraphBuilder::ToDevice(Ref self, const std::string& device, DType dtype) {
  return Op1("aten::to", "device",
             {{"self", self},
              {"device", Arg::Device(device)},
              {"dtype", Arg::ScalarType(dtype)},
              {"non_blocking", false},
              {"copy", false},
              {"memory_format", Arg::None()}});
}

Ref GraphBuilder::Full(Ref size, Arg fill_value, Arg dtype) {
  return Op1("aten::full", "",
             {{"size", size},
              {"fill_value", fill_value},
              {"dtype", dtype},
              {"layout", Arg::None()},
              {"device", Arg::Device("cpu")},
              {"pin_memory", false}});
}

Ref GraphBuilder::Arange(Arg end, Arg dtype) {
  return Op1("aten::arange", "",
             {{"end", end},
              {"dtype", dtype},
              {"layout", Arg::None()},
              {"device", Arg::Device("cpu")},
              {"pin_memory", false}});
}

Ref GraphBuilder::ArangeStart(Arg start, Arg end, Arg dtype) {
  return Op1("aten::arange", "start",
             {{"start", start},
              {"end", end},
              {"dtype", dtype},
              {"layout", Arg::None()},
              {"device", Arg::Device("cpu")},
              {"pin_memory", false}});
}

Ref GraphBuilder::ArangeStartStep(Arg start, Arg end, Arg step, Arg dtype) {
  return Op1("aten::arange", "start_step",
             {{"start", start},
              {"end", end},
              {"step", step},
              {"dtype", dtype},
              {"layout", Arg::None()},
              {"device", Arg::Device("cpu")},
              {"pin_memory", false}});
}

Ref GraphBuilder::Dropout(Ref input, double p, bool train) {
  return Op1("aten::dropout", "",
             {{"input", input}, {"p", p}, {"train", train}});
}

Ref GraphBuilder::Convolution(Ref input, Ref weight, Arg bias,
                              std::vector<int64_t> stride,
                              std::vector<int64_t> padding,
                              std::vector<int64_t> dilation, int64_t groups) {
  // As F.conv2d traces: not transposed, output_padding 0, benchmark and
  // deterministic off, cudnn and tf32 on.
  const std::vector<int64_t> output_padding(stride.size(), 0);
  Ref s = ConstList(stride), p = ConstList(padding), d = ConstList(dilation),
      op = ConstList(output_padding);
  return Op1("aten::_convolution", "",
             {{"input", input},
              {"weight", weight},
              {"bias", bias},
              {"stride", s},
              {"padding", p},
              {"dilation", d},
              {"transposed", false},
              {"output_padding", op},
              {"groups", groups},
              {"benchmark", false},
              {"deterministic", false},
              {"cudnn_enabled", true},
              {"allow_tf32", true}});
}

Ref GraphBuilder::BatchNorm(Ref input, Ref weight, Ref bias, Ref running_mean,
                            Ref running_var, double momentum, double eps) {
  // training=False as an eval-mode trace records it; the analysis follows its
  // own mode.
  return Op1("aten::batch_norm", "",
             {{"input", input},
              {"weight", weight},
              {"bias", bias},
              {"running_mean", running_mean},
              {"running_var", running_var},
              {"training", false},
              {"momentum", momentum},
              {"eps", eps},
              {"cudnn_enabled", true}});
}

Ref GraphBuilder::MaxPool2d(Ref self, std::vector<int64_t> kernel_size,
                            std::vector<int64_t> stride,
                            std::vector<int64_t> padding,
                            std::vector<int64_t> dilation, bool ceil_mode) {
  Ref k = ConstList(kernel_size), s = ConstList(stride), p = ConstList(padding),
      d = ConstList(dilation);
  return Op1("aten::max_pool2d", "",
             {{"self", self},
              {"kernel_size", k},
              {"stride", s},
              {"padding", p},
              {"dilation", d},
              {"ceil_mode", ceil_mode}});
}

Ref GraphBuilder::AdaptiveAvgPool2d(Ref self,
                                    std::vector<int64_t> output_size) {
  return Op1("aten::adaptive_avg_pool2d", "",
             {{"self", self}, {"output_size", ConstList(output_size)}});
}

}  // namespace torchcost::builder
