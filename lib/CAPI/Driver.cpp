//===- Driver.cpp - parse, transform and print cp IR from C ---------------===//
//
// include/cp-c/Driver.h: a cp-opt-equivalent context, and parse / verify /
// run-pipeline / print calls that hand every diagnostic to the caller as
// one formatted string instead of printing it.
//
//===----------------------------------------------------------------------===//

#include "cp-c/Driver.h"
#include "cp/InitAllCP.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;

namespace {

/// Formats one diagnostic as `file:line:col: severity: message` (`name:`
/// for a named location), with its notes on the following lines.
void formatDiagnostic(Diagnostic &diag, llvm::raw_ostream &os) {
  auto prefix = [&os](Location loc, DiagnosticSeverity severity) {
    if (auto file = loc->findInstanceOf<FileLineColLoc>())
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn() << ": ";
    else if (auto name = loc->findInstanceOf<NameLoc>())
      os << name.getName().getValue() << ": ";
    switch (severity) {
    case DiagnosticSeverity::Error:
      os << "error: ";
      break;
    case DiagnosticSeverity::Warning:
      os << "warning: ";
      break;
    case DiagnosticSeverity::Note:
      os << "note: ";
      break;
    case DiagnosticSeverity::Remark:
      os << "remark: ";
      break;
    }
  };
  prefix(diag.getLocation(), diag.getSeverity());
  os << diag.str();
  for (Diagnostic &note : diag.getNotes()) {
    os << "\n";
    prefix(note.getLocation(), DiagnosticSeverity::Note);
    os << note.str();
  }
}

/// While alive, every diagnostic of `ctx` goes to the caller's callback
/// (or is dropped when there is none), never to stderr.
class DiagnosticForwarder {
public:
  DiagnosticForwarder(MLIRContext *ctx, MlirStringCallback callback,
                      void *userData)
      : handler(ctx, [=](Diagnostic &diag) {
          std::string text;
          llvm::raw_string_ostream os(text);
          formatDiagnostic(diag, os);
          if (diag.getSeverity() == DiagnosticSeverity::Error)
            ++errors;
          if (callback)
            callback(mlirStringRefCreate(text.data(), text.size()), userData);
          return success();
        }) {}

  /// Reports `message` as an error when the failure produced no diagnostic
  /// of its own (a pass that failed silently), so failures never go
  /// unexplained.
  void ensureExplained(MLIRContext *ctx, const llvm::Twine &message) {
    if (errors == 0)
      emitError(UnknownLoc::get(ctx)) << message;
  }

private:
  int errors = 0;
  ScopedDiagnosticHandler handler;
};

void registerPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    cp::registerAllPasses();
  });
}

} // namespace

MlirContext cpContextCreate(void) {
  registerPassesOnce();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllGPUToLLVMIRTranslations(registry);
  cp::registerAllDialects(registry);
  auto *ctx = new MLIRContext(registry);
  ctx->loadDialect<cp::CPDialect>();
  // Diagnostics reach callers as strings; the op dump that the pass manager
  // would attach to each one would drown the message.
  ctx->printOpOnDiagnostic(false);
  return wrap(ctx);
}

MlirModule cpModuleParse(MlirContext ctx, MlirStringRef source,
                         MlirStringRef sourceName,
                         MlirStringCallback onDiagnostic, void *userData) {
  MLIRContext *context = unwrap(ctx);
  DiagnosticForwarder forward(context, onDiagnostic, userData);
  ParserConfig config(context, /*verifyAfterParse=*/true);
  StringRef name = unwrap(sourceName);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      unwrap(source), config, name.empty() ? "<input>" : name);
  if (!module)
    return MlirModule{nullptr};
  return MlirModule{module.release().getOperation()};
}

MlirLogicalResult cpModuleVerify(MlirModule module,
                                 MlirStringCallback onDiagnostic,
                                 void *userData) {
  Operation *op = unwrap(module).getOperation();
  DiagnosticForwarder forward(op->getContext(), onDiagnostic, userData);
  return wrap(verify(op));
}

/// Parses `text` into `pm`: either a bare pass list run on the module or a
/// pipeline anchored on builtin.module.
static LogicalResult parsePipeline(StringRef text, PassManager &pm,
                                   llvm::raw_ostream &errors) {
  text = text.trim();
  StringRef anchored = "builtin.module(";
  if (text.starts_with(anchored) && text.ends_with(")"))
    text = text.drop_front(anchored.size()).drop_back();
  return parsePassPipeline(text, pm, errors);
}

MlirLogicalResult cpModuleRunPipeline(MlirModule module, MlirStringRef pipeline,
                                      MlirStringCallback onDiagnostic,
                                      void *userData) {
  registerPassesOnce();
  ModuleOp op = unwrap(module);
  MLIRContext *context = op.getContext();
  DiagnosticForwarder forward(context, onDiagnostic, userData);
  PassManager pm(context, ModuleOp::getOperationName());
  std::string parseErrors;
  llvm::raw_string_ostream errors(parseErrors);
  StringRef text = unwrap(pipeline);
  if (failed(parsePipeline(text, pm, errors))) {
    emitError(UnknownLoc::get(context))
        << "invalid pass pipeline '" << text
        << "': " << StringRef(parseErrors).trim();
    return mlirLogicalResultFailure();
  }
  if (failed(pm.run(op))) {
    forward.ensureExplained(context, "pass pipeline '" + text + "' failed");
    return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}

void cpModulePrint(MlirModule module, bool generic, MlirStringCallback callback,
                   void *userData) {
  detail::CallbackOstream stream(callback, userData);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  unwrap(module).getOperation()->print(stream, flags);
  stream.flush();
}
