#include "nas/interpolate.h"

#include <string>

namespace torchcost::nas {
namespace {

Status Overflow() {
  return Status::OutOfRange("interpolation: 128-bit overflow");
}

}  // namespace

Status DividedDifferences(const int64_t* x, size_t n, __int128* f,
                          size_t stride) {
  // f[x_{j-k} .. x_j] = (f[x_{j-k+1} .. x_j] - f[x_{j-k} .. x_{j-1}]) / (x_j -
  // x_{j-k}).
  for (size_t k = 1; k < n; ++k) {
    for (size_t j = n - 1; j >= k; --j) {
      __int128 num;
      if (__builtin_sub_overflow(f[j * stride], f[(j - 1) * stride], &num))
        return Overflow();
      const __int128 den = static_cast<__int128>(x[j]) - x[j - k];
      if (den == 0)
        return Status::InvalidArgument("interpolation: repeated sample point");
      if (num % den != 0) {
        return Status::InvalidArgument(
            "interpolation: the samples are no integer polynomial of degree "
            "< " +
            std::to_string(n));
      }
      f[j * stride] = num / den;
    }
  }
  return Status::Ok();
}

Status NewtonToMonomial(const int64_t* x, size_t n, __int128* c,
                        size_t stride) {
  if (n == 0) return Status::Ok();
  // Horner on the Newton form: p = c_{n-1}; p = p * (X - x_k) + c_k for k = n-2
  // .. 0, with (p * (X - x_k))[e] = p[e - 1] - x_k * p[e].
  std::vector<__int128> a(n, 0);
  a[0] = c[(n - 1) * stride];
  size_t deg = 0;
  for (size_t kk = n - 1; kk-- > 0;) {
    const __int128 xk = x[kk];
    // e = deg + 1 .. 0; the old a[deg + 1] is 0.
    for (size_t e = deg + 2; e-- > 0;) {
      __int128 term;
      if (__builtin_mul_overflow(xk, a[e], &term)) return Overflow();
      const __int128 lower = e > 0 ? a[e - 1] : 0;
      if (__builtin_sub_overflow(lower, term, &a[e])) return Overflow();
    }
    ++deg;
    if (__builtin_add_overflow(a[0], c[kk * stride], &a[0])) return Overflow();
  }
  for (size_t e = 0; e < n; ++e) c[e * stride] = a[e];
  return Status::Ok();
}

Status InterpolateGrid(const std::vector<std::vector<int64_t>>& nodes,
                       size_t width, std::vector<__int128>* values) {
  size_t points = 1;
  for (const auto& axis : nodes) points *= axis.size();
  if (values->size() != points * width)
    return Status::InvalidArgument("interpolation: grid size mismatch");
  // Along each axis in turn: every fiber (other coordinates and the quantity
  // fixed). Distance between consecutive nodes of the current axis.
  size_t inner = width;
  for (const auto& axis : nodes) {
    const size_t n = axis.size();
    const size_t outer = values->size() / (inner * n);
    for (size_t o = 0; o < outer; ++o) {
      for (size_t i = 0; i < inner; ++i) {
        __int128* f = values->data() + o * inner * n + i;
        TORCHCOST_RETURN_IF_ERROR(DividedDifferences(axis.data(), n, f, inner));
        TORCHCOST_RETURN_IF_ERROR(NewtonToMonomial(axis.data(), n, f, inner));
      }
    }
    inner *= n;
  }
  return Status::Ok();
}

}  // namespace torchcost::nas
