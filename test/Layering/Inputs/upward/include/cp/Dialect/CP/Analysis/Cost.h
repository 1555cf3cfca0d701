// An analysis may not use a transform.
#include "cp/Dialect/CP/Schemes/Passes.h"
