// A header that includes a header including it back.
#include "cp/Dialect/CP/IR/B.h"
