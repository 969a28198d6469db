// The heap in use, for the benchmarks' memory probes (glibc's malloc.h is not in Swift's Glibc module).
#pragma once
#include <stddef.h>

/// Bytes allocated with malloc and not freed (glibc: mallinfo2's uordblks + hblkhd); 0 where unknown.
size_t vortex_heap_in_use(void);
