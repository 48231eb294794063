// What an eval-mode trace leaves out of a training step and a TorchScript
// reader cannot put back, noted as train gaps the same way by both readers
// (LibTorch's and the one without it).
#ifndef TORCHCOST_SRC_IMPORT_EVAL_MODE_GAPS_H_
#define TORCHCOST_SRC_IMPORT_EVAL_MODE_GAPS_H_

#include <functional>
#include <optional>
#include <string>

#include "torchcost/graph.h"

namespace torchcost::import {

// What a reader knows of the module at a path: whether it was traced in eval
// mode, and a number attribute ("p", "dropout") when recorded or archived.
struct ModuleFacts {
  std::function<bool(const std::string& path)> traced_in_eval;
  std::function<std::optional<double>(const std::string& path,
                                      const std::string& name)>
      number;
};

// NB: torchvision's StochasticDepth returns its input in eval mode, so an
// eval-mode trace has no node for it and no place to put one back: adds a
// train gap to `graph` for each such scope unless its `p` is known to be 0.
void NoteStochasticDepth(const ModuleFacts& facts, ir::Graph* graph);

// Adds the train gap of the MultiheadAttention at `path`, traced in eval mode,
// whose attention dropout cannot be put back because its `dropout` is unknown.
void NoteUnknownAttentionDropout(const std::string& path, ir::Graph* graph);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_EVAL_MODE_GAPS_H_
