#include "dispatch.h"
#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

// Every path reduces one row with one accumulator per lane in dimension order, then a fixed
// horizontal sum, so a row's score does not depend on which loop (4-row, 1-row, gather)
// produced it: ties between equal rows stay exact and order by id.

static float dot_scalar(const float *a, const float *b, size_t dim) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t j = 0;
  for (; j + 8 <= dim; j += 8)
    for (int l = 0; l < 8; l++) lanes[l] += a[j + l] * b[j + l];
  for (int l = 0; j < dim; j++, l++) lanes[l] += a[j] * b[j];
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

AVX2 static inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

AVX2 static inline __m256i tail_mask8(size_t rest) {
  const int32_t base[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(base + 8 - rest));
}

AVX2 static float dot_avx2(const float *q, const float *r, size_t dim) {
  __m256 acc = _mm256_setzero_ps();
  size_t j = 0;
  for (; j + 8 <= dim; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(q + j), acc);
  if (j < dim) {
    __m256i m = tail_mask8(dim - j);
    acc = _mm256_fmadd_ps(_mm256_maskload_ps(r + j, m), _mm256_maskload_ps(q + j, m), acc);
  }
  return hsum256(acc);
}

AVX2 static void rows_avx2(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  size_t i = 0;
  size_t full = dim & ~(size_t)7;
  __m256i m = tail_mask8(dim - full);
  for (; i + 4 <= n; i += 4) {
    const float *r0 = rows + i * dim, *r1 = r0 + dim, *r2 = r1 + dim, *r3 = r2 + dim;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t j = 0; j < full; j += 8) {
      __m256 qv = _mm256_loadu_ps(q + j);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j), qv, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j), qv, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j), qv, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j), qv, a3);
    }
    if (full < dim) {
      __m256 qv = _mm256_maskload_ps(q + full, m);
      a0 = _mm256_fmadd_ps(_mm256_maskload_ps(r0 + full, m), qv, a0);
      a1 = _mm256_fmadd_ps(_mm256_maskload_ps(r1 + full, m), qv, a1);
      a2 = _mm256_fmadd_ps(_mm256_maskload_ps(r2 + full, m), qv, a2);
      a3 = _mm256_fmadd_ps(_mm256_maskload_ps(r3 + full, m), qv, a3);
    }
    out[i] = hsum256(a0);
    out[i + 1] = hsum256(a1);
    out[i + 2] = hsum256(a2);
    out[i + 3] = hsum256(a3);
  }
  for (; i < n; i++) out[i] = dot_avx2(q, rows + i * dim, dim);
}

AVX512 static float dot_avx512(const float *q, const float *r, size_t dim) {
  __m512 acc = _mm512_setzero_ps();
  size_t j = 0;
  for (; j + 16 <= dim; j += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(r + j), _mm512_loadu_ps(q + j), acc);
  if (j < dim) {
    __mmask16 m = (__mmask16)((1u << (dim - j)) - 1);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r + j), _mm512_maskz_loadu_ps(m, q + j), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

AVX512 static void rows_avx512(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  size_t i = 0;
  size_t full = dim & ~(size_t)15;
  __mmask16 m = (__mmask16)((1u << (dim - full)) - 1);
  for (; i + 4 <= n; i += 4) {
    const float *r0 = rows + i * dim, *r1 = r0 + dim, *r2 = r1 + dim, *r3 = r2 + dim;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t j = 0; j < full; j += 16) {
      __m512 qv = _mm512_loadu_ps(q + j);
      a0 = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + j), qv, a0);
      a1 = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + j), qv, a1);
      a2 = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + j), qv, a2);
      a3 = _mm512_fmadd_ps(_mm512_loadu_ps(r3 + j), qv, a3);
    }
    if (full < dim) {
      __m512 qv = _mm512_maskz_loadu_ps(m, q + full);
      a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r0 + full), qv, a0);
      a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r1 + full), qv, a1);
      a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r2 + full), qv, a2);
      a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r3 + full), qv, a3);
    }
    out[i] = _mm512_reduce_add_ps(a0);
    out[i + 1] = _mm512_reduce_add_ps(a1);
    out[i + 2] = _mm512_reduce_add_ps(a2);
    out[i + 3] = _mm512_reduce_add_ps(a3);
  }
  for (; i < n; i++) out[i] = dot_avx512(q, rows + i * dim, dim);
}
#endif

float engram_dot_f32(const float *a, const float *b, size_t dim) {
#if defined(__x86_64__)
  int level = engram_level_cached();
  if (level >= 2) return dot_avx512(a, b, dim);
  if (level == 1) return dot_avx2(a, b, dim);
#endif
  return dot_scalar(a, b, dim);
}

void engram_dot_f32_rows(const float *query, const float *rows, size_t dim, size_t n, float *out) {
#if defined(__x86_64__)
  int level = engram_level_cached();
  if (level >= 2) {
    rows_avx512(query, rows, dim, n, out);
    return;
  }
  if (level == 1) {
    rows_avx2(query, rows, dim, n, out);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) out[i] = dot_scalar(query, rows + i * dim, dim);
}

void engram_dot_f32_gather(const float *query, const float *base, size_t dim, const int32_t *indices,
                           size_t n, float *out) {
#if defined(__x86_64__)
  int level = engram_level_cached();
  if (level >= 2) {
    for (size_t i = 0; i < n; i++) out[i] = dot_avx512(query, base + (size_t)indices[i] * dim, dim);
    return;
  }
  if (level == 1) {
    for (size_t i = 0; i < n; i++) out[i] = dot_avx2(query, base + (size_t)indices[i] * dim, dim);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) out[i] = dot_scalar(query, base + (size_t)indices[i] * dim, dim);
}
