// Built against common/send, as a file of the send wing is: every wing below
// it is in reach, so this compiles. It shows that reaches_up.cpp fails for
// its include alone, not for how the probe is built.
#include "common/base/result.h"
#include "common/net/udp_socket.h"
#include "common/send/pacer.h"
#include "common/wire/rfc4175.h"

int ReachesDown() { return 0; }
