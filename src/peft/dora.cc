// DoRA (Liu et al. 2024) as huggingface peft's DoraLinearLayer.forward computes
// it:
//   lora_weight = lora_B(lora_A(eye(in))).T          (B A, through the layers'
//   forwards) weight_norm = ||W + scaling * lora_weight.detach()||_2 per output
//   row, detached mag_norm_scale = (m / weight_norm).view(1, -1) result = y +
//   (mag_norm_scale - 1) * (y - b) + mag_norm_scale * lora_B(lora_A(x)) *
//   scaling
// where y - b is the base result without its bias when dropout is an identity,
// else F.linear(dropout(x), W) is computed again.
#include "peft/adapters.h"

namespace torchcost::peft {

int EmitDora(passes::GraphEditor& ed, const AdapterSite& site,
             const LoraConfig& c, const LoraBranch& lora, int x_dropped) {
  ir::Graph& g = ed.graph();
  const int s_dora =
      g.GetOrAddScope(site.path + ".lora_magnitude_vector", "DoraLinearLayer");
  const int magnitude = ed.Param(site.path + ".lora_magnitude_vector.weight",
                                 {site.out}, c.adapter_dtype, true);
  const int none = ed.None();
  auto linear = [&](int in, int w, int scope) {
    return ed.Op("aten::linear", "", {in, w, none}, {"input", "weight", "bias"},
                 scope);
  };
  // x_eye = torch.eye(in, dtype=x.dtype); lora_weight = lora_B(lora_A(x_eye)).T
  const int eye =
      ed.Op("aten::eye", "", {ed.Int(site.in), ed.ScalarType(c.adapter_dtype)},
            {"n", "dtype"}, s_dora);
  const int a_eye = linear(eye, lora.a, lora.scope_a);
  const int ba_t = linear(a_eye, lora.b, lora.scope_b);
  const int lora_weight = ed.Op("aten::numpy_T", "", {ba_t}, {"self"}, s_dora);
  // weight = weight.to(x.dtype); weight + scaling * lora_weight.detach()
  const int weight =
      ed.Op("aten::to", "dtype", {site.weight, ed.ScalarType(c.adapter_dtype)},
            {"self", "dtype"}, s_dora);
  // get_weight_norm: weight = transpose(weight, fan_in_fan_out), a view for
  // Conv1D's [in, out].
  const int oriented = site.fan_in_fan_out ? ed.Op("aten::numpy_T", "",
                                                   {weight}, {"self"}, s_dora)
                                           : weight;
  const int detached =
      ed.Op("aten::detach", "", {lora_weight}, {"self"}, s_dora);
  const int scaled =
      ed.Op("aten::mul", "Scalar", {detached, ed.Float(lora.scaling)},
            {"self", "other"}, s_dora);
  const int combined =
      ed.Op("aten::add", "Tensor", {oriented, scaled, ed.Int(1)},
            {"self", "other", "alpha"}, s_dora);
  // torch.linalg.norm(weight, dim=1).to(weight.dtype), then .detach()
  const int norm = ed.Op("aten::linalg_norm", "",
                         {combined, none, ed.Ints({1}), ed.Bool(false), none},
                         {"self", "ord", "dim", "keepdim", "dtype"}, s_dora);
  const int norm_d = ed.Op("aten::detach", "", {norm}, {"self"}, s_dora);
  // mag_norm_scale = (magnitude / weight_norm).view(1, -1)
  const int ratio = ed.Op("aten::div", "Tensor", {magnitude, norm_d},
                          {"self", "other"}, s_dora);
  const int scale = ed.Op("aten::view", "", {ratio, ed.Ints({1, -1})},
                          {"self", "size"}, s_dora);
  // lora_result = lora_B(lora_A(x))
  const int lora_result =
      linear(linear(x_dropped, lora.a, lora.scope_a), lora.b, lora.scope_b);
  int base_result;
  if (c.dropout > 0) {
    // F.linear(x, transpose(weight, fan_in_fan_out)): the base again, on the
    // dropped-out input.
    const int w_t = site.fan_in_fan_out
                        ? ed.Op("aten::numpy_T", "", {weight}, {"self"}, s_dora)
                        : weight;
    base_result = linear(x_dropped, w_t, s_dora);
  } else if (site.bias >= 0) {
    base_result = ed.Op("aten::sub", "Tensor", {site.y, site.bias, ed.Int(1)},
                        {"self", "other", "alpha"}, s_dora);
  } else {
    base_result = site.y;
  }
  // (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_result * scaling
  const int minus_one =
      ed.Op("aten::sub", "Scalar", {scale, ed.Int(1), ed.Int(1)},
            {"self", "other", "alpha"}, s_dora);
  const int left = ed.Op("aten::mul", "Tensor", {minus_one, base_result},
                         {"self", "other"}, s_dora);
  const int right = ed.Op("aten::mul", "Tensor", {scale, lora_result},
                          {"self", "other"}, s_dora);
  const int right_s =
      ed.Op("aten::mul", "Tensor", {right, ed.WrappedNumber(DType::kFloat64)},
            {"self", "other"}, s_dora);
  const int dora = ed.Op("aten::add", "Tensor", {left, right_s, ed.Int(1)},
                         {"self", "other", "alpha"}, s_dora);
  // NB: the forward's locals (x_eye, lora_weight and the graph behind it that
  // saves A x_eye, weight_norm, mag_norm_scale, lora_result, base_result) live
  // until it returns.
  ed.KeepAlive({eye, a_eye, ba_t, norm_d, ratio, lora_result, base_result},
               s_dora);
  return ed.Op("aten::add", "Tensor", {site.y, dora, ed.Int(1)},
               {"self", "other", "alpha"}, site.scope);
}

}  // namespace torchcost::peft
