#include "dispatch.h"
#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// Every path of a level reduces a row with the same fixed accumulators in dimension order,
// then a fixed horizontal sum, so a row's score does not depend on which loop (1-row, gather,
// single) produced it: ties between equal rows stay exact and order by id.

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

// Two accumulators (even and odd blocks of 8, added before the horizontal sum): one would
// chain every FMA of a row (48 at 384 components, 4-5 cycles each, about as long as reading
// the row's 1536 bytes at the bandwidth floor), so the scan waited on the chain rather than
// on memory. AVX-512 chains 24 per row and keeps one.
AVX2 static float dot_avx2(const float *q, const float *r, size_t dim) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  size_t j = 0;
  for (; j + 16 <= dim; j += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(q + j), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 8), _mm256_loadu_ps(q + j + 8), acc1);
  }
  if (j + 8 <= dim) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(q + j), acc0);
    j += 8;
  }
  if (j < dim) {
    __m256i m = tail_mask8(dim - j);
    acc1 = _mm256_fmadd_ps(_mm256_maskload_ps(r + j, m), _mm256_maskload_ps(q + j, m), acc1);
  }
  return hsum256(_mm256_add_ps(acc0, acc1));
}

// Long scans are limited by memory. One row at a time reads the rows as a single
// sequential stream, which the hardware prefetcher follows at full speed: measured on an AMD
// EPYC (100k x 384, one thread, scan and select), this loop ran at 1.01-1.09x the time of a
// plain read of the same bytes, where four rows at a time (four streams, sharing the query's
// loads) ran at 2.2x, and at 1.2x with software prefetch. It also makes every loop of a level
// the same instruction sequence per row (rows, gather and single dot products).
AVX2 static void rows_avx2(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) out[i] = dot_avx2(q, rows + i * dim, dim);
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

// One row at a time, for the reason given above rows_avx2 (measured: 1.03-1.13x a plain read,
// against 1.25-1.46x for four rows with software prefetch and 2.5x without).
AVX512 static void rows_avx512(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) out[i] = dot_avx512(q, rows + i * dim, dim);
}
#endif

#if defined(__aarch64__)
// NEON: two 4-lane accumulators (8 lanes, like the scalar path), a 4-wide step when 4 to 7
// remain, then fused scalar steps.

static float dot_neon(const float *q, const float *r, size_t dim) {
  float32x4_t a0 = vdupq_n_f32(0), a1 = a0;
  size_t j = 0;
  for (; j + 8 <= dim; j += 8) {
    a0 = vfmaq_f32(a0, vld1q_f32(r + j), vld1q_f32(q + j));
    a1 = vfmaq_f32(a1, vld1q_f32(r + j + 4), vld1q_f32(q + j + 4));
  }
  if (j + 4 <= dim) {
    a0 = vfmaq_f32(a0, vld1q_f32(r + j), vld1q_f32(q + j));
    j += 4;
  }
  float sum = vaddvq_f32(vaddq_f32(a0, a1));
  for (; j < dim; j++) sum = fmaf(r[j], q[j], sum);
  return sum;
}

// One row at a time, a single sequential stream (see rows_avx2).
static void rows_neon(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) out[i] = dot_neon(q, rows + i * dim, dim);
}
#endif

// The level a kernel runs at when `path` is asked for: never above what the CPU has.
static inline int clamp_path(int path) {
  int level = engram_level_cached();
  return path < level ? (path < 0 ? 0 : path) : level;
}

float engram_dot_f32(const float *a, const float *b, size_t dim) {
#if defined(__x86_64__)
  int level = engram_level_cached();
  if (level >= 2) return dot_avx512(a, b, dim);
  if (level == 1) return dot_avx2(a, b, dim);
#elif defined(__aarch64__)
  if (engram_level_cached() >= 1) return dot_neon(a, b, dim);
#endif
  return dot_scalar(a, b, dim);
}

void engram_dot_f32_rows_path(const float *query, const float *rows, size_t dim, size_t n, float *out,
                              int path) {
  path = clamp_path(path);
#if defined(__x86_64__)
  if (path >= 2) {
    rows_avx512(query, rows, dim, n, out);
    return;
  }
  if (path == 1) {
    rows_avx2(query, rows, dim, n, out);
    return;
  }
#elif defined(__aarch64__)
  if (path >= 1) {
    rows_neon(query, rows, dim, n, out);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) out[i] = dot_scalar(query, rows + i * dim, dim);
}

void engram_dot_f32_rows(const float *query, const float *rows, size_t dim, size_t n, float *out) {
  engram_dot_f32_rows_path(query, rows, dim, n, out, ENGRAM_LEVEL_AVX512);
}

// Gathered rows are scattered (an int8 search's candidates, a filter's rows): the hardware
// prefetcher cannot foresee the next one, so its lines are requested while this row is
// scored. Measured on an AMD EPYC (100 random rows of 100k x 384 from memory): 25 us against
// 35 without; two or more rows ahead did no better.
static inline void prefetch_row(const float *base, const int32_t *indices, size_t i, size_t n, size_t dim) {
  if (i >= n) return;
  const char *p = (const char *)(base + (size_t)indices[i] * dim);
  for (size_t b = 0; b < dim * sizeof(float); b += 64) __builtin_prefetch(p + b);
}

void engram_dot_f32_gather_path(const float *query, const float *base, size_t dim,
                                const int32_t *indices, size_t n, float *out, int path) {
  path = clamp_path(path);
  prefetch_row(base, indices, 0, n, dim);
#if defined(__x86_64__)
  if (path >= 2) {
    for (size_t i = 0; i < n; i++) {
      prefetch_row(base, indices, i + 1, n, dim);
      out[i] = dot_avx512(query, base + (size_t)indices[i] * dim, dim);
    }
    return;
  }
  if (path == 1) {
    for (size_t i = 0; i < n; i++) {
      prefetch_row(base, indices, i + 1, n, dim);
      out[i] = dot_avx2(query, base + (size_t)indices[i] * dim, dim);
    }
    return;
  }
#elif defined(__aarch64__)
  if (path >= 1) {
    for (size_t i = 0; i < n; i++) {
      prefetch_row(base, indices, i + 1, n, dim);
      out[i] = dot_neon(query, base + (size_t)indices[i] * dim, dim);
    }
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) {
    prefetch_row(base, indices, i + 1, n, dim);
    out[i] = dot_scalar(query, base + (size_t)indices[i] * dim, dim);
  }
}

void engram_dot_f32_gather(const float *query, const float *base, size_t dim, const int32_t *indices,
                           size_t n, float *out) {
  engram_dot_f32_gather_path(query, base, dim, indices, n, out, ENGRAM_LEVEL_AVX512);
}
