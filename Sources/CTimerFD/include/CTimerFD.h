#ifndef C_TIMER_FD_H
#define C_TIMER_FD_H

// Linux's timerfd for WebSocketNIO: a kernel timer per link that can be re-armed later without a wake-up.
#if defined(__linux__)
#include <sys/timerfd.h>
#endif

#endif
