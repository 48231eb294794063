// Reads a TorchScript archive without LibTorch: unpickles the module tree
// (data.pkl, constants.pkl; tensor shapes and dtypes, never their data),
// parses the code/ source of traced modules and compiles forward into an
// ir::Graph exactly as the LibTorch reader (torchscript.cc) would make it:
// submodule calls inlined with the same module paths, overloads and default
// arguments resolved from torch's schemas (ts_emit.h, ts_schema.h), the same
// simplifications of inlined callees (int(NumToTensor(x)) is x; dead code
// removed) and the same tables of parameters and buffers.
//
// It declines, rather than guess, any archive that uses something outside
// that subset (scripted control flow, helper methods, attributes other than
// modules and tensors, ops without a schema here): the caller then reads the
// archive with LibTorch.
#ifndef TORCHCOST_SRC_IMPORT_TS_COMPILE_H_
#define TORCHCOST_SRC_IMPORT_TS_COMPILE_H_

#include <string>

#include "import/zip_archive.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost::import {

// Compiles the archive's forward into a graph (its infer_shapes left empty).
// A decline is a Status with code kUnimplemented whose message says what was
// not read; any other error is a broken archive.
Result<ir::Graph> CompileTorchScript(const ZipArchive& archive,
                                     const std::string& path);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_TS_COMPILE_H_
