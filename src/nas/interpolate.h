// Exact polynomial interpolation over integers on a tensor grid of sample
// points (Newton's divided differences), for closed forms in architecture
// symbols learned from concrete analyses (src/nas/arch_space.cc).
#ifndef TORCHCOST_SRC_NAS_INTERPOLATE_H_
#define TORCHCOST_SRC_NAS_INTERPOLATE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "torchcost/status.h"

namespace torchcost::nas {

// Replaces f[0..n) (element i at f[i * stride]), the values of a polynomial at
// the distinct points x[0..n), by Newton's divided differences f[x0..xi].
// NB: for a polynomial with integer coefficients at integer points every
// divided difference is an integer (the order-k difference of x^m is the
// complete homogeneous symmetric polynomial h_{m-k}(x0..xk)), so an inexact
// division proves the data is no such polynomial: an error.
Status DividedDifferences(const int64_t* x, size_t n, __int128* f,
                          size_t stride);

// Replaces Newton coefficients c[0..n) (as DividedDifferences leaves them) at
// the points x by the monomial coefficients a[0..n) of the same polynomial
// (a[e] multiplies x^e). Errors on 128-bit overflow.
Status NewtonToMonomial(const int64_t* x, size_t n, __int128* c, size_t stride);

// Interpolates on the tensor grid nodes[0] x nodes[1] x ...: `values` holds,
// per grid point (axis 0 varying fastest), `width` sampled quantities; each
// becomes, in place, the monomial coefficients prod_a x_a^e_a (e_a in place of
// the node index of axis a). Exact: errors as DividedDifferences.
Status InterpolateGrid(const std::vector<std::vector<int64_t>>& nodes,
                       size_t width, std::vector<__int128>* values);

}  // namespace torchcost::nas

#endif  // TORCHCOST_SRC_NAS_INTERPOLATE_H_
