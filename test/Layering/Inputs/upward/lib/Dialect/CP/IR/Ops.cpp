// The IR may not reach up into the passes or the lowerings.
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/Schemes/Passes.h"
#include "cp/Conversion/Passes.h"
