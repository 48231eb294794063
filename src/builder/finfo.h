// torch.finfo(dtype).min for the families' compute dtypes: the fill value of
// Hugging Face's causal masks.
#ifndef TORCHCOST_SRC_BUILDER_FINFO_H_
#define TORCHCOST_SRC_BUILDER_FINFO_H_

#include "torchcost/dtype.h"

namespace torchcost::builder {

// Returns torch.finfo(dtype).min, the most negative finite value (float32 for
// other dtypes).
inline double FinfoMin(DType d) {
  // -(2 - 2^-7) * 2^127.
  if (d == DType::kBFloat16) return -3.3895313892515355e+38;
  // -(2 - 2^-10) * 2^15.
  if (d == DType::kFloat16) return -65504.0;
  // -(2 - 2^-23) * 2^127.
  return -3.4028234663852886e+38;
}

}  // namespace torchcost::builder

#endif  // TORCHCOST_SRC_BUILDER_FINFO_H_
