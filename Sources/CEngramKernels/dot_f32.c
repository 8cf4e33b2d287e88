#include "dispatch.h"
#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
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

// Long scans are limited by memory, and the hardware prefetcher alone leaves the four row
// streams of a block waiting on DRAM: measured on an AMD EPYC (100k x 384, one thread), the
// block loop ran at 2.2x the time of a plain read of the same bytes, and at 1.1x with every
// line of the block PREFETCH_BLOCKS ahead requested while this block is scored. Each step
// of 16 floats per row covers 4 of the block's 16 * dim / 64 lines, so one step prefetches 4.
enum { PREFETCH_BLOCKS = 4 };

// The rows after this call's are usually the next block of the same scan, so requests run
// past `n`; a prefetch never faults, and the address is formed as an integer.
static inline const char *prefetch_base(const float *block, size_t dim) {
  return (const char *)((uintptr_t)block + 4 * PREFETCH_BLOCKS * dim * sizeof(float));
}

AVX2 static void rows_avx2(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  size_t i = 0;
  size_t full = dim & ~(size_t)7, pairs = dim & ~(size_t)15;
  __m256i m = tail_mask8(dim - full);
  for (; i + 4 <= n; i += 4) {
    const float *r0 = rows + i * dim, *r1 = r0 + dim, *r2 = r1 + dim, *r3 = r2 + dim;
    const char *ahead = prefetch_base(r0, dim);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t j = 0;
    // Two steps of 8 per iteration, each row still summed in one accumulator in order (the
    // same sequence as dot_avx2).
    for (; j < pairs; j += 16) {
      const char *line = ahead + 16 * j;
      _mm_prefetch(line, _MM_HINT_T0);
      _mm_prefetch(line + 64, _MM_HINT_T0);
      _mm_prefetch(line + 128, _MM_HINT_T0);
      _mm_prefetch(line + 192, _MM_HINT_T0);
      __m256 qv = _mm256_loadu_ps(q + j), qw = _mm256_loadu_ps(q + j + 8);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j), qv, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j), qv, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j), qv, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j), qv, a3);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j + 8), qw, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j + 8), qw, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j + 8), qw, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j + 8), qw, a3);
    }
    for (; j < full; j += 8) {
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
    const char *ahead = prefetch_base(r0, dim);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t j = 0; j < full; j += 16) {
      const char *line = ahead + 16 * j;
      _mm_prefetch(line, _MM_HINT_T0);
      _mm_prefetch(line + 64, _MM_HINT_T0);
      _mm_prefetch(line + 128, _MM_HINT_T0);
      _mm_prefetch(line + 192, _MM_HINT_T0);
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

#if defined(__aarch64__)
// NEON: two 4-lane accumulators (8 lanes, like the scalar path), a 4-wide step when 4 to 7
// remain, then fused scalar steps; the 4-row loop runs the same sequence per row.
static inline float finish_neon(float32x4_t a0, float32x4_t a1, const float *q, const float *r,
                                size_t j, size_t dim) {
  float sum = vaddvq_f32(vaddq_f32(a0, a1));
  for (; j < dim; j++) sum = fmaf(r[j], q[j], sum);
  return sum;
}

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
  return finish_neon(a0, a1, q, r, j, dim);
}

static void rows_neon(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float *r[4] = {rows + i * dim, rows + (i + 1) * dim, rows + (i + 2) * dim, rows + (i + 3) * dim};
    float32x4_t a[4], b[4];
    for (int s = 0; s < 4; s++) a[s] = b[s] = vdupq_n_f32(0);
    size_t j = 0;
    for (; j + 8 <= dim; j += 8) {
      __builtin_prefetch((const char *)r[3] + 4 * dim * sizeof(float) + 4 * j);
      float32x4_t qv = vld1q_f32(q + j), qw = vld1q_f32(q + j + 4);
      for (int s = 0; s < 4; s++) {
        a[s] = vfmaq_f32(a[s], vld1q_f32(r[s] + j), qv);
        b[s] = vfmaq_f32(b[s], vld1q_f32(r[s] + j + 4), qw);
      }
    }
    size_t tail = j;
    if (j + 4 <= dim) {
      float32x4_t qv = vld1q_f32(q + j);
      for (int s = 0; s < 4; s++) a[s] = vfmaq_f32(a[s], vld1q_f32(r[s] + j), qv);
      tail = j + 4;
    }
    for (int s = 0; s < 4; s++) out[i + s] = finish_neon(a[s], b[s], q, r[s], tail, dim);
  }
  for (; i < n; i++) out[i] = dot_neon(q, rows + i * dim, dim);
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

void engram_dot_f32_gather_path(const float *query, const float *base, size_t dim,
                                const int32_t *indices, size_t n, float *out, int path) {
  path = clamp_path(path);
#if defined(__x86_64__)
  if (path >= 2) {
    for (size_t i = 0; i < n; i++) out[i] = dot_avx512(query, base + (size_t)indices[i] * dim, dim);
    return;
  }
  if (path == 1) {
    for (size_t i = 0; i < n; i++) out[i] = dot_avx2(query, base + (size_t)indices[i] * dim, dim);
    return;
  }
#elif defined(__aarch64__)
  if (path >= 1) {
    for (size_t i = 0; i < n; i++) out[i] = dot_neon(query, base + (size_t)indices[i] * dim, dim);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) out[i] = dot_scalar(query, base + (size_t)indices[i] * dim, dim);
}

void engram_dot_f32_gather(const float *query, const float *base, size_t dim, const int32_t *indices,
                           size_t n, float *out) {
  engram_dot_f32_gather_path(query, base, dim, indices, n, out, ENGRAM_LEVEL_AVX512);
}
