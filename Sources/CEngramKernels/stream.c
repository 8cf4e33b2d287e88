#include "dispatch.h"
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// A plain sequential read at the widest loads of the dispatch level: what a scan of `bytes`
// costs with no arithmetic, the floor the benchmarks compare the scans with.

#if defined(__x86_64__)
__attribute__((target("avx2"))) static uint64_t read_avx2(const uint8_t *p, size_t bytes) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    a = _mm256_add_epi64(a, _mm256_loadu_si256((const __m256i *)(p + i)));
    b = _mm256_add_epi64(b, _mm256_loadu_si256((const __m256i *)(p + i + 32)));
    c = _mm256_add_epi64(c, _mm256_loadu_si256((const __m256i *)(p + i + 64)));
    d = _mm256_add_epi64(d, _mm256_loadu_si256((const __m256i *)(p + i + 96)));
  }
  __m256i s = _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d));
  uint64_t lanes[4];
  _mm256_storeu_si256((__m256i *)lanes, s);
  uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < bytes; i++) sum += p[i];
  return sum;
}

__attribute__((target("avx512f"))) static uint64_t read_avx512(const uint8_t *p, size_t bytes) {
  __m512i a = _mm512_setzero_si512(), b = a;
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    a = _mm512_add_epi64(a, _mm512_loadu_si512(p + i));
    b = _mm512_add_epi64(b, _mm512_loadu_si512(p + i + 64));
  }
  uint64_t sum = (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(a, b));
  for (; i < bytes; i++) sum += p[i];
  return sum;
}
#elif defined(__aarch64__)
static uint64_t read_neon(const uint8_t *p, size_t bytes) {
  uint64x2_t a = vdupq_n_u64(0), b = a, c = a, d = a;
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    a = vaddq_u64(a, vreinterpretq_u64_u8(vld1q_u8(p + i)));
    b = vaddq_u64(b, vreinterpretq_u64_u8(vld1q_u8(p + i + 16)));
    c = vaddq_u64(c, vreinterpretq_u64_u8(vld1q_u8(p + i + 32)));
    d = vaddq_u64(d, vreinterpretq_u64_u8(vld1q_u8(p + i + 48)));
  }
  uint64_t sum = vaddvq_u64(vaddq_u64(vaddq_u64(a, b), vaddq_u64(c, d)));
  for (; i < bytes; i++) sum += p[i];
  return sum;
}
#endif

uint64_t engram_read_bytes(const void *data, size_t bytes) {
  const uint8_t *p = (const uint8_t *)data;
#if defined(__x86_64__)
  int level = engram_level_cached();
  if (level >= 2) return read_avx512(p, bytes);
  if (level == 1) return read_avx2(p, bytes);
#elif defined(__aarch64__)
  if (engram_level_cached() >= 1) return read_neon(p, bytes);
#endif
  uint64_t lanes[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int l = 0; l < 4; l++) {
      uint64_t w;
      __builtin_memcpy(&w, p + i + 8 * l, 8);
      lanes[l] += w;
    }
  uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < bytes; i++) sum += p[i];
  return sum;
}
