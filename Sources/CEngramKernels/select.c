#include "dispatch.h"
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// Top-k scans reject almost every score after the first few blocks (a full heap of k keeps
// about k·ln(N/k) of N), so the scan is a compare over the scores; the few survivors go to
// the caller's heap. Comparisons are ordered (NaN never passes), like `score >= threshold`.

static size_t select_scalar(const float *scores, size_t n, float threshold, int32_t *out) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    if (scores[i] >= threshold) out[count++] = (int32_t)i;
  return count;
}

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma,popcnt,bmi")))
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,popcnt")))

// Four vectors per test, as in the AVX-512 loop: the common case is 32 rejections for one
// branch, and the compares of the next group do not wait on the previous group's branch.
AVX2 static size_t select_avx2(const float *scores, size_t n, float threshold, int32_t *out) {
  __m256 t = _mm256_set1_ps(threshold);
  size_t count = 0, i = 0;
  for (; i + 32 <= n; i += 32) {
    unsigned m0 = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(scores + i), t, _CMP_GE_OQ));
    unsigned m1 = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(scores + i + 8), t, _CMP_GE_OQ));
    unsigned m2 = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(scores + i + 16), t, _CMP_GE_OQ));
    unsigned m3 = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(scores + i + 24), t, _CMP_GE_OQ));
    unsigned mask = m0 | (m1 << 8) | (m2 << 16) | (m3 << 24);
    while (mask) {
      out[count++] = (int32_t)(i + (size_t)__builtin_ctz(mask));
      mask &= mask - 1;
    }
  }
  for (; i + 8 <= n; i += 8) {
    unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(scores + i), t, _CMP_GE_OQ));
    while (mask) {
      out[count++] = (int32_t)(i + (size_t)__builtin_ctz(mask));
      mask &= mask - 1;
    }
  }
  for (; i < n; i++)
    if (scores[i] >= threshold) out[count++] = (int32_t)i;
  return count;
}

AVX512 static size_t select_avx512(const float *scores, size_t n, float threshold, int32_t *out) {
  __m512 t = _mm512_set1_ps(threshold);
  __m512i index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i step = _mm512_set1_epi32(16);
  size_t count = 0, i = 0;
  // Four vectors per test: the common case is 64 rejections for one branch.
  for (; i + 64 <= n; i += 64) {
    __mmask16 m0 = _mm512_cmp_ps_mask(_mm512_loadu_ps(scores + i), t, _CMP_GE_OQ);
    __mmask16 m1 = _mm512_cmp_ps_mask(_mm512_loadu_ps(scores + i + 16), t, _CMP_GE_OQ);
    __mmask16 m2 = _mm512_cmp_ps_mask(_mm512_loadu_ps(scores + i + 32), t, _CMP_GE_OQ);
    __mmask16 m3 = _mm512_cmp_ps_mask(_mm512_loadu_ps(scores + i + 48), t, _CMP_GE_OQ);
    if ((m0 | m1 | m2 | m3) != 0) {
      __mmask16 masks[4] = {m0, m1, m2, m3};
      for (int part = 0; part < 4; part++) {
        __m512i at = _mm512_add_epi32(index, _mm512_set1_epi32(16 * part));
        _mm512_mask_compressstoreu_epi32(out + count, masks[part], at);
        count += (size_t)__builtin_popcount(masks[part]);
      }
    }
    index = _mm512_add_epi32(index, _mm512_set1_epi32(64));
  }
  for (; i < n; i += 16) {
    size_t rest = n - i < 16 ? n - i : 16;
    __mmask16 live = (__mmask16)((1u << rest) - 1);
    __mmask16 m = _mm512_mask_cmp_ps_mask(live, _mm512_maskz_loadu_ps(live, scores + i), t, _CMP_GE_OQ);
    _mm512_mask_compressstoreu_epi32(out + count, m, index);
    count += (size_t)__builtin_popcount(m);
    index = _mm512_add_epi32(index, step);
  }
  return count;
}
#endif

#if defined(__aarch64__)
// Sixteen scores per test (four compares, one horizontal max); the rare group with a pass is
// finished in scalar code with the same ordered comparison.
static size_t select_neon(const float *scores, size_t n, float threshold, int32_t *out) {
  float32x4_t t = vdupq_n_f32(threshold);
  size_t count = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    uint32x4_t m = vorrq_u32(vorrq_u32(vcgeq_f32(vld1q_f32(scores + i), t), vcgeq_f32(vld1q_f32(scores + i + 4), t)),
                             vorrq_u32(vcgeq_f32(vld1q_f32(scores + i + 8), t), vcgeq_f32(vld1q_f32(scores + i + 12), t)));
    if (vmaxvq_u32(m) == 0) continue;
    for (size_t j = i; j < i + 16; j++)
      if (scores[j] >= threshold) out[count++] = (int32_t)j;
  }
  for (; i < n; i++)
    if (scores[i] >= threshold) out[count++] = (int32_t)i;
  return count;
}
#endif

size_t engram_select_at_least_path(const float *scores, size_t n, float threshold, int32_t *out,
                                   int path) {
#if defined(__x86_64__)
  int level = engram_level_cached();
  if (path > level) path = level;
  if (path >= 2) return select_avx512(scores, n, threshold, out);
  if (path == 1) return select_avx2(scores, n, threshold, out);
#elif defined(__aarch64__)
  if (path > engram_level_cached()) path = engram_level_cached();
  if (path >= 1) return select_neon(scores, n, threshold, out);
#else
  (void)path;
#endif
  return select_scalar(scores, n, threshold, out);
}

size_t engram_select_at_least(const float *scores, size_t n, float threshold, int32_t *out) {
  return engram_select_at_least_path(scores, n, threshold, out, 2);
}
