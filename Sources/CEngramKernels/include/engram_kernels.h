#ifndef ENGRAM_KERNELS_H
#define ENGRAM_KERNELS_H
#include <stddef.h>
#include <stdint.h>

/// The widest SIMD level this CPU supports: 0 portable, 1 AVX2+FMA, 2 AVX-512 (F+BW+VL).
int engram_cpu_level(void);

#endif
