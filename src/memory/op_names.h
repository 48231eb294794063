// The op and module type names the memory model tells apart, as string
// views.
// NB: comparing a node's op to a string view checks the lengths first and
// inline; comparing it to a C string calls std::string::compare (a strlen
// and a memcmp) for every node, which cost ~2% of a generation analysis.
#ifndef TORCHCOST_SRC_MEMORY_OP_NAMES_H_
#define TORCHCOST_SRC_MEMORY_OP_NAMES_H_

#include <string_view>

namespace torchcost::memory::op {

inline constexpr std::string_view kListConstruct = "prim::ListConstruct";
inline constexpr std::string_view kTupleConstruct = "prim::TupleConstruct";
inline constexpr std::string_view kListUnpack = "prim::ListUnpack";
inline constexpr std::string_view kTupleUnpack = "prim::TupleUnpack";
inline constexpr std::string_view kExpand = "aten::expand";
inline constexpr std::string_view kTranspose = "aten::transpose";
inline constexpr std::string_view kReshape = "aten::reshape";
inline constexpr std::string_view kView = "aten::view";
inline constexpr std::string_view kUnsafeView = "aten::_unsafe_view";
inline constexpr std::string_view kUnsqueeze = "aten::unsqueeze";
inline constexpr std::string_view kSqueeze = "aten::squeeze";
inline constexpr std::string_view kFlatten = "aten::flatten";
inline constexpr std::string_view kMatmul = "aten::matmul";
inline constexpr std::string_view kLinear = "aten::linear";
inline constexpr std::string_view kMm = "aten::mm";
inline constexpr std::string_view kAddmm = "aten::addmm";
inline constexpr std::string_view kBmm = "aten::bmm";
inline constexpr std::string_view kBaddbmm = "aten::baddbmm";

}  // namespace torchcost::memory::op

#endif  // TORCHCOST_SRC_MEMORY_OP_NAMES_H_
