#ifndef ENGRAM_DISPATCH_H
#define ENGRAM_DISPATCH_H
#include "engram_kernels.h"

// Cached CPU level (+1 so 0 means "not probed yet"); relaxed atomics keep the race benign
// and visible to the thread sanitizer as such.
static inline int engram_level_cached(void) {
  static int cached = 0;
  int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (value == 0) {
    value = engram_cpu_level() + 1;
    __atomic_store_n(&cached, value, __ATOMIC_RELAXED);
  }
  return value - 1;
}

static inline int engram_vnni_cached(void) {
  static int cached = 0;
  int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (value == 0) {
    value = engram_cpu_has_avx512_vnni() + 1;
    __atomic_store_n(&cached, value, __ATOMIC_RELAXED);
  }
  return value - 1;
}
#endif
