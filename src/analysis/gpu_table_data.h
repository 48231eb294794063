// The text of gpus/gpus.yaml, embedded at build time (cmake/embed_gpus.cmake).
#ifndef TORCHCOST_SRC_ANALYSIS_GPU_TABLE_DATA_H_
#define TORCHCOST_SRC_ANALYSIS_GPU_TABLE_DATA_H_

#include <string_view>

namespace torchcost::analysis {

// Returns gpus/gpus.yaml as it was when the library was built.
std::string_view BuiltinGpuTableText();

}  // namespace torchcost::analysis

#endif  // TORCHCOST_SRC_ANALYSIS_GPU_TABLE_DATA_H_
