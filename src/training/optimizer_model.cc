#include "training/optimizer_model.h"

#include "torchcost/graph.h"

namespace torchcost::training {
namespace {

using ir::Numel;

// Adafactor (huggingface transformers' `Adafactor`, which follows Shazeer &
// Stern 2018) upcasts a float16/bfloat16 gradient with grad.float() before it
// creates the state (`.to(grad)`): states and temporaries are float32 then,
// otherwise in the parameter's dtype.
int64_t AdafactorElementSize(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16
             ? 4
             : ElementSize(dtype);
}

// Factored second moments (Shazeer & Stern 2018, Alg. 4) for a 2-D+ tensor
// [..., R, C]: row statistics of shape [..., R] and column statistics of
// shape [..., C] (exp_avg_sq_row = zeros(shape[:-1]), exp_avg_sq_col =
// zeros(shape[:-2] + shape[-1:])), in elements.
int64_t AdafactorRowElements(const std::vector<int64_t>& shape) {
  return Numel(std::vector<int64_t>(shape.begin(), shape.end() - 1));
}
int64_t AdafactorColElements(const std::vector<int64_t>& shape) {
  std::vector<int64_t> col(shape.begin(), shape.end() - 2);
  col.push_back(shape.back());
  return Numel(col);
}

}  // namespace

DType StateDtype(DType param, DType state_dtype, bool master_weights) {
  if (state_dtype != DType::kUnknown) return state_dtype;
  const bool half = param == DType::kFloat16 || param == DType::kBFloat16;
  return master_weights && half ? DType::kFloat32 : param;
}

OptimizerModel ModelOf(OptimizerKind kind) {
  OptimizerModel m;
  switch (kind) {
    case OptimizerKind::kSgd:
      // p.add_(g, alpha=-lr): one multiply and one add per element, in place.
      m.flops_per_element = 2;
      break;
    case OptimizerKind::kSgdMomentum:
      // buf.mul_(m).add_(g) (2), p.add_(buf, alpha=-lr) (2); buf is the state.
      m.state_tensors_per_element = 1;
      m.flops_per_element = 4;
      break;
    case OptimizerKind::kSgdNesterov:
      // torch 1.13 _single_tensor_sgd, nesterov=True: buf.mul_(m).add_(g) (2),
      // d_p = d_p.add(buf, alpha=m) (2), p.add_(d_p, alpha=-lr) (2); buf is the
      // state.
      m.state_tensors_per_element = 1;
      m.flops_per_element = 6;
      m.transient_tensors = 1;  // d_p.add(buf): a new tensor.
      break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      // exp_avg.mul_(b1).add_(g, alpha=1-b1): 3;
      // exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2): 4; denom =
      // (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps): 2 + 1 sqrt;
      // p.addcdiv_(exp_avg, denom, -step): 3. AdamW first decays the weights in
      // place, p.mul_(1 - lr*wd): 1 more. NB: in torch 1.13 `step` is a float32
      // tensor per parameter tensor (4 bytes of state).
      m.state_tensors_per_element = 2;
      m.state_scalar_bytes = 4;
      m.flops_per_element = kind == OptimizerKind::kAdamW ? 13 : 12;
      m.transcendentals_per_element = 1;
      // exp_avg_sq.sqrt() and its quotient are alive together before the sqrt
      // dies.
      m.transient_tensors = 2;
      break;
    case OptimizerKind::kAdagrad:
      // torch 1.13 _single_tensor_adagrad: state_sum.addcmul_(g, g, value=1): 3
      // (the kernel scales by value even when it is 1); std =
      // state_sum.sqrt().add_(eps): 1 sqrt + 1; p.addcdiv_(g, std,
      // value=-clr): 3. State: `sum` (full_like(p)) and `step`, a float32 0-dim
      // tensor (torch.tensor(0.0)): 4 bytes.
      m.state_tensors_per_element = 1;
      m.state_scalar_bytes = 4;
      m.flops_per_element = 7;
      m.transcendentals_per_element = 1;
      m.transient_tensors = 1;  // std.
      break;
    case OptimizerKind::kRmsprop:
      // torch 1.13 _single_tensor_rmsprop (momentum=0, centered=False):
      // square_avg.mul_(alpha).addcmul_(g, g, value=1-alpha): 1 + 3; avg =
      // square_avg.sqrt(): 1 sqrt; avg.add_(eps): 1; p.addcdiv_(g, avg,
      // value=-lr): 3. State: `square_avg`; `step` is a Python int in 1.13 (0
      // tensor bytes).
      m.state_tensors_per_element = 1;
      m.flops_per_element = 8;
      m.transcendentals_per_element = 1;
      m.transient_tensors = 1;  // avg.
      break;
    case OptimizerKind::kLion:
      // Lion (Chen et al. 2023, Alg. 2), as lion-pytorch's update_fn writes it:
      // p.mul_(1 - lr*wd): 1; update = exp_avg.clone().mul_(b1).add(g,
      // alpha=1-b1).sign_(): 1 + 2 + 1; p.add_(update, alpha=-lr): 2;
      // exp_avg.mul_(b2).add_(g, alpha=1-b2): 1 + 2. State: exp_avg only, no
      // step.
      m.state_tensors_per_element = 1;
      m.flops_per_element = 10;
      m.transient_tensors = 2;  // The clone and the out-of-place add.
      break;
    case OptimizerKind::kAdafactor:
      // Shazeer & Stern 2018 (Alg. 4/5: factored, no first moment, update
      // clipping, relative step), as transformers' Adafactor writes it, for a
      // factored [R, C] weight: RMS(p) = p.norm(2)/sqrt(n): 2; update = grad**2
      // + eps1: 2; update.mean(dim=-1), update.mean(dim=-2): 1 + 1 (adds; the
      // divisions are per row/column); torch.mul(r_factor, c_factor): 1;
      // .mul_(grad): 1; RMS(update): 2; update.div_(max(1, RMS/d)): 1;
      // update.mul_(lr): 1; p.add_(-update): 1 (negation) + 1. Sum 14. The
      // row/column EMAs and rsqrt are O(R + C): left out. A 1-D parameter (full
      // second moment) has exp_avg_sq.mul_(b2t).add_(update, alpha=1-b2t) (3)
      // and rsqrt (1 transcendental) in place of the means and the outer
      // product (3): 14 too.
      m.flops_per_element = 14;
      break;
    case OptimizerKind::kAdafactorBeta1:
      // Adafactor(beta1=b1), transformers: as above, plus the first moment
      // after the clipping and lr: exp_avg.mul_(b1).add_(update, alpha=1-b1): 1
      // + 2.
      m.flops_per_element = 14 + 3;
      break;
    case OptimizerKind::kAdam8bit:
      // 8-bit Adam (Dettmers et al. 2022): Adam's arithmetic (12, 1 sqrt) in
      // a fused kernel, plus dequantizing both states (code book value times
      // the block's absmax: 1 each) and requantizing them (block absmax: 1
      // comparison each; division by it: 1 each). The code book search
      // (8 comparisons per state for 256 entries) is not counted as FLOPs.
      m.flops_per_element = 12 + 2 + 2 + 2;
      m.transcendentals_per_element = 1;
      break;
  }
  return m;
}

int64_t StateBytes(OptimizerKind kind, const std::vector<int64_t>& shape,
                   DType dtype) {
  const int64_t n = Numel(shape);
  switch (kind) {
    case OptimizerKind::kAdafactorBeta1:
      // exp_avg = zeros_like(grad): n elements of the (upcast) gradient's
      // dtype, besides.
      return StateBytes(OptimizerKind::kAdafactor, shape, dtype) +
             n * AdafactorElementSize(dtype);
    case OptimizerKind::kAdafactor: {
      // Plus state["RMS"] = _rms(p_data_fp32): a 0-dim tensor of the
      // (upcast) parameter dtype; state["step"] is a Python int (0 bytes).
      const int64_t e = AdafactorElementSize(dtype);
      if (shape.size() >= 2)
        return (AdafactorRowElements(shape) + AdafactorColElements(shape)) * e +
               e;
      return n * e + e;  // exp_avg_sq, the full second moment.
    }
    case OptimizerKind::kAdam8bit: {
      // Block-wise quantization (Dettmers et al. 2022, Sec. 2.1): exp_avg and
      // exp_avg_sq as uint8 codes (1 byte per element each) and one float32
      // absmax per block of 2048 elements per state: ceil(n / 2048) blocks
      // (bitsandbytes: blocks = n // 2048 + (n % 2048 > 0)). NB: bitsandbytes
      // >= 0.45 uses 256-element blocks. Tensors of fewer than min_8bit_size
      // = 4096 elements keep two float32 states. `step` is a Python int.
      if (n < kAdam8bitMinSize) return 2 * n * 4;
      const int64_t blocks = (n + kAdam8bitBlock - 1) / kAdam8bitBlock;
      return 2 * n * 1 + 2 * blocks * 4;
    }
    default: {
      const OptimizerModel m = ModelOf(kind);
      return m.state_tensors_per_element * n * ElementSize(dtype) +
             m.state_scalar_bytes;
    }
  }
}

PagedStateBytes PagedStatesOf(OptimizerKind kind,
                              const std::vector<int64_t>& shape) {
  // bitsandbytes Optimizer2State.init_state: state1, state2 =
  // get_state_buffer(p, dtype), float32 for optim_bits=32 (and 8-bit below
  // min_8bit_size = 4096), uint8 codes otherwise, with float32 absmax per
  // 2048-element block, which are plain device tensors; `step` a Python int.
  // get_state_buffer pages (F.get_paged: cudaMallocManaged) only tensors of >=
  // 1e5 elements.
  const int64_t n = Numel(shape);
  PagedStateBytes b;
  const bool eight_bit =
      kind == OptimizerKind::kAdam8bit && n >= kAdam8bitMinSize;
  const int64_t buffers = 2 * n * (eight_bit ? 1 : 4);
  (n >= kPagedMinElements ? b.host : b.device) = buffers;
  if (eight_bit)
    b.device += 2 * ((n + kAdam8bitBlock - 1) / kAdam8bitBlock) * 4;
  return b;
}

int64_t SharedStateBytes(OptimizerKind kind,
                         const std::vector<std::vector<int64_t>>& shapes) {
  if (kind != OptimizerKind::kAdam8bit) return 0;
  // The signed ("dynamic", exp_avg) and unsigned ("udynamic", exp_avg_sq)
  // code books: 256 float32 values each, one storage each shared by every
  // quantized parameter's state (qmap1, qmap2): 2 * 256 * 4 bytes.
  for (const auto& s : shapes) {
    if (Numel(s) >= kAdam8bitMinSize) return 2 * 256 * 4;
  }
  return 0;
}

UpdateTransients TransientsOf(OptimizerKind kind,
                              const std::vector<int64_t>& shape, DType dtype) {
  const int64_t n = Numel(shape);
  const int64_t bytes = n * ElementSize(dtype);
  UpdateTransients t;
  switch (kind) {
    case OptimizerKind::kSgd:
    case OptimizerKind::kSgdMomentum:
      break;  // In place (SGD momentum: d_p = buf, no copy).
    case OptimizerKind::kSgdNesterov:
      // d_p = d_p.add(buf, alpha=momentum): a new tensor. NB: the loop's first
      // statement rebinds d_p to the next gradient (d_p_list[i]), so the
      // previous parameter's d_p is gone before this one is made: nothing
      // carried.
      t.moments = {bytes};
      break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      // denom = (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps): sqrt and quotient
      // alive together; then the sqrt dies and denom stays bound.
      t.moments = {2 * bytes};
      t.carried = bytes;
      break;
    case OptimizerKind::kAdagrad:
      // std = state_sum.sqrt().add_(eps): one tensor, bound to `std`.
      t.moments = {bytes};
      t.carried = bytes;
      break;
    case OptimizerKind::kRmsprop:
      // avg = square_avg.sqrt(); avg = avg.add_(eps) (the same tensor).
      t.moments = {bytes};
      t.carried = bytes;
      break;
    case OptimizerKind::kLion:
      // exp_avg.clone() and .add(g) alive together, then the clone dies;
      // `update` is local to update_fn, so nothing outlives the call.
      t.moments = {2 * bytes};
      break;
    case OptimizerKind::kAdafactor:
    case OptimizerKind::kAdafactorBeta1: {
      // transformers' Adafactor.step, per parameter (e: element size, N = n*e):
      //   grad = grad.float(); p_data_fp32 = p.float()  (float16/bfloat16 only:
      //       2*n*4 alive for the rest of this parameter's update, dropped when
      //       the next parameter rebinds the names, before its first moment)
      //   update = grad**2 + eps1           grad**2 and the sum: 2N (the
      //   previous
      //                                     parameter's `update` is rebound
      //                                     here)
      //   factored: row/col means (R', C' elements, one at a time), then
      //   _approx_sq_grad: r_factor [.., R', 1] and c_factor [.., 1, C'] and
      //       their product (N) while the old update (N) is bound: 2N +
      //       (R'+C')e
      //   1-D: exp_avg_sq.rsqrt() (N) while the old update is bound: 2N
      //   p.add_(-update): the negation, 2N
      // and `update` (N) stays bound to the next parameter.
      const int64_t e = AdafactorElementSize(dtype);
      const int64_t big = n * e;
      const int64_t upcast = e != ElementSize(dtype) ? 2 * n * 4 : 0;
      t.moments = {upcast + 2 * big};
      if (shape.size() >= 2) {
        t.moments.push_back(
            upcast + 2 * big +
            (AdafactorRowElements(shape) + AdafactorColElements(shape)) * e);
      }
      // Adafactor(beta1): `update = exp_avg` rebinds the name to the state
      // (the old update dies; -update is N beside U: no new maximum), so
      // nothing is carried to the next parameter.
      t.carried = kind == OptimizerKind::kAdafactorBeta1 ? 0 : big;
      break;
    }
    case OptimizerKind::kAdam8bit:
      // One fused kernel per parameter (optimizer_update_8bit_blockwise, and
      // the 32-bit one for small tensors): dequantize, update and requantize
      // each block in registers, in place. No tensor-sized temporaries.
      break;
  }
  return t;
}

std::optional<std::vector<int64_t>> ForeachMoments(
    OptimizerKind kind, int64_t total, std::string_view torch_version) {
  switch (kind) {
    case OptimizerKind::kSgd:
    case OptimizerKind::kSgdMomentum:
    case OptimizerKind::kSgdNesterov:
      // _foreach_add_ / _foreach_mul_ in place; nesterov adds the buffers into
      // the gradients in place.
      return std::vector<int64_t>{};
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      // exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs) (P), _foreach_div_ in
      // place, then 1.13: denom = _foreach_add(exp_avg_sq_sqrt, eps) (P), both
      // bound to the end; 2.x (torch/optim/adam.py, 2.11):
      // _foreach_add_(exp_avg_sq_sqrt, eps) in place.
      return std::vector<int64_t>{torch_version == "2" ? total : 2 * total};
    case OptimizerKind::kAdagrad:
      // 1.13: std = _foreach_add(_foreach_sqrt(sums), eps): 2P, the sqrt list
      // then freed; _foreach_div(_foreach_mul(grads, clr), std): mul and div
      // beside std, 3P. 2.x (adagrad.py _multi_tensor_adagrad): std =
      // _foreach_sqrt(sums) (P), _foreach_add_(std, eps) in place, numerator =
      // _foreach_mul(grads, minus_clr) beside it: 2P.
      if (torch_version == "2") return std::vector<int64_t>{total, 2 * total};
      return std::vector<int64_t>{2 * total, 3 * total};
    case OptimizerKind::kRmsprop:
      // avg = _foreach_sqrt(square_avgs) (P); _foreach_add_(avg, eps) in place.
      return std::vector<int64_t>{total};
    case OptimizerKind::kLion:
    case OptimizerKind::kAdafactor:
    case OptimizerKind::kAdafactorBeta1:
    case OptimizerKind::kAdam8bit:
      break;  // Not torch optimizers.
  }
  return std::nullopt;
}

int64_t MultiTensorLaunches(const std::vector<int64_t>& numels, int depth,
                            bool scalar_list) {
  // multi_tensor_apply (torch 1.13): each tensor adds ceil(numel / 65536)
  // chunks; a launch goes when the tensors reach the depth's limit at a
  // tensor's last chunk, when the chunks reach 320, or at the last chunk of the
  // last tensor. NB: a launch in the middle of a tensor carries that tensor
  // over as the next launch's first.
  const int64_t max_tensors = (scalar_list ? kMultiTensorMaxTensorsScalarList
                                           : kMultiTensorMaxTensors)[depth - 1];
  int64_t launches = 0, tensors = 0, blocks = 0;
  for (size_t t = 0; t < numels.size(); ++t) {
    ++tensors;
    const int64_t chunks =
        (numels[t] + kMultiTensorChunk - 1) / kMultiTensorChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      ++blocks;
      const bool last_of_tensor = c == chunks - 1;
      if ((tensors == max_tensors && last_of_tensor) ||
          blocks == kMultiTensorMaxBlocks ||
          (t + 1 == numels.size() && last_of_tensor)) {
        ++launches;
        blocks = 0;
        tensors = last_of_tensor ? 0 : 1;
      }
    }
  }
  return launches;
}

int64_t OptimizerKernels(OptimizerKind kind, bool foreach,
                         const std::vector<int64_t>& numels,
                         std::string_view torch_version) {
  // NB: `step` is a CPU tensor (torch.tensor(0.)) unless capturable, so
  // `step_t += 1` and _foreach_add_(state_steps, 1) launch no CUDA kernel;
  // RMSprop's and SGD's step is a Python number.
  struct Op {
    int depth;
    bool scalar_list;
  };
  // The foreach step's multi-tensor ops, in order.
  // NB: set by moving a new vector in: GCC 12 takes assigning an initializer
  // list to an empty vector for a memmove from null (-Wnonnull).
  std::vector<Op> ops;
  int64_t per_tensor = 1;  // The single-tensor loop's kernels per tensor.
  switch (kind) {
    case OptimizerKind::kSgd:
      // sgd.py: param.add_(d_p, alpha=-lr): 1. Foreach:
      // _foreach_add_(params, grads): depth 2.
      per_tensor = 1;
      ops = std::vector<Op>{{2, false}};
      break;
    case OptimizerKind::kSgdMomentum:
      // buf.mul_(momentum).add_(d_p): 2, param.add_(buf): 1 (the first step's
      // torch.clone(d_p) instead of mul_ and add_ is left out). Foreach:
      // _foreach_mul_(bufs) 1, _foreach_add_(bufs, grads) 2,
      // _foreach_add_(params, bufs) 2.
      per_tensor = 3;
      ops = std::vector<Op>{{1, false}, {2, false}, {2, false}};
      break;
    case OptimizerKind::kSgdNesterov:
      // Momentum's 3 + d_p = d_p.add(buf): 4. Foreach: + _foreach_add_(grads,
      // bufs) before the parameters' add.
      per_tensor = 4;
      ops = std::vector<Op>{{1, false}, {2, false}, {2, false}, {2, false}};
      break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      // adam.py _single_tensor_adam: exp_avg.mul_(b1).add_(grad) 2,
      // exp_avg_sq.mul_(b2).addcmul_(grad, grad) 2, denom =
      // (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps) 3, param.addcdiv_(exp_avg,
      // denom) 1: 8 (the bias corrections are Python floats). adamw.py adds
      // param.mul_(1 - lr * wd) first: 9. Foreach (_multi_tensor_adam):
      // _foreach_mul_(exp_avgs) 1, _foreach_add_(exp_avgs, grads) 2,
      // _foreach_mul_(exp_avg_sqs) 1, _foreach_addcmul_ 3, _foreach_sqrt 2
      // (input and result lists), _foreach_div_(.., bc2_sqrt list) 1 with
      // scalars, _foreach_add(.., eps) 2, _foreach_addcdiv_(params, exp_avgs,
      // denom, step_size list) 3 with scalars; AdamW first
      // _foreach_mul_(params) 1.
      // torch 2.x (adam.py, 2.11; AdamW is Adam with decoupled weight
      // decay): exp_avg.lerp_(grad) 1 instead of mul_ and add_, so 7 (AdamW
      // 8); foreach _foreach_lerp_(exp_avgs, grads) 2 instead of mul_ and
      // add_, and _foreach_add_(.., eps) 1 in place.
      {
        const bool v2 = torch_version == "2";
        per_tensor = (kind == OptimizerKind::kAdamW ? 9 : 8) - (v2 ? 1 : 0);
        if (kind == OptimizerKind::kAdamW) ops.push_back({1, false});
        if (v2) {
          ops.push_back({2, false});  // _foreach_lerp_(exp_avgs, grads).
        } else {
          ops.insert(ops.end(), {{1, false}, {2, false}});  // mul_, add_.
        }
        // exp_avg_sqs' mul_ and addcmul_, sqrt, div_ by the bc2_sqrt list.
        ops.insert(ops.end(), {{1, false}, {3, false}, {2, false}, {1, true}});
        ops.push_back({v2 ? 1 : 2, false});  // + eps: in place on 2.x.
        ops.push_back({3, true});            // addcdiv_ with step sizes.
      }
      break;
    case OptimizerKind::kAdagrad:
      // adagrad.py: state_sum.addcmul_ 1, std = state_sum.sqrt().add_(eps) 2,
      // param.addcdiv_ 1: 4 (both versions). Foreach 1.13: _foreach_addcmul_
      // 3, _foreach_sqrt 2, _foreach_add(.., eps) 2, _foreach_mul(grads,
      // minus_clr list) 2 with scalars, _foreach_div(.., std) 3,
      // _foreach_add_(params, toAdd) 2. 2.x (_multi_tensor_adagrad):
      // _foreach_addcmul_ 3, _foreach_sqrt 2, _foreach_add_(std, eps) 1,
      // _foreach_mul(grads, minus_clr list) 2 with scalars,
      // _foreach_addcdiv_(params, numerator, std) 3.
      per_tensor = 4;
      if (torch_version == "2") {
        ops = std::vector<Op>{
            {3, false}, {2, false}, {1, false}, {2, true}, {3, false}};
      } else {
        ops = std::vector<Op>{{3, false}, {2, false}, {2, false},
                              {2, true},  {3, false}, {2, false}};
      }
      break;
    case OptimizerKind::kRmsprop:
      // rmsprop.py (momentum 0, not centered): square_avg.mul_().addcmul_() 2,
      // avg = square_avg.sqrt() 1, avg.add_(eps) 1, param.addcdiv_ 1: 5.
      // Foreach: _foreach_mul_ 1, _foreach_addcmul_ 3, _foreach_sqrt 2,
      // _foreach_add_(avg, eps) 1, _foreach_addcdiv_ 3.
      per_tensor = 5;
      ops = std::vector<Op>{
          {1, false}, {3, false}, {2, false}, {1, false}, {3, false}};
      break;
    case OptimizerKind::kLion:
      // lion-pytorch update_fn: p.mul_ 1, exp_avg.clone().mul_().add().sign_()
      // 4, p.add_ 1, exp_avg.mul_().add_() 2: 8.
      per_tensor = 8;
      break;
    case OptimizerKind::kAdam8bit:
      // bitsandbytes: one fused optimizer_update_8bit_blockwise (or 32-bit)
      // kernel per tensor.
      per_tensor = 1;
      break;
    case OptimizerKind::kAdafactor:
    case OptimizerKind::kAdafactorBeta1:
      // NB: not derived (transformers' Adafactor step syncs on its RMS and
      // branches on shape): one per tensor.
      per_tensor = 1;
      break;
  }
  if (!foreach || ops.empty())
    return per_tensor * static_cast<int64_t>(numels.size());
  int64_t kernels = 0;
  for (const Op& op : ops)
    kernels += MultiTensorLaunches(numels, op.depth, op.scalar_list);
  return kernels;
}

int FusedListDepth(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      return 4;
    case OptimizerKind::kSgd:
      return 2;
    case OptimizerKind::kSgdMomentum:
    case OptimizerKind::kSgdNesterov:
    case OptimizerKind::kAdagrad:
      return 3;
    default:
      return 0;
  }
}

int64_t FusedOptimizerKernels(OptimizerKind kind,
                              const std::vector<int64_t>& numels) {
  const int depth = FusedListDepth(kind);
  // NB: fused=True is torch 2.x's: without it, 2.x's single-tensor loop.
  if (depth == 0) return OptimizerKernels(kind, false, numels, "2");
  return MultiTensorLaunches(numels, depth, false);
}

}  // namespace torchcost::training
