#include "engram_kernels.h"
#include <stdlib.h>
#include <string.h>

// The widest level the hardware supports, before ENGRAM_CPU_LEVEL lowers it.
static int hardware_level(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    return ENGRAM_LEVEL_AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return ENGRAM_LEVEL_AVX2;
  return ENGRAM_LEVEL_SCALAR;
#elif defined(__aarch64__)
  return ENGRAM_LEVEL_NEON;  // Advanced SIMD is part of the AArch64 base architecture.
#else
  return ENGRAM_LEVEL_SCALAR;
#endif
}

int engram_cpu_level_named(const char *name) {
  if (name == NULL) return -1;
  if (strcmp(name, "scalar") == 0) return ENGRAM_LEVEL_SCALAR;
#if defined(__aarch64__)
  if (strcmp(name, "neon") == 0) return ENGRAM_LEVEL_NEON;
#else
  if (strcmp(name, "avx2") == 0) return ENGRAM_LEVEL_AVX2;
  if (strcmp(name, "avx512") == 0) return ENGRAM_LEVEL_AVX512;
#endif
  return -1;
}

const char *engram_cpu_level_name(int level) {
  switch (level) {
  case ENGRAM_LEVEL_SCALAR: return "scalar";
#if defined(__aarch64__)
  case ENGRAM_LEVEL_NEON: return "neon";
#else
  case ENGRAM_LEVEL_AVX2: return "avx2";
#endif
  case ENGRAM_LEVEL_AVX512: return "avx512";
  default: return "unknown";
  }
}

int engram_cpu_level(void) {
  int level = hardware_level();
  const char *forced = getenv("ENGRAM_CPU_LEVEL");
  if (forced != NULL && forced[0] != '\0') {
    int wanted = engram_cpu_level_named(forced);
    // Only lowers: a level the CPU lacks, an unknown name or one of the other architecture
    // leaves the hardware level (engram-bench refuses to run when they differ).
    if (wanted >= 0 && wanted < level) level = wanted;
  }
  return level;
}

int engram_cpu_has_avx512_vnni(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return engram_cpu_level() >= ENGRAM_LEVEL_AVX512 && __builtin_cpu_supports("avx512vnni");
#else
  return 0;
#endif
}
