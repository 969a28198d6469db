// SwiftPM needs one source file in a C target; the module is its header.
#include "CTimerFD.h"
