//===- MachineModel.cpp - the machines scheme = auto is costed on ---------===//
//
// The presets, `cp.machine` dictionaries applied over them, and the machine
// of an op. docs/Schemes.md lists the presets' numbers and where they come
// from.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/MachineModel.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::cp;

//===----------------------------------------------------------------------===//
// Machines
//===----------------------------------------------------------------------===//

std::optional<MachineModel> MachineModel::preset(StringRef name) {
  // NVLink 4: 450 GB/s per direction per H200, of which NCCL reaches ~80%;
  // flash attention forward sustains about half of the 989 TFLOP/s bf16
  // peak; HBM3e 4.8 TB/s.
  MachineModel nvlink{"h200-nvlink", 3.6e11, 3.6e11, 10e-6, 8,
                      5.0e14,        4.8e12, 141e9,  5e-6,  1.0};
  if (name == "h200-nvlink")
    return nvlink;
  if (name == "multinode-ib") {
    // Nodes of 8 H200 on NVLink, one 400 Gb/s NDR port per GPU across nodes.
    MachineModel ib = nvlink;
    ib.name = "multinode-ib";
    ib.interNodeBandwidth = 4.0e10;
    ib.latency = 25e-6;
    return ib;
  }
  if (name == "host-mpi")
    // MPI ranks sharing one host's memory and cores (this project's CPU
    // tests); bench/ measures the real figures and passes them in. MPICH
    // moves a large nonblocking message only inside MPI calls, so a shift
    // does not progress while the attention computes.
    return MachineModel{"host-mpi", 5e9,  5e9, 5e-6, 1 << 20,
                        2e10,       1e10, 8e9, 1e-6, 0.0};
  return std::nullopt;
}

MachineModel MachineModel::fromProfile(MachineProfile profile) {
  MachineModel m = *preset("host-mpi");
  m.name = profile.machine;
  m.ranksPerNode = profile.ranksPerNode;
  m.memory = profile.memory;
  m.memoryBandwidth = profile.memoryBandwidth;
  m.overlap = profile.overlap;
  m.profile = std::make_shared<const MachineProfile>(std::move(profile));
  return m;
}

namespace {
/// The numeric cp.machine entries and the fields they set.
struct MachineEntry {
  StringRef key;
  void (*set)(MachineModel &, double);
};
constexpr MachineEntry kMachineEntries[] = {
    {"intra_node_bandwidth",
     [](MachineModel &m, double v) { m.intraNodeBandwidth = v; }},
    {"inter_node_bandwidth",
     [](MachineModel &m, double v) { m.interNodeBandwidth = v; }},
    {"latency", [](MachineModel &m, double v) { m.latency = v; }},
    {"ranks_per_node",
     [](MachineModel &m, double v) {
       m.ranksPerNode = static_cast<int64_t>(v);
     }},
    {"attention_flops",
     [](MachineModel &m, double v) { m.attentionFlops = v; }},
    {"memory_bandwidth",
     [](MachineModel &m, double v) { m.memoryBandwidth = v; }},
    {"memory", [](MachineModel &m, double v) { m.memory = v; }},
    {"launch_overhead",
     [](MachineModel &m, double v) { m.launchOverhead = v; }},
    {"overlap", [](MachineModel &m, double v) { m.overlap = v; }},
};
} // namespace

LogicalResult
MachineModel::apply(DictionaryAttr description,
                    function_ref<InFlightDiagnostic()> emitError) {
  if (auto preset = description.getAs<StringAttr>("preset")) {
    std::optional<MachineModel> base = MachineModel::preset(preset.getValue());
    if (!base)
      return emitError() << "cp.machine preset '" << preset.getValue()
                         << "' is unknown; expected one of " << presetNames();
    *this = *base;
  } else if (description.get("preset")) {
    return emitError() << "cp.machine preset must be a string";
  }
  for (NamedAttribute entry : description) {
    StringRef key = entry.getName().getValue();
    if (key == "preset")
      continue;
    double value;
    if (auto f = dyn_cast<FloatAttr>(entry.getValue()))
      value = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(entry.getValue()))
      value = static_cast<double>(i.getValue().getSExtValue());
    else
      return emitError() << "cp.machine entry '" << key
                         << "' must be a number, got " << entry.getValue();
    if (key == "overlap" ? !(value >= 0 && value <= 1) : !(value > 0))
      return emitError() << "cp.machine entry '" << key << "' must be "
                         << (key == "overlap" ? "between 0 and 1" : "positive")
                         << ", got " << value;
    const MachineEntry *field = llvm::find_if(
        kMachineEntries, [&](const MachineEntry &e) { return e.key == key; });
    if (field == std::end(kMachineEntries)) {
      InFlightDiagnostic diag = emitError();
      diag << "cp.machine has no entry '" << key << "'; known: preset";
      for (const MachineEntry &e : kMachineEntries)
        diag << ", " << e.key;
      return diag;
    }
    field->set(*this, value);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The machine of an op
//===----------------------------------------------------------------------===//

FailureOr<MachineModel> mlir::cp::machineFor(Operation *op,
                                             MachineModel machine) {
  SmallVector<Operation *> scopes;
  for (Operation *scope = op; scope; scope = scope->getParentOp())
    scopes.push_back(scope);
  for (Operation *scope : llvm::reverse(scopes)) {
    Attribute attr = scope->getAttr("cp.machine");
    if (!attr)
      continue;
    auto description = dyn_cast<DictionaryAttr>(attr);
    if (!description)
      return scope->emitOpError("has a cp.machine that is not a dictionary: ")
             << attr;
    if (failed(
            machine.apply(description, [&] { return scope->emitOpError(); })))
      return failure();
  }
  return machine;
}
