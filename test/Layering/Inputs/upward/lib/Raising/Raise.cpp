// Raising may not use a scheme: it produces cp.attention, schemes consume it.
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
