#include "dispatch.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

static int32_t dot_i8_scalar(const int8_t *a, const int8_t *b, size_t n) {
  int32_t sum = 0;
  for (size_t j = 0; j < n; j++) sum += (int32_t)a[j] * (int32_t)b[j];
  return sum;
}

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define VNNI512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

// AVX2 has no signed x signed byte multiply-add that cannot saturate (vpmaddubsw is u8 x s8
// into saturating i16), so widen both sides to i16 and use vpmaddwd, which is exact.
AVX2 static inline int32_t hsum_epi32_256(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

AVX2 static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b, size_t n) {
  __m256i acc = _mm256_setzero_si256();
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + j)));
    __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + j)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
  }
  int32_t sum = hsum_epi32_256(acc);
  for (; j < n; j++) sum += (int32_t)a[j] * (int32_t)b[j];
  return sum;
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
    for (size_t i = 0; i < n; i++) out[i] = dot_i8_avx2(q, rows + i * dim, dim);
    return;
  }
  for (size_t j = 0; j < dim; j++) u[j] = (uint8_t)q[j] ^ 0x80u;
  size_t full = dim & ~(size_t)63;
  __mmask64 m = full < dim ? (__mmask64)((~0ULL) >> (64 - (dim - full))) : 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const int8_t *r0 = rows + i * dim, *r1 = r0 + dim, *r2 = r1 + dim, *r3 = r2 + dim;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t j = 0; j < full; j += 64) {
      __m512i uv = _mm512_loadu_si512(u + j);
      a0 = _mm512_dpbusd_epi32(a0, uv, _mm512_loadu_si512(r0 + j));
      a1 = _mm512_dpbusd_epi32(a1, uv, _mm512_loadu_si512(r1 + j));
      a2 = _mm512_dpbusd_epi32(a2, uv, _mm512_loadu_si512(r2 + j));
      a3 = _mm512_dpbusd_epi32(a3, uv, _mm512_loadu_si512(r3 + j));
    }
    if (m) {
      __m512i uv = _mm512_maskz_loadu_epi8(m, u + full);
      a0 = _mm512_dpbusd_epi32(a0, uv, _mm512_maskz_loadu_epi8(m, r0 + full));
      a1 = _mm512_dpbusd_epi32(a1, uv, _mm512_maskz_loadu_epi8(m, r1 + full));
      a2 = _mm512_dpbusd_epi32(a2, uv, _mm512_maskz_loadu_epi8(m, r2 + full));
      a3 = _mm512_dpbusd_epi32(a3, uv, _mm512_maskz_loadu_epi8(m, r3 + full));
    }
    out[i] = _mm512_reduce_add_epi32(a0) - 128 * sums[i];
    out[i + 1] = _mm512_reduce_add_epi32(a1) - 128 * sums[i + 1];
    out[i + 2] = _mm512_reduce_add_epi32(a2) - 128 * sums[i + 2];
    out[i + 3] = _mm512_reduce_add_epi32(a3) - 128 * sums[i + 3];
  }
  for (; i < n; i++) out[i] = dot_u8s8_vnni(u, rows + i * dim, dim) - 128 * sums[i];
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

void engram_dot_i8_rows(const int8_t *query, const int8_t *rows, size_t dim, size_t n,
                        const int32_t *row_sums, int32_t *out) {
#if defined(__x86_64__)
  if (engram_vnni_cached()) {
    rows_i8_vnni(query, rows, dim, n, row_sums, out);
    return;
  }
  if (engram_level_cached() >= 1) {
    for (size_t i = 0; i < n; i++) out[i] = dot_i8_avx2(query, rows + i * dim, dim);
    return;
  }
#endif
  (void)row_sums;
  for (size_t i = 0; i < n; i++) out[i] = dot_i8_scalar(query, rows + i * dim, dim);
}

int32_t engram_dot_i8_path(const int8_t *a, const int8_t *b, size_t n, int path) {
#if defined(__x86_64__)
  if (path >= 2 && engram_vnni_cached()) return dot_i8_vnni(a, b, n);
  if (path >= 1 && engram_level_cached() >= 1) return dot_i8_avx2(a, b, n);
#endif
  (void)path;
  return dot_i8_scalar(a, b, n);
}
