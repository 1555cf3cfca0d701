// One tool may not include another tool's private header.
#include "../b/b.h"
