// A scheme may not use raising (nor the buffer passes that run after it).
#include "cp/Dialect/CP/Analysis/SchemeCost.h"
#include "cp/Raising/Passes.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
