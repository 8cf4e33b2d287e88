// Int8 products for the embedders' linear layers: activations quantized per row (symmetric,
// codes -127...127), weights per output row (the same), int32 dot products, one float scale
// per row and per column applied after. See engram_kernels.h for the packed weight layout.
//
// Every level computes the exact integer dot products, so their int32 results are equal bit
// for bit; the float epilogue (one product of the two scales, one of the dot) is the same
// C code on every level, so the float outputs are equal too.
#include "dispatch.h"
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#endif
#endif

#define BLOCK 16  // output columns per packed block
#define STEP 4    // inputs per packed step

size_t engram_qgemm_padded_inputs(size_t k) { return (k + STEP - 1) & ~(size_t)(STEP - 1); }

size_t engram_qgemm_padded_outputs(size_t n) { return (n + BLOCK - 1) & ~(size_t)(BLOCK - 1); }

size_t engram_qgemm_packed_bytes(size_t n, size_t k) {
  return engram_qgemm_padded_outputs(n) * engram_qgemm_padded_inputs(k);
}

// Round to nearest, ties to even (the rounding cvtps2dq uses in the default mode).
static inline int32_t round_even(float x) { return (int32_t)__builtin_rintf(x); }

static inline int8_t code(float x, float inverse) {
  int32_t q = round_even(x * inverse);
  return (int8_t)(q > 127 ? 127 : (q < -127 ? -127 : q));
}

void engram_qgemm_pack(const float *w, size_t n, size_t k, size_t ldw, int8_t *packed, float *scales,
                       int32_t *sums) {
  size_t kp = engram_qgemm_padded_inputs(k), np = engram_qgemm_padded_outputs(n);
  memset(packed, 0, np * kp);
  for (size_t j = 0; j < np; j++) {
    if (j >= n) {
      scales[j] = 0;
      sums[j] = 0;
      continue;
    }
    const float *row = w + j * ldw;
    float largest = 0;
    for (size_t p = 0; p < k; p++) largest = __builtin_fmaxf(largest, __builtin_fabsf(row[p]));
    float inverse = largest > 0 ? 127.0f / largest : 0;
    scales[j] = largest / 127.0f;
    int8_t *block = packed + (j / BLOCK) * BLOCK * kp;
    int32_t sum = 0;
    for (size_t p = 0; p < k; p++) {
      int8_t q = code(row[p], inverse);
      block[(p / STEP) * BLOCK * STEP + (j % BLOCK) * STEP + p % STEP] = q;
      sum += q;
    }
    sums[j] = sum;
  }
}

static void quantize_rows_scalar(const float *x, size_t m, size_t k, size_t ldx, int8_t *q, size_t ldq,
                                 float *scales) {
  for (size_t i = 0; i < m; i++) {
    const float *row = x + i * ldx;
    int8_t *out = q + i * ldq;
    float largest = 0;
    for (size_t p = 0; p < k; p++) largest = __builtin_fmaxf(largest, __builtin_fabsf(row[p]));
    float inverse = largest > 0 ? 127.0f / largest : 0;
    scales[i] = largest / 127.0f;
    for (size_t p = 0; p < k; p++) out[p] = code(row[p], inverse);
    for (size_t p = k; p < ldq; p++) out[p] = 0;
  }
}

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define VNNI512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

// The same codes as quantize_rows_scalar: the largest magnitude is exact in any order, the
// multiply is the same single rounding, cvtps2dq rounds to nearest even as rintf does, and the
// clamp to +-127 comes before the narrowing.
AVX512 static void quantize_rows_avx512(const float *x, size_t m, size_t k, size_t ldx, int8_t *q, size_t ldq,
                                        float *scales) {
  for (size_t i = 0; i < m; i++) {
    const float *row = x + i * ldx;
    int8_t *out = q + i * ldq;
    __m512 big = _mm512_setzero_ps();
    size_t p = 0;
    for (; p + 16 <= k; p += 16) big = _mm512_max_ps(big, _mm512_abs_ps(_mm512_loadu_ps(row + p)));
    float largest = _mm512_reduce_max_ps(big);
    for (; p < k; p++) largest = __builtin_fmaxf(largest, __builtin_fabsf(row[p]));
    float inverse = largest > 0 ? 127.0f / largest : 0;
    scales[i] = largest / 127.0f;
    const __m512 scale = _mm512_set1_ps(inverse);
    const __m512i high = _mm512_set1_epi32(127), low = _mm512_set1_epi32(-127);
    for (p = 0; p + 16 <= k; p += 16) {
      __m512i c = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(row + p), scale));
      c = _mm512_max_epi32(_mm512_min_epi32(c, high), low);
      _mm_storeu_si128((__m128i *)(out + p), _mm512_cvtepi32_epi8(c));
    }
    for (; p < k; p++) out[p] = code(row[p], inverse);
    for (p = k; p < ldq; p++) out[p] = 0;
  }
}

// AVX-512 VNNI: vpdpbusd multiplies unsigned by signed bytes, so each activation code a is
// biased to a + 128 (an XOR with 0x80) and 128 * (the column's code sum) is subtracted at the
// end, exactly in int32. ROWS x NB blocks of 16 columns, all accumulators in registers
// (6 x 4 = 24 of the 32).
VNNI512 static inline __attribute__((always_inline)) void tile_vnni(const int8_t *a, size_t lda, const int8_t *w,
                                                                    size_t kp, const int32_t *sums, int32_t *tile,
                                                                    const int rows, const int nb) {
  __m512i acc[6][4];
  for (int r = 0; r < rows; r++)
    for (int b = 0; b < nb; b++) acc[r][b] = _mm512_setzero_si512();
  const __m512i bias = _mm512_set1_epi32((int32_t)0x80808080u);
  for (size_t s = 0; s < kp; s += STEP) {
    __m512i wv[4];
    for (int b = 0; b < nb; b++) wv[b] = _mm512_loadu_si512(w + b * BLOCK * kp + s * BLOCK);
    for (int r = 0; r < rows; r++) {
      int32_t four;
      memcpy(&four, a + r * lda + s, 4);
      __m512i u = _mm512_xor_si512(_mm512_set1_epi32(four), bias);
      for (int b = 0; b < nb; b++) acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], u, wv[b]);
    }
  }
  for (int b = 0; b < nb; b++) {
    __m512i correction = _mm512_slli_epi32(_mm512_loadu_si512(sums + b * BLOCK), 7);
    for (int r = 0; r < rows; r++)
      _mm512_storeu_si512(tile + r * 64 + b * BLOCK, _mm512_sub_epi32(acc[r][b], correction));
  }
}

VNNI512 static void tile_vnni_any(const int8_t *a, size_t lda, const int8_t *w, size_t kp, const int32_t *sums,
                                  int32_t *tile, int rows, int nb) {
#define VNNI_CASE(R)                                                  \
  case R:                                                             \
    switch (nb) {                                                     \
    case 1: tile_vnni(a, lda, w, kp, sums, tile, R, 1); return;       \
    case 2: tile_vnni(a, lda, w, kp, sums, tile, R, 2); return;       \
    case 3: tile_vnni(a, lda, w, kp, sums, tile, R, 3); return;       \
    default: tile_vnni(a, lda, w, kp, sums, tile, R, 4); return;      \
    }
  switch (rows) {
    VNNI_CASE(1)
    VNNI_CASE(2)
    VNNI_CASE(3)
    VNNI_CASE(4)
    VNNI_CASE(5)
  default:
    switch (nb) {
    case 1: tile_vnni(a, lda, w, kp, sums, tile, 6, 1); return;
    case 2: tile_vnni(a, lda, w, kp, sums, tile, 6, 2); return;
    case 3: tile_vnni(a, lda, w, kp, sums, tile, 6, 3); return;
    default: tile_vnni(a, lda, w, kp, sums, tile, 6, 4); return;
    }
  }
#undef VNNI_CASE
}

// AVX2: vpmaddubsw takes unsigned x signed bytes into saturating i16 pairs. With |a| as the
// unsigned side and the weights given a's sign (vpsignb), each pair is at most
// 2 * 127 * 127 = 32258 and never saturates, so the sums are exact; vpmaddwd by ones widens
// the pairs to i32. Up to 4 rows x 1 block (two registers of 8 columns).
AVX2 static inline __attribute__((always_inline)) void tile_avx2(const int8_t *a, size_t lda, const int8_t *w,
                                                                 size_t kp, int32_t *tile, const int rows) {
  __m256i acc[4][2];
  for (int r = 0; r < rows; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t s = 0; s < kp; s += STEP) {
    __m256i w0 = _mm256_loadu_si256((const __m256i *)(w + s * BLOCK));
    __m256i w1 = _mm256_loadu_si256((const __m256i *)(w + s * BLOCK + 32));
    for (int r = 0; r < rows; r++) {
      int32_t four;
      memcpy(&four, a + r * lda + s, 4);
      __m256i x = _mm256_set1_epi32(four);
      __m256i magnitude = _mm256_abs_epi8(x);
      acc[r][0] = _mm256_add_epi32(
          acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(w0, x)), ones));
      acc[r][1] = _mm256_add_epi32(
          acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(w1, x)), ones));
    }
  }
  for (int r = 0; r < rows; r++) {
    _mm256_storeu_si256((__m256i *)(tile + r * 64), acc[r][0]);
    _mm256_storeu_si256((__m256i *)(tile + r * 64 + 8), acc[r][1]);
  }
}

AVX2 static void tile_avx2_any(const int8_t *a, size_t lda, const int8_t *w, size_t kp, int32_t *tile, int rows,
                               int nb) {
  for (int b = 0; b < nb; b++) {
    const int8_t *block = w + b * BLOCK * kp;
    int32_t *out = tile + b * BLOCK;
    for (int r = 0; r < rows; r += 4) {
      int count = rows - r < 4 ? rows - r : 4;
      const int8_t *x = a + r * lda;
      int32_t *t = out + r * 64;
      switch (count) {
      case 1: tile_avx2(x, lda, block, kp, t, 1); break;
      case 2: tile_avx2(x, lda, block, kp, t, 2); break;
      case 3: tile_avx2(x, lda, block, kp, t, 3); break;
      default: tile_avx2(x, lda, block, kp, t, 4); break;
      }
    }
  }
}
#endif

#if defined(__aarch64__)
// NEON with the dot-product extension (sdot, Armv8.2 and later; every Apple M-series core):
// 16 bytes of a block step are 4 columns x 4 inputs, and vdotq_s32 against the row's 4
// codes broadcast gives those 4 columns' partial sums, exactly. Up to 4 rows x 1 block.
static int has_dotprod(void) {
#if defined(__APPLE__)
  return 1;
#elif defined(__linux__)
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
  return 0;
#endif
}

// The dot-product extension: clang names the feature, GCC 12 needs the whole architecture
// (with "+dotprod" alone it refuses to inline arm_neon.h's vdotq_s32).
#if defined(__clang__)
#define ENGRAM_TARGET_DOTPROD __attribute__((target("dotprod")))
#else
#define ENGRAM_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif

ENGRAM_TARGET_DOTPROD static void tile_sdot_any(const int8_t *a, size_t lda, const int8_t *w,
                                                              size_t kp, int32_t *tile, int rows, int nb) {
  for (int b = 0; b < nb; b++) {
    const int8_t *block = w + b * BLOCK * kp;
    for (int r0 = 0; r0 < rows; r0 += 4) {
      int count = rows - r0 < 4 ? rows - r0 : 4;
      int32x4_t acc[4][4];
      for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) acc[r][c] = vdupq_n_s32(0);
      for (size_t s = 0; s < kp; s += STEP) {
        int8x16_t wv[4];
        for (int c = 0; c < 4; c++) wv[c] = vld1q_s8(block + s * BLOCK + c * 16);
        for (int r = 0; r < count; r++) {
          int32_t four;
          memcpy(&four, a + (size_t)(r0 + r) * lda + s, 4);
          int8x16_t x = vreinterpretq_s8_s32(vdupq_n_s32(four));
          for (int c = 0; c < 4; c++) acc[r][c] = vdotq_s32(acc[r][c], wv[c], x);
        }
      }
      for (int r = 0; r < count; r++)
        for (int c = 0; c < 4; c++) vst1q_s32(tile + (r0 + r) * 64 + b * BLOCK + c * 4, acc[r][c]);
    }
  }
}
#endif

static void tile_scalar(const int8_t *a, size_t lda, const int8_t *w, size_t kp, int32_t *tile, int rows, int nb) {
  for (int r = 0; r < rows; r++)
    for (int b = 0; b < nb; b++)
      for (int c = 0; c < BLOCK; c++) {
        const int8_t *block = w + b * BLOCK * kp;
        int32_t sum = 0;
        for (size_t s = 0; s < kp; s += STEP)
          for (int t = 0; t < STEP; t++) sum += (int32_t)a[r * lda + s + t] * (int32_t)block[s * BLOCK + c * STEP + t];
        tile[r * 64 + b * BLOCK + c] = sum;
      }
}

// The level actually run for a requested path: VNNI needs its own flag at level 2 (AVX-512
// without it runs the AVX2 tile), sdot needs the dot-product extension.
static int effective_path(int path) {
  int level = engram_level_cached();
  path = path < level ? path : level;
#if defined(__x86_64__)
  if (path >= 2 && !engram_vnni_cached()) path = 1;
#elif defined(__aarch64__)
  static int dot = 0;  // +1 cached, as dispatch.h does
  int value = __atomic_load_n(&dot, __ATOMIC_RELAXED);
  if (value == 0) {
    value = has_dotprod() + 1;
    __atomic_store_n(&dot, value, __ATOMIC_RELAXED);
  }
  if (path >= 1 && value != 2) path = 0;
#endif
  return path;
}

static void tile_at(int path, const int8_t *a, size_t lda, const int8_t *w, size_t kp, const int32_t *sums,
                    int32_t *tile, int rows, int nb) {
#if defined(__x86_64__)
  if (path >= 2) return tile_vnni_any(a, lda, w, kp, sums, tile, rows, nb);
  if (path >= 1) return tile_avx2_any(a, lda, w, kp, tile, rows, nb);
#elif defined(__aarch64__)
  if (path >= 1) return tile_sdot_any(a, lda, w, kp, tile, rows, nb);
#endif
  (void)sums;
  tile_scalar(a, lda, w, kp, tile, rows, nb);
}

// Columns col0..<col1 in groups of 4 blocks (64 columns, whose weights stay in cache while
// every row block passes over them), rows in blocks of 6; each tile goes through `emit`.
typedef struct {
  float *c;
  int32_t *raw;
  size_t ld;
  const float *row_scales;
  const float *column_scales;
} Sink;

static void emit(const Sink *sink, const int32_t *tile, size_t row, int rows, size_t col, size_t count) {
  for (int r = 0; r < rows; r++) {
    const int32_t *t = tile + r * 64;
    if (sink->raw != NULL) {
      memcpy(sink->raw + (row + r) * sink->ld + col, t, count * sizeof(int32_t));
      continue;
    }
    float *out = sink->c + (row + r) * sink->ld + col;
    float scale = sink->row_scales[row + r];
    const float *columns = sink->column_scales + col;
    for (size_t j = 0; j < count; j++) out[j] = (float)t[j] * (scale * columns[j]);
  }
}

static void qgemm(const int8_t *a, size_t m, size_t lda, const int8_t *packed, const int32_t *sums, size_t kp,
                  size_t col0, size_t col1, const Sink *sink, int path) {
  path = effective_path(path);
  int32_t tile[6 * 64] __attribute__((aligned(64)));
  for (size_t col = col0; col < col1; col += 4 * BLOCK) {
    size_t count = col1 - col < 4 * BLOCK ? col1 - col : 4 * BLOCK;
    int nb = (int)((count + BLOCK - 1) / BLOCK);
    const int8_t *w = packed + (col / BLOCK) * BLOCK * kp;
    for (size_t row = 0; row < m; row += 6) {
      int rows = m - row < 6 ? (int)(m - row) : 6;
      tile_at(path, a + row * lda, lda, w, kp, sums + col, tile, rows, nb);
      emit(sink, tile, row, rows, col, count);
    }
  }
}

void engram_qgemm_i32_path(const int8_t *a, size_t m, size_t lda, const int8_t *packed, const int32_t *sums,
                           size_t k, size_t col0, size_t col1, int32_t *out, size_t ldo, int path) {
  Sink sink = {NULL, out, ldo, NULL, NULL};
  qgemm(a, m, lda, packed, sums, engram_qgemm_padded_inputs(k), col0, col1, &sink, path);
}

void engram_qgemm_f32_path(const int8_t *a, const float *row_scales, size_t m, size_t lda, const int8_t *packed,
                           const float *column_scales, const int32_t *sums, size_t k, size_t col0, size_t col1,
                           float *c, size_t ldc, int path) {
  Sink sink = {c, NULL, ldc, row_scales, column_scales};
  qgemm(a, m, lda, packed, sums, engram_qgemm_padded_inputs(k), col0, col1, &sink, path);
}

void engram_qgemm_f32(const int8_t *a, const float *row_scales, size_t m, size_t lda, const int8_t *packed,
                      const float *column_scales, const int32_t *sums, size_t k, size_t col0, size_t col1, float *c,
                      size_t ldc) {
  engram_qgemm_f32_path(a, row_scales, m, lda, packed, column_scales, sums, k, col0, col1, c, ldc,
                        ENGRAM_LEVEL_AVX512);
}

void engram_quantize_rows_path(const float *x, size_t m, size_t k, size_t ldx, int8_t *q, size_t ldq,
                               float *scales, int path) {
  int level = engram_level_cached();
  path = path < level ? path : level;
#if defined(__x86_64__)
  if (path >= 2) return quantize_rows_avx512(x, m, k, ldx, q, ldq, scales);
#endif
  quantize_rows_scalar(x, m, k, ldx, q, ldq, scales);
}

void engram_quantize_rows(const float *x, size_t m, size_t k, size_t ldx, int8_t *q, size_t ldq, float *scales) {
  engram_quantize_rows_path(x, m, k, ldx, q, ldq, scales, ENGRAM_LEVEL_AVX512);
}
