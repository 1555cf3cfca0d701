//===- CPMLIRModule.cpp - cp_mlir._cp_mlir, the Python extension ----------===//
//
// pybind11 bindings over the cp C API (include/cp-c) and the upstream MLIR
// C API: contexts, modules, cp attributes, pipelines, the attention-layer
// builder and function signatures. Only C headers are used: the extension
// never sees MLIR's C++ ABI. Failures raise cp_mlir.MLIRError carrying
// every diagnostic MLIR produced.
//
//===----------------------------------------------------------------------===//

#include "cp-c/AttentionLayer.h"
#include "cp-c/Dialect.h"
#include "cp-c/Driver.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// A failure with the diagnostics that explain it; translated into
/// cp_mlir.MLIRError(message, diagnostics).
struct DiagnosticError {
  std::string message;
  std::vector<std::string> diagnostics;
};

std::string toString(MlirStringRef ref) {
  return std::string(ref.data, ref.length);
}
MlirStringRef toRef(const std::string &s) {
  return mlirStringRefCreate(s.data(), s.size());
}
void appendDiagnostic(MlirStringRef text, void *userData) {
  static_cast<std::vector<std::string> *>(userData)->push_back(toString(text));
}
void appendChunk(MlirStringRef text, void *userData) {
  static_cast<std::string *>(userData)->append(text.data, text.length);
}

[[noreturn]] void fail(const std::string &what,
                       std::vector<std::string> diagnostics) {
  std::string message = what;
  for (const std::string &d : diagnostics)
    message += "\n" + d;
  throw DiagnosticError{message, std::move(diagnostics)};
}

/// Collects the context's diagnostics while alive (for upstream C API calls
/// that report through the context rather than a callback).
class ContextDiagnostics {
public:
  explicit ContextDiagnostics(MlirContext ctx) : ctx(ctx) {
    id = mlirContextAttachDiagnosticHandler(ctx, handle, &diagnostics, nullptr);
  }
  ~ContextDiagnostics() { mlirContextDetachDiagnosticHandler(ctx, id); }
  std::vector<std::string> diagnostics;

private:
  static MlirLogicalResult handle(MlirDiagnostic diag, void *userData) {
    std::string text;
    mlirDiagnosticPrint(diag, appendChunk, &text);
    static_cast<std::vector<std::string> *>(userData)->push_back(text);
    return mlirLogicalResultSuccess();
  }
  MlirContext ctx;
  MlirDiagnosticHandlerID id;
};

class ContextHandle {
public:
  ContextHandle() : ctx(cpContextCreate()) {}
  ~ContextHandle() { mlirContextDestroy(ctx); }
  ContextHandle(const ContextHandle &) = delete;
  ContextHandle &operator=(const ContextHandle &) = delete;
  MlirContext get() const { return ctx; }

private:
  MlirContext ctx;
};

class ModuleHandle {
public:
  ModuleHandle(std::shared_ptr<ContextHandle> context, MlirModule module)
      : context(std::move(context)), module(module) {}
  ~ModuleHandle() {
    if (!mlirModuleIsNull(module))
      mlirModuleDestroy(module);
  }
  ModuleHandle(const ModuleHandle &) = delete;
  ModuleHandle &operator=(const ModuleHandle &) = delete;

  std::string print(bool generic) const {
    std::string text;
    cpModulePrint(module, generic, appendChunk, &text);
    return text;
  }
  void verify() const {
    std::vector<std::string> diagnostics;
    if (mlirLogicalResultIsFailure(
            cpModuleVerify(module, appendDiagnostic, &diagnostics)))
      fail("cp_mlir: the module does not verify", std::move(diagnostics));
  }
  void runPipeline(const std::string &pipeline) {
    std::vector<std::string> diagnostics;
    if (mlirLogicalResultIsFailure(cpModuleRunPipeline(
            module, toRef(pipeline), appendDiagnostic, &diagnostics)))
      fail("cp_mlir: pipeline '" + pipeline + "' failed",
           std::move(diagnostics));
  }
  std::shared_ptr<ModuleHandle> clone() const {
    MlirOperation copy = mlirOperationClone(mlirModuleGetOperation(module));
    return std::make_shared<ModuleHandle>(context,
                                          mlirModuleFromOperation(copy));
  }

  /// [(shape, element type name)] of the arguments and results of the
  /// func.func named `name`.
  py::tuple signature(const std::string &name) const;

  std::shared_ptr<ContextHandle> context;
  MlirModule module;
};

py::list describeTypes(MlirType function, bool inputs) {
  py::list out;
  intptr_t n = inputs ? mlirFunctionTypeGetNumInputs(function)
                      : mlirFunctionTypeGetNumResults(function);
  for (intptr_t i = 0; i < n; ++i) {
    MlirType t = inputs ? mlirFunctionTypeGetInput(function, i)
                        : mlirFunctionTypeGetResult(function, i);
    std::string element;
    py::list shape;
    if (mlirTypeIsAShaped(t) && mlirShapedTypeHasRank(t)) {
      for (intptr_t d = 0; d < mlirShapedTypeGetRank(t); ++d)
        shape.append(mlirShapedTypeGetDimSize(t, d));
      mlirTypePrint(mlirShapedTypeGetElementType(t), appendChunk, &element);
    } else {
      mlirTypePrint(t, appendChunk, &element);
    }
    out.append(py::make_tuple(py::tuple(shape), element));
  }
  return out;
}

py::tuple ModuleHandle::signature(const std::string &name) const {
  MlirBlock body = mlirModuleGetBody(module);
  for (MlirOperation op = mlirBlockGetFirstOperation(body);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirIdentifier opName = mlirOperationGetName(op);
    if (toString(mlirIdentifierStr(opName)) != "func.func")
      continue;
    MlirAttribute sym = mlirOperationGetAttributeByName(
        op, mlirStringRefCreateFromCString("sym_name"));
    if (mlirAttributeIsNull(sym) ||
        toString(mlirStringAttrGetValue(sym)) != name)
      continue;
    MlirAttribute type = mlirOperationGetAttributeByName(
        op, mlirStringRefCreateFromCString("function_type"));
    MlirType function = mlirTypeAttrGetValue(type);
    return py::make_tuple(describeTypes(function, true),
                          describeTypes(function, false));
  }
  throw py::key_error("cp_mlir: no func.func @" + name + " in the module");
}

class AttributeHandle {
public:
  AttributeHandle(std::shared_ptr<ContextHandle> context, MlirAttribute attr)
      : context(std::move(context)), attr(attr) {}
  std::string str() const {
    std::string text;
    mlirAttributePrint(attr, appendChunk, &text);
    return text;
  }
  std::shared_ptr<ContextHandle> context;
  MlirAttribute attr;
};

const char *kSchemeNames[] = {"allgather", "ulysses", "hybrid", "head_tail",
                              "ring",      "zigzag",  "auto"};
const char *kMaskNames[] = {"none", "causal", "sliding_window"};

template <size_t N>
int kindIndex(const char *(&names)[N], const std::string &kind,
              const char *what) {
  for (size_t i = 0; i < N; ++i)
    if (kind == names[i])
      return static_cast<int>(i);
  std::string known;
  for (size_t i = 0; i < N; ++i)
    known += (i ? ", " : "") + std::string(names[i]);
  throw py::value_error("cp_mlir: unknown " + std::string(what) + " '" + kind +
                        "'; expected one of " + known);
}

AttributeHandle makeScheme(std::shared_ptr<ContextHandle> ctx,
                           const std::string &kind, int64_t u) {
  int index = kindIndex(kSchemeNames, kind, "scheme");
  ContextDiagnostics diagnostics(ctx->get());
  MlirAttribute attr =
      cpSchemeAttrGet(ctx->get(), static_cast<CpSchemeKind>(index), u);
  if (mlirAttributeIsNull(attr))
    fail("cp_mlir: invalid scheme", diagnostics.diagnostics);
  return AttributeHandle(ctx, attr);
}

AttributeHandle makeMask(std::shared_ptr<ContextHandle> ctx,
                         const std::string &kind, int64_t window) {
  int index = kindIndex(kMaskNames, kind, "mask");
  ContextDiagnostics diagnostics(ctx->get());
  MlirAttribute attr =
      cpMaskAttrGet(ctx->get(), static_cast<CpMaskKind>(index), window);
  if (mlirAttributeIsNull(attr))
    fail("cp_mlir: invalid mask", diagnostics.diagnostics);
  return AttributeHandle(ctx, attr);
}

MlirType elementType(MlirContext ctx, const std::string &name) {
  if (name == "f32")
    return mlirF32TypeGet(ctx);
  if (name == "f16")
    return mlirF16TypeGet(ctx);
  if (name == "bf16")
    return mlirBF16TypeGet(ctx);
  throw py::value_error(
      "cp_mlir: element type must be f32, f16 or bf16, got '" + name + "'");
}

std::shared_ptr<ModuleHandle>
buildLayer(std::shared_ptr<ContextHandle> ctx, int64_t batch, int64_t heads,
           int64_t kvHeads, int64_t seqLen, int64_t headDim, int64_t valueDim,
           int64_t groupSize, const std::string &dtype,
           std::optional<AttributeHandle> mask,
           std::optional<AttributeHandle> scheme,
           const std::string &explicitMask, const std::string &layout,
           const std::string &funcName, const std::string &gridName,
           bool training) {
  CpAttentionLayerSpec spec = cpAttentionLayerSpecGetDefault(ctx->get());
  spec.batch = batch;
  spec.heads = heads;
  spec.kvHeads = kvHeads;
  spec.seqLen = seqLen;
  spec.headDim = headDim;
  spec.valueDim = valueDim;
  spec.groupSize = groupSize;
  spec.elementType = elementType(ctx->get(), dtype);
  if (mask)
    spec.mask = mask->attr;
  if (scheme)
    spec.scheme = scheme->attr;
  if (explicitMask == "none")
    spec.explicitMask = CpExplicitMaskNone;
  else if (explicitMask == "bool")
    spec.explicitMask = CpExplicitMaskBool;
  else if (explicitMask == "bias")
    spec.explicitMask = CpExplicitMaskBias;
  else
    throw py::value_error(
        "cp_mlir: explicit_mask must be 'none', 'bool' or 'bias', got '" +
        explicitMask + "'");
  if (layout == "contiguous")
    spec.layout = CpSequenceContiguous;
  else if (layout == "zigzag")
    spec.layout = CpSequenceZigzag;
  else
    throw py::value_error(
        "cp_mlir: layout must be 'contiguous' or 'zigzag', got '" + layout +
        "'");
  spec.funcName = toRef(funcName);
  spec.gridName = toRef(gridName);
  spec.training = training;
  std::vector<std::string> diagnostics;
  MlirModule module =
      cpAttentionLayerBuild(ctx->get(), &spec, appendDiagnostic, &diagnostics);
  if (mlirModuleIsNull(module))
    fail("cp_mlir: cannot build the attention layer", std::move(diagnostics));
  return std::make_shared<ModuleHandle>(ctx, module);
}

std::shared_ptr<ModuleHandle> parse(std::shared_ptr<ContextHandle> ctx,
                                    const std::string &source,
                                    const std::string &name) {
  std::vector<std::string> diagnostics;
  MlirModule module = cpModuleParse(ctx->get(), toRef(source), toRef(name),
                                    appendDiagnostic, &diagnostics);
  if (mlirModuleIsNull(module))
    fail("cp_mlir: cannot parse " + name, std::move(diagnostics));
  return std::make_shared<ModuleHandle>(ctx, module);
}

} // namespace

PYBIND11_MODULE(_cp_mlir, m) {
  m.doc() = "cp-mlir C API bindings (use the cp_mlir package, not this)";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const DiagnosticError &e) {
      py::object cls = py::module_::import("cp_mlir._errors").attr("MLIRError");
      py::object error = cls(e.message, e.diagnostics);
      PyErr_SetObject(cls.ptr(), error.ptr());
    }
  });

  py::class_<ContextHandle, std::shared_ptr<ContextHandle>>(m, "Context")
      .def(py::init<>())
      .def("parse", &parse, py::arg("source"), py::arg("name") = "<input>")
      .def("scheme", &makeScheme, py::arg("kind"), py::arg("u") = 0)
      .def("mask", &makeMask, py::arg("kind"), py::arg("window") = 0)
      .def("attention_layer", &buildLayer, py::arg("B"), py::arg("H"),
           py::arg("Hkv"), py::arg("S"), py::arg("D"), py::arg("Dv"),
           py::arg("P"), py::arg("dtype"), py::arg("mask"), py::arg("scheme"),
           py::arg("explicit_mask"), py::arg("layout"), py::arg("func_name"),
           py::arg("grid_name"), py::arg("training") = false);

  py::class_<ModuleHandle, std::shared_ptr<ModuleHandle>>(m, "Module")
      .def("print", &ModuleHandle::print, py::arg("generic") = false)
      .def("__str__",
           [](const ModuleHandle &self) { return self.print(false); })
      .def("verify", &ModuleHandle::verify)
      .def("run_pipeline", &ModuleHandle::runPipeline, py::arg("pipeline"))
      .def("clone", &ModuleHandle::clone)
      .def("signature", &ModuleHandle::signature, py::arg("name"))
      .def_property_readonly(
          "context", [](const ModuleHandle &self) { return self.context; });

  py::class_<AttributeHandle>(m, "Attribute")
      .def("__str__", &AttributeHandle::str)
      .def("__repr__", &AttributeHandle::str)
      .def_property_readonly(
          "kind",
          [](const AttributeHandle &a) -> std::string {
            if (cpAttributeIsAScheme(a.attr))
              return kSchemeNames[cpSchemeAttrGetKind(a.attr)];
            return kMaskNames[cpMaskAttrGetKind(a.attr)];
          })
      .def_property_readonly("parameter", [](const AttributeHandle &a) {
        return cpAttributeIsAScheme(a.attr)
                   ? cpSchemeAttrGetUlyssesDegree(a.attr)
                   : cpMaskAttrGetWindow(a.attr);
      });
}
