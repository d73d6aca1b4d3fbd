// Built against common/base alone, as a file of the base wing is: it reaches
// up to the send wing, and must not compile (tests/CMakeLists.txt, Layering).
#include "common/base/result.h"
#include "common/send/pacer.h"

int ReachesUp() { return 0; }
