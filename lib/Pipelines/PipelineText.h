//===- PipelineText.h - the textual pipelines' shared parts ----*- C++ -*-===//
//
// cp-lower-to-cpu and cp-lower-to-nvvm are written as textual pipelines
// (what a user would pass to cp-opt). Both begin the same way: apply the
// scheme, then bufferize with results as out-parameters (the C ABI).
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_PIPELINES_PIPELINETEXT_H
#define CP_LIB_PIPELINES_PIPELINETEXT_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cp::detail {

/// The scheme (when given; auto is chosen for `machine`) and
/// bufferization, each pass followed by ','.
inline void appendSchemeAndBufferization(llvm::raw_ostream &os,
                                         llvm::StringRef scheme,
                                         llvm::StringRef machine) {
  os << "cp-choose-scheme{machine=" << machine;
  if (!scheme.empty())
    os << " scheme=" << scheme;
  os << "},";
  if (!scheme.empty())
    os << "cp-apply-scheme{scheme=" << scheme << "},";
  else
    os << "cp-apply-scheme,";
  os << "canonicalize,cse,"
     << "one-shot-bufferize{bufferize-function-boundaries "
        "function-boundary-type-conversion=identity-layout-map},"
     << "buffer-results-to-out-params{hoist-static-allocs "
        "modify-public-functions},canonicalize,"
     << "buffer-deallocation-pipeline,";
}

/// Adds `text` to `pm`. The text is ours, so a parse error is a bug.
inline void addPipelineText(OpPassManager &pm, llvm::StringRef name,
                            llvm::StringRef text) {
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(parsePassPipeline(text, pm, errorStream)))
    llvm::report_fatal_error(llvm::Twine(name) + ": " + errors);
}

} // namespace mlir::cp::detail

#endif // CP_LIB_PIPELINES_PIPELINETEXT_H
