#include "import/table_value.h"

#include <utility>

namespace torchcost::import {

int TableValue(ir::Graph* graph, bool is_param, int index) {
  ir::TensorEntry& entry = (is_param ? graph->params : graph->buffers)[index];
  if (entry.value >= 0) return entry.value;
  ir::Value v;
  v.name = entry.name;
  v.role = is_param ? ir::ValueRole::kParam : ir::ValueRole::kBuffer;
  v.table_index = index;
  v.kind = ir::ValueKind::kTensor;
  v.has_traced_shape = true;
  v.traced_shape = entry.shape;
  v.dtype = entry.dtype;
  entry.value = graph->AddValue(std::move(v));
  return entry.value;
}

}  // namespace torchcost::import
