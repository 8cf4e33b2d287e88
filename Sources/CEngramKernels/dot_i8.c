#include "dispatch.h"
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

static int32_t dot_i8_scalar(const int8_t *a, const int8_t *b, size_t n) {
  int32_t sum = 0;
  for (size_t j = 0; j < n; j++) sum += (int32_t)a[j] * (int32_t)b[j];
  return sum;
}

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define VNNI512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

AVX2 static inline int32_t hsum_epi32_256(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// AVX2 has no signed x signed byte multiply-add: vpmaddubsw takes unsigned x signed bytes
// into saturating i16 pairs. With |q| as the unsigned side and the row's bytes given q's
// sign (vpsignb), each pair is at most 2 * 127 * 127 = 32258 and cannot saturate, so the
// sum is exact while the codes lie in -127...127 (what the quantizer writes). vpmaddwd by
// ones widens the pairs to i32. Per 32 bytes that is 4 instructions; the 16-bit widening of
// both sides (vpmovsxbw twice, vpmaddwd, vpaddd per 16 bytes) takes 6 and measured slower.
AVX2 static inline __m256i madd_signed(__m256i acc, __m256i qabs, __m256i qsign, __m256i r) {
  __m256i pairs = _mm256_maddubs_epi16(qabs, _mm256_sign_epi8(r, qsign));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

AVX2 static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b, size_t n) {
  __m256i acc = _mm256_setzero_si256();
  size_t j = 0;
  for (; j + 32 <= n; j += 32) {
    __m256i x = _mm256_loadu_si256((const __m256i *)(a + j));
    acc = madd_signed(acc, _mm256_abs_epi8(x), x, _mm256_loadu_si256((const __m256i *)(b + j)));
  }
  int32_t sum = hsum_epi32_256(acc);
  for (; j < n; j++) sum += (int32_t)a[j] * (int32_t)b[j];
  return sum;
}

// One row at a time: measured on an AMD EPYC (100k x 384, one thread, scan and select), four
// rows sharing the query's registers, with or without software prefetch, ran 1.3-1.5x slower
// than this loop, which stays within a few percent of a plain read of the codes.
AVX2 static void rows_i8_avx2(const int8_t *q, const int8_t *rows, size_t dim, size_t n, int32_t *out) {
  // The row loop written out (not calls of dot_i8_avx2): measured 10-15% faster.
  const __m256i ones = _mm256_set1_epi16(1);
  size_t full = dim & ~(size_t)31;
  for (size_t i = 0; i < n; i++) {
    const int8_t *r = rows + i * dim;
    __m256i acc = _mm256_setzero_si256();
    for (size_t j = 0; j < full; j += 32) {
      __m256i x = _mm256_loadu_si256((const __m256i *)(q + j));
      __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(x), _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(r + j)), x));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
    }
    int32_t sum = hsum_epi32_256(acc);
    for (size_t j = full; j < dim; j++) sum += (int32_t)q[j] * (int32_t)r[j];
    out[i] = sum;
  }
}

// The scan: scores (float)dot * scale and keeps those at least the threshold, in the same
// loop, sparing a pass over a block of dots and one over its scores. |q| is taken once per
// call rather than once per row and step: vpabsb, vpsignb, vpmaddubsw and vpmaddwd all issue
// on the same two pipes of an AMD Zen 4 (measured), so the loop above is pipe-bound at ~24
// cycles a row, close to the ~28 a row takes to arrive from memory, and the two barely
// overlap; without vpabsb it issues 3 of those ops per 32 bytes instead of 4. One row at a
// time, as above: measured on the same EPYC (100k x 384 from memory, blocks of 1024, four
// runs), this loop ran at 1.06-1.18x a plain read of the bytes, two rows sharing the query's
// loads at 1.12-1.23x, four rows at 2.1x, the loop above plus a scoring pass at 1.22-1.30x.
AVX2 static size_t scan_i8_avx2(const int8_t *q, const int8_t *rows, size_t dim, size_t n, const float *scales,
                                float threshold, int32_t *picks, float *scores) {
  size_t count = 0;
  size_t full = dim & ~(size_t)31;
  int8_t magnitude[4096] __attribute__((aligned(32)));
  if (full > sizeof(magnitude)) {
    // Very wide vectors: one dot product at a time rather than allocate on a hot path.
    for (size_t i = 0; i < n; i++) {
      float score = (float)dot_i8_avx2(q, rows + i * dim, dim) * scales[i];
      if (score >= threshold) {
        picks[count] = (int32_t)i;
        scores[count++] = score;
      }
    }
    return count;
  }
  for (size_t j = 0; j < full; j += 32)
    _mm256_store_si256((__m256i *)(magnitude + j), _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(q + j))));
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t i = 0; i < n; i++) {
    const int8_t *r = rows + i * dim;
    __m256i acc = _mm256_setzero_si256();
    for (size_t j = 0; j < full; j += 32) {
      __m256i x = _mm256_loadu_si256((const __m256i *)(q + j));
      __m256i m = _mm256_load_si256((const __m256i *)(magnitude + j));
      __m256i pairs = _mm256_maddubs_epi16(m, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(r + j)), x));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
    }
    int32_t dot = hsum_epi32_256(acc);
    for (size_t j = full; j < dim; j++) dot += (int32_t)q[j] * (int32_t)r[j];
    float score = (float)dot * scales[i];
    if (score >= threshold) {
      picks[count] = (int32_t)i;
      scores[count++] = score;
    }
  }
  return count;
}

// vpdpbusd multiplies unsigned bytes by signed bytes. The query q (signed) is biased to
// u = q + 128 (an XOR with 0x80), so sum(u * r) = sum(q * r) + 128 * sum(r); the caller
// passes sum(r) per row and the bias is subtracted exactly in int32.
VNNI512 static inline int32_t dot_u8s8_vnni(const uint8_t *u, const int8_t *r, size_t n) {
  __m512i acc = _mm512_setzero_si512();
  size_t j = 0;
  for (; j + 64 <= n; j += 64)
    acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(u + j), _mm512_loadu_si512(r + j));
  if (j < n) {
    __mmask64 m = (__mmask64)((~0ULL) >> (64 - (n - j)));
    acc = _mm512_dpbusd_epi32(acc, _mm512_maskz_loadu_epi8(m, u + j), _mm512_maskz_loadu_epi8(m, r + j));
  }
  return _mm512_reduce_add_epi32(acc);
}

VNNI512 static void rows_i8_vnni(const int8_t *q, const int8_t *rows, size_t dim, size_t n,
                                 const int32_t *sums, int32_t *out) {
  uint8_t stack[4096];
  uint8_t *u = stack;
  if (dim > sizeof(stack)) {
    // Very wide vectors: fall back rather than allocate on a hot path.
    rows_i8_avx2(q, rows, dim, n, out);
    return;
  }
  for (size_t j = 0; j < dim; j++) u[j] = (uint8_t)q[j] ^ 0x80u;
  // One row at a time, a single sequential stream (see dot_f32.c).
  for (size_t i = 0; i < n; i++) out[i] = dot_u8s8_vnni(u, rows + i * dim, dim) - 128 * sums[i];
}

// The scan on the VNNI path: the same dot products, scored and tested in the same loop.
VNNI512 static size_t scan_i8_vnni(const int8_t *q, const int8_t *rows, size_t dim, size_t n, const int32_t *sums,
                                   const float *scales, float threshold, int32_t *picks, float *scores) {
  uint8_t u[4096];
  if (dim > sizeof(u)) return scan_i8_avx2(q, rows, dim, n, scales, threshold, picks, scores);
  for (size_t j = 0; j < dim; j++) u[j] = (uint8_t)q[j] ^ 0x80u;
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    float score = (float)(dot_u8s8_vnni(u, rows + i * dim, dim) - 128 * sums[i]) * scales[i];
    if (score >= threshold) {
      picks[count] = (int32_t)i;
      scores[count++] = score;
    }
  }
  return count;
}

VNNI512 static int32_t dot_i8_vnni(const int8_t *a, const int8_t *b, size_t n) {
  int32_t sum_b = 0;
  for (size_t j = 0; j < n; j++) sum_b += b[j];
  int32_t total = 0;
  uint8_t u[256];
  for (size_t start = 0; start < n; start += sizeof(u)) {
    size_t len = n - start < sizeof(u) ? n - start : sizeof(u);
    for (size_t j = 0; j < len; j++) u[j] = (uint8_t)a[start + j] ^ 0x80u;
    total += dot_u8s8_vnni(u, b + start, len);
  }
  return total - 128 * sum_b;
}
#endif

#if defined(__aarch64__)
// NEON without the dot-product extension: vmull_s8 gives exact i16 products (at most 16384),
// vpadalq_s16 adds adjacent pairs into i32 lanes: exact for every int8 input.
static int32_t dot_i8_neon(const int8_t *a, const int8_t *b, size_t n) {
  int32x4_t acc0 = vdupq_n_s32(0), acc1 = acc0;
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    int8x16_t x = vld1q_s8(a + j), y = vld1q_s8(b + j);
    acc0 = vpadalq_s16(acc0, vmull_s8(vget_low_s8(x), vget_low_s8(y)));
    acc1 = vpadalq_s16(acc1, vmull_high_s8(x, y));
  }
  int32_t sum = vaddvq_s32(vaddq_s32(acc0, acc1));
  for (; j < n; j++) sum += (int32_t)a[j] * (int32_t)b[j];
  return sum;
}

static void rows_i8_neon(const int8_t *q, const int8_t *rows, size_t dim, size_t n, int32_t *out) {
  for (size_t i = 0; i < n; i++) out[i] = dot_i8_neon(q, rows + i * dim, dim);
}
#endif

void engram_dot_i8_rows_path(const int8_t *query, const int8_t *rows, size_t dim, size_t n,
                             const int32_t *row_sums, int32_t *out, int path) {
  int level = engram_level_cached();
  path = path < level ? path : level;
#if defined(__x86_64__)
  if (path >= 2 && engram_vnni_cached()) {
    rows_i8_vnni(query, rows, dim, n, row_sums, out);
    return;
  }
  if (path >= 1) {
    rows_i8_avx2(query, rows, dim, n, out);
    return;
  }
#elif defined(__aarch64__)
  if (path >= 1) {
    rows_i8_neon(query, rows, dim, n, out);
    return;
  }
#endif
  (void)row_sums;
  for (size_t i = 0; i < n; i++) out[i] = dot_i8_scalar(query, rows + i * dim, dim);
}

void engram_dot_i8_rows(const int8_t *query, const int8_t *rows, size_t dim, size_t n,
                        const int32_t *row_sums, int32_t *out) {
  engram_dot_i8_rows_path(query, rows, dim, n, row_sums, out, ENGRAM_LEVEL_AVX512);
}

int32_t engram_dot_i8_path(const int8_t *a, const int8_t *b, size_t n, int path) {
  int level = engram_level_cached();
  path = path < level ? path : level;
#if defined(__x86_64__)
  if (path >= 2 && engram_vnni_cached()) return dot_i8_vnni(a, b, n);
  if (path >= 1) return dot_i8_avx2(a, b, n);
#elif defined(__aarch64__)
  if (path >= 1) return dot_i8_neon(a, b, n);
#endif
  return dot_i8_scalar(a, b, n);
}

size_t engram_scan_i8_rows_path(const int8_t *query, const int8_t *rows, size_t dim, size_t n,
                                const int32_t *row_sums, const float *scales, float threshold, int32_t *picks,
                                float *scores, int path) {
  int level = engram_level_cached();
  path = path < level ? path : level;
#if defined(__x86_64__)
  if (path >= 2 && engram_vnni_cached())
    return scan_i8_vnni(query, rows, dim, n, row_sums, scales, threshold, picks, scores);
  if (path >= 1) return scan_i8_avx2(query, rows, dim, n, scales, threshold, picks, scores);
#endif
  (void)row_sums;
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    const int8_t *r = rows + i * dim;
#if defined(__aarch64__)
    int32_t dot = path >= 1 ? dot_i8_neon(query, r, dim) : dot_i8_scalar(query, r, dim);
#else
    int32_t dot = dot_i8_scalar(query, r, dim);
#endif
    float score = (float)dot * scales[i];
    if (score >= threshold) {
      picks[count] = (int32_t)i;
      scores[count++] = score;
    }
  }
  return count;
}

size_t engram_scan_i8_rows(const int8_t *query, const int8_t *rows, size_t dim, size_t n, const int32_t *row_sums,
                           const float *scales, float threshold, int32_t *picks, float *scores) {
  return engram_scan_i8_rows_path(query, rows, dim, n, row_sums, scales, threshold, picks, scores,
                                  ENGRAM_LEVEL_AVX512);
}
