//===- MachineModel.h - what the cost model knows of a machine --*- C++ -*-===//
//
// The machine descriptions scheme = auto is costed on: the presets, the
// `cp.machine` dictionaries that override them, and the machine of an op
// (its ancestors' dictionaries, outermost first).
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_ANALYSIS_MACHINEMODEL_H
#define CP_DIALECT_CP_ANALYSIS_MACHINEMODEL_H

#include "cp/Dialect/CP/Analysis/MachineProfile.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir {
namespace cp {

/// What the cost model knows of a machine. Bandwidths are what one rank
/// can send per second; a collective over ranks of more than one node runs
/// at the inter-node bandwidth.
struct MachineModel {
  std::string name;
  double intraNodeBandwidth; // bytes/s
  double interNodeBandwidth; // bytes/s
  double latency;            // s per collective step (message)
  int64_t ranksPerNode;      // consecutive ranks share a node
  double attentionFlops;     // flop/s the attention kernel sustains
  double memoryBandwidth;    // bytes/s of device memory (merge passes)
  double memory;             // bytes of device memory per rank
  double launchOverhead;     // s per kernel launch
  double overlap;            // fraction of a ring step's compute that hides
                             // its shift (1: NCCL on a second stream; 0:
                             // MPI without asynchronous progress)
  /// Measured figures (cp-calibrate), when the machine is a profile: they
  /// replace the constants above in the time model (SchemeCost.cpp); the
  /// constants still give memory and the fields a cp.machine overrides.
  std::shared_ptr<const MachineProfile> profile;

  /// "h200-nvlink" (8 ranks on one NVLink node), "multinode-ib" (nodes of
  /// 8 ranks over 400 Gb/s InfiniBand) or "host-mpi" (MPI ranks on one
  /// host); std::nullopt for another name.
  static std::optional<MachineModel> preset(StringRef name);
  static StringRef presetNames() {
    return "h200-nvlink, multinode-ib, host-mpi";
  }
  /// The machine `profile` describes: its memory and memory bandwidth,
  /// with host-mpi's constants for what it does not measure.
  static MachineModel fromProfile(MachineProfile profile);

  /// Overrides fields from a `cp.machine` dictionary: `preset` (a preset
  /// name, applied first), `intra_node_bandwidth`, `inter_node_bandwidth`,
  /// `latency`, `ranks_per_node`, `attention_flops`, `memory_bandwidth`,
  /// `memory`, `launch_overhead`, `overlap` (numbers; integers or floats).
  /// Fails with a diagnostic naming an unknown key or a bad value.
  LogicalResult apply(DictionaryAttr description,
                      function_ref<InFlightDiagnostic()> emitError);
};

/// The machine an op is costed on: `base`, then the `cp.machine`
/// dictionaries of the op's ancestors (outermost first) and of the op
/// itself. Fails with a diagnostic on a bad entry.
FailureOr<MachineModel> machineFor(Operation *op, MachineModel base);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_ANALYSIS_MACHINEMODEL_H
