// The runtime never uses MLIR.
#include "cp/Runtime/cp_runtime.h"
#include "mlir/IR/Builders.h"
