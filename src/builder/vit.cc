// The ViT family: torchvision's VisionTransformer (nn.MultiheadAttention in
// its traced, non-fast path) as torch.jit.trace records it on torch 1.13.
#include <cmath>
#include <string>
#include <vector>

#include "builder/attention.h"
#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

struct VitLayer {
  Ref ln_1_w, ln_1_b, in_w, in_b, out_w, out_b, ln_2_w, ln_2_b, fc1_w, fc1_b,
      fc2_w, fc2_b;
};

Ref LayerNorm(GraphBuilder& b, const VitConfig& c, Ref x, Ref w, Ref bias) {
  return b.LayerNorm(x, b.IntList({c.hidden}), w, bias, c.eps);
}

// F.multi_head_attention_forward on batch-first input, self-attention, no mask.
Ref Attention(GraphBuilder& b, const VitConfig& c, const VitLayer& l, Ref x) {
  Ref q_in = b.Transpose(x, 1, 0);
  Ref tgt = b.Size(q_in, 0), bsz = b.Size(q_in, 1), embed = b.Size(q_in, 2);
  Ref tgt_t = b.NumToTensor(tgt), bsz_t = b.NumToTensor(bsz),
      embed_t = b.NumToTensor(embed);
  Ref hd = b.DivMode(embed_t, b.ScalarTensorInt(c.heads), "trunc");
  Ref hd_v = b.IntOf(hd), hd_k = b.IntOf(hd), hd_q = b.IntOf(hd);
  // NB: with tensor parallelism t, this rank's in_proj rows give it heads / t
  // heads.
  const int64_t local_heads = c.heads / c.tp;
  // Megatron's `f` before the column-parallel in_proj: the all-reduce of
  // its input's gradient in backward.
  if (c.tp > 1)
    q_in = b.Op1("torchcost::copy_to_tp_region", "",
                 {{"self", q_in}, {"world", c.tp}});
  std::vector<Ref> qkv = b.Chunk(b.Linear(q_in, l.in_w, l.in_b), 3, -1);
  auto heads = [&](Ref t, Ref len, Ref head_dim) {
    Ref bh = b.IntOf(b.Mul(bsz_t, b.ScalarTensorInt(local_heads)));
    return b.Transpose(b.View(t, b.IntList({len, bh, head_dim})), 0, 1);
  };
  Ref q = heads(b.Contiguous(qkv[0]), tgt, hd_q);
  Ref kc = b.Contiguous(qkv[1]);
  Ref k = heads(kc, b.Size(qkv[1], 0), hd_k);
  Ref vc = b.Contiguous(qkv[2]);
  Ref v = heads(vc, b.Size(qkv[2], 0), hd_v);
  Ref o;
  if (c.attn == "eager") {
    // q_scaled = q / sqrt(head_dim)
    Ref q_scaled = b.Div(
        q, b.ScalarTensor(std::sqrt(static_cast<double>(c.hidden / c.heads))));
    Ref att = b.Softmax(b.Bmm(q_scaled, b.Transpose(k, -2, -1)), -1);
    o = b.Contiguous(b.Transpose(b.Bmm(att, v), 0, 1));
  } else {
    // torch 2.x with need_weights=False (torch/nn/functional.py,
    // multi_head_attention_forward): q, k, v viewed [bsz, heads, len, hd],
    // scaled_dot_product_attention, then permute(2, 0, 1, 3).contiguous().
    auto bhld = [&](Ref t, Ref len, Ref head_dim) {
      return b.View(t, b.IntList({bsz, local_heads, len, head_dim}));
    };
    Ref y = Sdpa(b, bhld(q, tgt, hd_q), bhld(k, b.Size(k, 1), hd_k),
                 bhld(v, b.Size(v, 1), hd_v), Arg::None(), 0.0, false, false);
    o = b.Contiguous(b.Permute(y, b.IntList({2, 0, 1, 3})));
  }
  if (c.tp == 1) {
    o = b.View(o, b.IntList({b.IntOf(b.Mul(tgt_t, bsz_t)), embed}));
    // out_proj's weights, read by the functional call.
    o = b.Linear(o, l.out_w, l.out_b);
  } else {
    // Row-parallel out_proj: this rank's heads times its columns of W_o, summed
    // over the ranks (torchcost::all_reduce), then the replicated bias.
    o = b.View(o, b.IntList({b.IntOf(b.Mul(tgt_t, bsz_t)), c.hidden / c.tp}));
    o = b.Add(b.Op1("torchcost::all_reduce", "",
                    {{"self", b.Linear(o, l.out_w)}, {"world", c.tp}}),
              l.out_b);
  }
  o = b.View(o, b.IntList({tgt, bsz, b.Size(o, 1)}));
  return b.Transpose(o, 1, 0);
}

Ref Block(GraphBuilder& b, const VitConfig& c, const VitLayer& l, Ref input) {
  Ref x;
  {
    ScopeGuard s(b, "ln_1", "LayerNorm");
    x = LayerNorm(b, c, input, l.ln_1_w, l.ln_1_b);
  }
  {
    ScopeGuard s(b, "self_attention", "MultiheadAttention");
    x = Attention(b, c, l, x);
  }
  {
    ScopeGuard s(b, "dropout", "Dropout");
    x = b.Dropout(x, c.dropout);
  }
  x = b.Add(x, input);
  Ref y;
  {
    ScopeGuard s(b, "ln_2", "LayerNorm");
    y = LayerNorm(b, c, x, l.ln_2_w, l.ln_2_b);
  }
  {
    ScopeGuard mlp(b, "mlp", "MLPBlock");
    {
      ScopeGuard s(b, "0", "Linear");
      if (c.tp > 1)  // Megatron's `f`, as before in_proj.
        y = b.Op1("torchcost::copy_to_tp_region", "",
                  {{"self", y}, {"world", c.tp}});
      y = b.Linear(y, l.fc1_w, l.fc1_b);
    }
    {
      ScopeGuard s(b, "1", "GELU");
      y = b.Gelu(y, "none");
    }
    {
      ScopeGuard s(b, "2", "Dropout");
      y = b.Dropout(y, c.dropout);
    }
    {
      ScopeGuard s(b, "3", "Linear");
      y = c.tp == 1
              ? b.Linear(y, l.fc2_w, l.fc2_b)
              : b.Add(b.Op1("torchcost::all_reduce", "",
                            {{"self", b.Linear(y, l.fc2_w)}, {"world", c.tp}}),
                      l.fc2_b);
    }
    {
      ScopeGuard s(b, "4", "Dropout");
      y = b.Dropout(y, c.dropout);
    }
  }
  return b.Add(x, y);
}

}  // namespace

Result<BuiltModel> BuildVit(const VitConfig& c) {
  Validator v("vit");
  v.Positive("image_size", c.image_size);
  v.Positive("patch", c.patch);
  v.Layers("layers", c.layers);
  v.Positive("hidden", c.hidden);
  v.Positive("heads", c.heads);
  v.Positive("mlp", c.mlp);
  v.Positive("classes", c.classes);
  v.Divides("patch", c.patch, "image_size", c.image_size);
  v.Divides("heads", c.heads, "hidden", c.hidden);
  v.Probability("dropout", c.dropout);
  v.PositiveFloat("eps", c.eps);
  v.Positive("tp", c.tp);
  v.Divides("tp", c.tp, "heads", c.heads);
  v.Divides("tp", c.tp, "mlp", c.mlp);
  v.Require(AttnImplError(c.attn).empty(), AttnImplError(c.attn));
  v.Require(c.attn == "eager" || c.attn == "sdpa",
            "attn=" + c.attn +
                ": torchvision's ViT has no flash-attn path (sdpa runs "
                "PyTorch's flash kernel: "
                "StepConfig.attention_backend flash)");
  v.ComputeDType("dtype", c.dtype);
  if (!v.ok()) return v.status();
  // NB: with tensor parallelism t, one rank's shards (Megatron, Shoeybi et al.
  // 2019, Sec. 3): in_proj and mlp.0 split by output rows, out_proj and mlp.3
  // by input columns (biases replicated).
  const int64_t h = c.hidden, t = c.tp;
  // Patches + class token.
  const int64_t seq = (c.image_size / c.patch) * (c.image_size / c.patch) + 1;

  GraphBuilder b("VisionTransformer", "vit (builder)");

  b.HiddenSize(c.hidden);
  Ref x = b.Input("x", {"B", 3, c.image_size, c.image_size}, c.dtype);

  // Declaration pass, in registration order.
  Ref class_token = b.Param("class_token", {1, 1, h}, c.dtype);
  Ref conv_w, conv_b, pos, ln_w, ln_b, head_w, head_b;
  {
    ScopeGuard s(b, "conv_proj", "Conv2d");
    conv_w = b.Param(b.Qualify("weight"), {h, 3, c.patch, c.patch}, c.dtype);
    conv_b = b.Param(b.Qualify("bias"), {h}, c.dtype);
  }
  std::vector<VitLayer> layers;
  {
    ScopeGuard enc(b, "encoder", "Encoder");
    pos = b.Param(b.Qualify("pos_embedding"), {1, seq, h}, c.dtype);
    { ScopeGuard s(b, "dropout", "Dropout"); }
    {
      ScopeGuard list(b, "layers", "Sequential");
      for (int64_t i = 0; i < c.layers; ++i) {
        ScopeGuard blk(b, "encoder_layer_" + std::to_string(i), "EncoderBlock");
        VitLayer l;
        auto param = [&](const std::string& n, std::vector<int64_t> shape) {
          return b.Param(b.Qualify(n), shape, c.dtype);
        };
        {
          ScopeGuard s(b, "ln_1", "LayerNorm");
          l.ln_1_w = param("weight", {h});
          l.ln_1_b = param("bias", {h});
        }
        {
          ScopeGuard s(b, "self_attention", "MultiheadAttention");
          l.in_w = param("in_proj_weight", {3 * h / t, h});
          l.in_b = param("in_proj_bias", {3 * h / t});
          ScopeGuard o(b, "out_proj", "NonDynamicallyQuantizableLinear");
          l.out_w = param("weight", {h, h / t});
          l.out_b = param("bias", {h});
        }
        { ScopeGuard s(b, "dropout", "Dropout"); }
        {
          ScopeGuard s(b, "ln_2", "LayerNorm");
          l.ln_2_w = param("weight", {h});
          l.ln_2_b = param("bias", {h});
        }
        {
          ScopeGuard mlp(b, "mlp", "MLPBlock");
          {
            ScopeGuard s(b, "0", "Linear");
            l.fc1_w = param("weight", {c.mlp / t, h});
            l.fc1_b = param("bias", {c.mlp / t});
          }
          { ScopeGuard s(b, "1", "GELU"); }
          { ScopeGuard s(b, "2", "Dropout"); }
          {
            ScopeGuard s(b, "3", "Linear");
            l.fc2_w = param("weight", {h, c.mlp / t});
            l.fc2_b = param("bias", {h});
          }
          { ScopeGuard s(b, "4", "Dropout"); }
        }
        layers.push_back(l);
      }
    }
    ScopeGuard s(b, "ln", "LayerNorm");
    ln_w = b.Param(b.Qualify("weight"), {h}, c.dtype);
    ln_b = b.Param(b.Qualify("bias"), {h}, c.dtype);
  }
  {
    ScopeGuard hs(b, "heads", "Sequential");
    ScopeGuard s(b, "head", "Linear");
    head_w = b.Param(b.Qualify("weight"), {c.classes, h}, c.dtype);
    head_b = b.Param(b.Qualify("bias"), {c.classes}, c.dtype);
  }

  // _process_input: n, h, w = x.shape; patchify; reshape(n, hidden, n_h * n_w);
  // permute(0, 2, 1).
  Ref n = b.IntOf(b.NumToTensor(b.Size(x, 0)));
  Ref n_h =
      b.FloorDivide(b.NumToTensor(b.Size(x, 2)), b.ScalarTensorInt(c.patch));
  Ref n_w =
      b.FloorDivide(b.NumToTensor(b.Size(x, 3)), b.ScalarTensorInt(c.patch));
  {
    ScopeGuard s(b, "conv_proj", "Conv2d");
    x = b.Convolution(x, conv_w, conv_b, {c.patch, c.patch}, {0, 0}, {1, 1}, 1);
  }
  x = b.Reshape(x, b.IntList({n, h, b.IntOf(b.Mul(n_h, n_w))}));
  x = b.Permute(x, b.IntList({0, 2, 1}));
  // batch_class_token = class_token.expand(n, -1, -1); cat along the sequence.
  Ref n0 = b.IntOf(b.NumToTensor(b.Size(x, 0)));
  Ref cls = b.Expand(class_token, b.IntList({n0, -1, -1}));
  x = b.Cat(b.TensorList({cls, x}), 1);
  {
    ScopeGuard enc(b, "encoder", "Encoder");
    x = b.Add(x, pos);
    {
      ScopeGuard s(b, "dropout", "Dropout");
      x = b.Dropout(x, c.dropout);
    }
    {
      ScopeGuard list(b, "layers", "Sequential");
      for (int64_t i = 0; i < c.layers; ++i) {
        ScopeGuard blk(b, "encoder_layer_" + std::to_string(i), "EncoderBlock");
        x = Block(b, c, layers[i], x);
      }
    }
    ScopeGuard s(b, "ln", "LayerNorm");
    x = LayerNorm(b, c, x, ln_w, ln_b);
  }
  // x[:, 0]
  x = b.Select(b.Slice(x, 0, 0, kSliceToEnd), 1, 0);
  {
    ScopeGuard hs(b, "heads", "Sequential");
    ScopeGuard s(b, "head", "Linear");
    x = b.Linear(x, head_w, head_b);
  }
  b.Output(x);
  // An image classifier's loss over classes (src/training/loss.cc).
  b.DefaultLoss("cross_entropy");
  return b.Finish();
}

}  // namespace torchcost::builder
