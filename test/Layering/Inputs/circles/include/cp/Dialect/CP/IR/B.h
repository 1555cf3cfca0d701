#include "cp/Dialect/CP/IR/A.h"
