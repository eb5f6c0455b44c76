// The header's inline function is all there is; a C target needs one source file.
#include "CPrefetch.h"
