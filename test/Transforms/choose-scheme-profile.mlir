// cp-choose-scheme{machine=FILE}: scheme = auto costed with a machine
// profile that cp-calibrate measured (Inputs/host-p4.profile: 4 MPI ranks on
// a 2-core host), instead of a preset's built-in constants. cp.cost names
// the profile and when and on what runtime it was measured. The same op
// flips to allgather under a profile whose all-to-alls, shifts and
// exchanges are 100x slower and whose all-gathers and reduce-scatters are
// 100x faster.
//
// RUN: cp-opt %s --cp-choose-scheme="machine=%S/Inputs/host-p4.profile" | FileCheck %s --check-prefix=MEASURED
// RUN: cp-opt %s --cp-choose-scheme="machine=%S/Inputs/slow-all-to-all-p4.profile" | FileCheck %s --check-prefix=FLIPPED
// RUN: cp-opt %s --cp-choose-scheme="machine=host-mpi" | FileCheck %s --check-prefix=BUILTIN
// The pipelines and cp-apply-scheme pass their machine option through.
// RUN: cp-opt %s --cp-apply-scheme="scheme=auto machine=%S/Inputs/slow-all-to-all-p4.profile" | FileCheck %s --check-prefix=APPLIED

shard.grid @cp(shape = 4)

// MEASURED-LABEL: func.func @layer
// MEASURED: cp.attention {{.*}} scheme = [[CHOSEN:[a-z_0-9()]+]] {cp.cost = {
// MEASURED-SAME: chosen = "[[CHOSEN]]"
// MEASURED-SAME: machine = "{{.*}}cores"
// MEASURED-SAME: measured = "{{[0-9]{4}-[0-9]{2}-[0-9]{2}T.*}}, cp_runtime over MPI
// MEASURED-SAME: profile = "{{.*}}/Inputs/host-p4.profile"
// MEASURED-NOT: chosen = "allgather"

// FLIPPED-LABEL: func.func @layer
// FLIPPED: cp.attention {{.*}} scheme = allgather {cp.cost = {
// FLIPPED-SAME: chosen = "allgather"
// FLIPPED-SAME: profile = "{{.*}}/Inputs/slow-all-to-all-p4.profile"

// BUILTIN-LABEL: func.func @layer
// BUILTIN: cp.cost = {
// BUILTIN-SAME: machine = "host-mpi"
// BUILTIN-SAME: profile = "none: built-in constants"

// APPLIED-LABEL: func.func @layer
// APPLIED: cp.local_attention {{.*}} cp.scheme = #cp.scheme<allgather>
func.func @layer(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x4x4096x64xf32>,
                 %v: tensor<1x4x4096x64xf32>) -> tensor<1x8x4096x64xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = auto
      : tensor<1x8x4096x64xf32>, tensor<1x4x4096x64xf32>, tensor<1x4x4096x64xf32>
      -> tensor<1x8x4096x64xf32>
  return %o : tensor<1x8x4096x64xf32>
}
