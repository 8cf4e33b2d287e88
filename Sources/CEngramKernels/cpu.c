#include "engram_kernels.h"

int engram_cpu_level(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    return 2;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return 1;
#endif
  return 0;
}

int engram_cpu_has_avx512_vnni(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return engram_cpu_level() >= 2 && __builtin_cpu_supports("avx512vnni");
#else
  return 0;
#endif
}
