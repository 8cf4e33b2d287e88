// Int8 products for the embedders' linear layers.
//
// Weights: each output row quantized symmetrically (codes -127...127) in groups of 64 inputs,
// one scale per (row, group). Activations: each row quantized in two int8 passes with one
// scale s per row: the coarse codes c = round(x / (256 s)) and the codes f of what they leave,
// round((x / (256 s) - c) * 256), so that x ~ s * (256 c + f), a 16-bit code carried by two
// int8 rows. Per group, the exact int32 sums 256 * dot(c, w) + dot(f, w) are converted to
// float and multiplied by the group's weight scales into float accumulators; the row scale
// comes last. Per-row activations alone cost most of the error (MiniLM fixtures: cosine to
// float 0.9857 at worst); the two passes and the groups bring it above 0.999, for twice the
// integer work.
//
// Every level computes the exact integer sums, so they are equal bit for bit; the float
// epilogue is one fused multiply-add per group (intrinsics on the SIMD levels, fmaf in C)
// and one product by the row scale, so the float outputs are equal too.
#include "dispatch.h"
#include <stdlib.h>
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
#define GROUP 64  // inputs per weight scale
#define FINE 256  // the coarse codes' weight against the fine ones (a shift by 8)
#define TOKENS 3  // activation rows per tile (6 code rows)

size_t engram_qgemm_padded_inputs(size_t k) { return (k + GROUP - 1) & ~(size_t)(GROUP - 1); }

size_t engram_qgemm_padded_outputs(size_t n) { return (n + BLOCK - 1) & ~(size_t)(BLOCK - 1); }

size_t engram_qgemm_groups(size_t k) { return engram_qgemm_padded_inputs(k) / GROUP; }

size_t engram_qgemm_packed_bytes(size_t n, size_t k) {
  return engram_qgemm_padded_outputs(n) * engram_qgemm_padded_inputs(k);
}

static inline int8_t clamp_code(float rounded) {
  int32_t q = (int32_t)rounded;
  return (int8_t)(q > 127 ? 127 : (q < -127 ? -127 : q));
}

void engram_qgemm_pack(const float *w, size_t n, size_t k, size_t ldw, int8_t *packed, float *scales,
                       int32_t *sums) {
  size_t kp = engram_qgemm_padded_inputs(k), np = engram_qgemm_padded_outputs(n), groups = kp / GROUP;
  memset(packed, 0, np * kp);
  for (size_t j = 0; j < np; j++) {
    int8_t *block = packed + (j / BLOCK) * BLOCK * kp;
    for (size_t g = 0; g < groups; g++) {
      size_t at = g * np + j, start = g * GROUP, end = start + GROUP < k ? start + GROUP : k;
      scales[at] = 0;
      sums[at] = 0;
      if (j >= n) continue;
      const float *row = w + j * ldw;
      float largest = 0;
      for (size_t p = start; p < end; p++) largest = __builtin_fmaxf(largest, __builtin_fabsf(row[p]));
      float inverse = largest > 0 ? 127.0f / largest : 0;
      scales[at] = largest / 127.0f;
      int32_t sum = 0;
      for (size_t p = start; p < end; p++) {
        int8_t q = clamp_code(__builtin_rintf(row[p] * inverse));
        block[(p / STEP) * BLOCK * STEP + (j % BLOCK) * STEP + p % STEP] = q;
        sum += q;
      }
      sums[at] = sum;
    }
  }
}

// The two codes of x at t = x * inverse: rint(t), then rint((t - rint(t)) * 256); t - rint(t)
// is exact and so is the product by 256, so every level that rounds to nearest even agrees.
static inline void two_codes(float x, float inverse, int8_t *coarse, int8_t *fine) {
  float t = x * inverse;
  float q = __builtin_rintf(t);
  float r = t - q;
  *coarse = clamp_code(q);
  *fine = clamp_code(__builtin_rintf(r * (float)FINE));
}

static float row_inverse(float largest, float *scale) {
  *scale = largest / 127.0f / (float)FINE;
  return largest > 0 ? 127.0f / largest : 0;
}

static void quantize_rows_scalar(const float *x, size_t m, size_t k, size_t ldx, int8_t *q, size_t ldq,
                                 float *scales) {
  for (size_t i = 0; i < m; i++) {
    const float *row = x + i * ldx;
    int8_t *coarse = q + 2 * i * ldq, *fine = coarse + ldq;
    float largest = 0;
    for (size_t p = 0; p < k; p++) largest = __builtin_fmaxf(largest, __builtin_fabsf(row[p]));
    float inverse = row_inverse(largest, scales + i);
    for (size_t p = 0; p < k; p++) two_codes(row[p], inverse, coarse + p, fine + p);
    for (size_t p = k; p < ldq; p++) coarse[p] = fine[p] = 0;
  }
}

// Where a tile's results go: float accumulators (tokens `TOKENS` x 64 columns), or, for tests,
// each group's exact int32 sums (token t, group g at raw + g * raw_group + t * raw_token).
typedef struct {
  const float *scales;  // the group scales of the tile's first column; group g at + g * stride
  const int32_t *sums;  // the weight code sums, the same layout
  size_t stride;
  float *acc;
  int32_t *raw;
  size_t raw_group, raw_token;
} Groups;

// The fused multiply-add of the portable level: x * s + a rounded once, as the SIMD levels'.
static inline void accumulate_scalar(const Groups *out, size_t g, int t, int col, int32_t sum) {
  if (out->raw != NULL) {
    out->raw[g * out->raw_group + (size_t)t * out->raw_token + col] = sum;
    return;
  }
  float *a = out->acc + t * 64 + col;
  *a = __builtin_fmaf((float)sum, out->scales[g * out->stride + col], *a);
}

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define VNNI512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

// The same codes as quantize_rows_scalar: the largest magnitude is exact in any order,
// roundscale and cvtps2dq round to nearest even as rintf does, and the clamp to +-127 comes
// before the narrowing.
AVX512 static void quantize_rows_avx512(const float *x, size_t m, size_t k, size_t ldx, int8_t *q, size_t ldq,
                                        float *scales) {
  const __m512i high = _mm512_set1_epi32(127), low = _mm512_set1_epi32(-127);
  const __m512 fine_weight = _mm512_set1_ps((float)FINE);
  for (size_t i = 0; i < m; i++) {
    const float *row = x + i * ldx;
    int8_t *coarse = q + 2 * i * ldq, *fine = coarse + ldq;
    __m512 big = _mm512_setzero_ps();
    size_t p = 0;
    for (; p + 16 <= k; p += 16) big = _mm512_max_ps(big, _mm512_abs_ps(_mm512_loadu_ps(row + p)));
    float largest = _mm512_reduce_max_ps(big);
    for (; p < k; p++) largest = __builtin_fmaxf(largest, __builtin_fabsf(row[p]));
    float inverse = row_inverse(largest, scales + i);
    const __m512 scale = _mm512_set1_ps(inverse);
    for (p = 0; p + 16 <= k; p += 16) {
      __m512 t = _mm512_mul_ps(_mm512_loadu_ps(row + p), scale);
      __m512 rounded = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      __m512i c = _mm512_cvtps_epi32(rounded);
      __m512i f = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_sub_ps(t, rounded), fine_weight));
      c = _mm512_max_epi32(_mm512_min_epi32(c, high), low);
      f = _mm512_max_epi32(_mm512_min_epi32(f, high), low);
      _mm_storeu_si128((__m128i *)(coarse + p), _mm512_cvtepi32_epi8(c));
      _mm_storeu_si128((__m128i *)(fine + p), _mm512_cvtepi32_epi8(f));
    }
    for (; p < k; p++) two_codes(row[p], inverse, coarse + p, fine + p);
    for (p = k; p < ldq; p++) coarse[p] = fine[p] = 0;
  }
}

// AVX-512 VNNI: vpdpbusd multiplies unsigned by signed bytes, so each activation code a is
// biased to a + 128 (an XOR with 0x80); per group, (256 + 1) * 128 * (the column's code sum)
// is subtracted from the combined sum, exactly in int32. ROWS code rows (ROWS / 2 tokens) x
// NB blocks of 16 columns, all accumulators in registers (6 x 4 = 24 of the 32).
VNNI512 static inline __attribute__((always_inline)) void tile_vnni(const int8_t *a, size_t lda, const int8_t *w,
                                                                    size_t kp, const Groups *out, const int rows,
                                                                    const int nb) {
  const __m512i bias = _mm512_set1_epi32((int32_t)0x80808080u);
  for (size_t g = 0, s0 = 0; s0 < kp; g++, s0 += GROUP) {
    __m512i acc[6][4];
    for (int r = 0; r < rows; r++)
      for (int b = 0; b < nb; b++) acc[r][b] = _mm512_setzero_si512();
    for (size_t s = s0; s < s0 + GROUP; s += STEP) {
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
      __m512i sums = _mm512_loadu_si512(out->sums + g * out->stride + b * BLOCK);
      __m512i correction = _mm512_add_epi32(_mm512_slli_epi32(sums, 15), _mm512_slli_epi32(sums, 7));
      __m512 scale = _mm512_loadu_ps(out->scales + g * out->stride + b * BLOCK);
      for (int t = 0; t < rows / 2; t++) {
        __m512i sum = _mm512_sub_epi32(_mm512_add_epi32(_mm512_slli_epi32(acc[2 * t][b], 8), acc[2 * t + 1][b]),
                                       correction);
        if (out->raw != NULL) {
          _mm512_storeu_si512(out->raw + g * out->raw_group + t * out->raw_token + b * BLOCK, sum);
          continue;
        }
        float *target = out->acc + t * 64 + b * BLOCK;
        _mm512_storeu_ps(target, _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, _mm512_loadu_ps(target)));
      }
    }
  }
}

VNNI512 static void tile_vnni_any(const int8_t *a, size_t lda, const int8_t *w, size_t kp, const Groups *out,
                                  int rows, int nb) {
#define VNNI_CASE(R)                                            \
  case R:                                                       \
    switch (nb) {                                               \
    case 1: tile_vnni(a, lda, w, kp, out, R, 1); return;        \
    case 2: tile_vnni(a, lda, w, kp, out, R, 2); return;        \
    case 3: tile_vnni(a, lda, w, kp, out, R, 3); return;        \
    default: tile_vnni(a, lda, w, kp, out, R, 4); return;       \
    }
  switch (rows) {
    VNNI_CASE(2)
    VNNI_CASE(4)
  default:
    switch (nb) {
    case 1: tile_vnni(a, lda, w, kp, out, 6, 1); return;
    case 2: tile_vnni(a, lda, w, kp, out, 6, 2); return;
    case 3: tile_vnni(a, lda, w, kp, out, 6, 3); return;
    default: tile_vnni(a, lda, w, kp, out, 6, 4); return;
    }
  }
#undef VNNI_CASE
}

// AVX2: vpmaddubsw takes unsigned x signed bytes into saturating i16 pairs. With |a| as the
// unsigned side and the weights given a's sign (vpsignb), each pair is at most
// 2 * 127 * 127 = 32258 and never saturates, so the sums are exact; vpmaddwd by ones widens
// the pairs to i32. ROWS code rows (up to 4: 2 tokens) x 1 block (two registers of 8 columns).
AVX2 static inline __attribute__((always_inline)) void tile_avx2(const int8_t *a, size_t lda, const int8_t *w,
                                                                 size_t kp, const Groups *out, int col,
                                                                 const int rows) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t g = 0, s0 = 0; s0 < kp; g++, s0 += GROUP) {
    __m256i acc[4][2];
    for (int r = 0; r < rows; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (size_t s = s0; s < s0 + GROUP; s += STEP) {
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
    for (int h = 0; h < 2; h++) {
      int at = col + 8 * h;
      __m256 scale = _mm256_loadu_ps(out->scales + g * out->stride + at);
      for (int t = 0; t < rows / 2; t++) {
        __m256i sum = _mm256_add_epi32(_mm256_slli_epi32(acc[2 * t][h], 8), acc[2 * t + 1][h]);
        if (out->raw != NULL) {
          _mm256_storeu_si256((__m256i *)(out->raw + g * out->raw_group + t * out->raw_token + at), sum);
          continue;
        }
        float *target = out->acc + t * 64 + at;
        _mm256_storeu_ps(target, _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), scale, _mm256_loadu_ps(target)));
      }
    }
  }
}

AVX2 static void tile_avx2_any(const int8_t *a, size_t lda, const int8_t *w, size_t kp, const Groups *out,
                               int rows, int nb) {
  for (int b = 0; b < nb; b++) {
    const int8_t *block = w + b * BLOCK * kp;
    for (int r = 0; r < rows; r += 4) {
      Groups part = *out;
      part.acc += (r / 2) * 64;
      if (part.raw != NULL) part.raw += (size_t)(r / 2) * part.raw_token;
      if (rows - r >= 4) tile_avx2(a + r * lda, lda, block, kp, &part, b * BLOCK, 4);
      else tile_avx2(a + r * lda, lda, block, kp, &part, b * BLOCK, 2);
    }
  }
}
#endif

#if defined(__aarch64__)
// NEON with the dot-product extension (sdot, Armv8.2 and later; every Apple M-series core):
// 16 bytes of a block step are 4 columns x 4 inputs, and vdotq_s32 against the row's 4
// codes broadcast gives those 4 columns' partial sums, exactly. Up to 4 code rows x 1 block.
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

ENGRAM_TARGET_DOTPROD static void tile_sdot_any(const int8_t *a, size_t lda, const int8_t *w, size_t kp,
                                                const Groups *out, int rows, int nb) {
  for (int b = 0; b < nb; b++) {
    const int8_t *block = w + b * BLOCK * kp;
    for (int r0 = 0; r0 < rows; r0 += 4) {
      int count = rows - r0 < 4 ? rows - r0 : 4;
      for (size_t g = 0, s0 = 0; s0 < kp; g++, s0 += GROUP) {
        int32x4_t acc[4][4];
        for (int r = 0; r < 4; r++)
          for (int c = 0; c < 4; c++) acc[r][c] = vdupq_n_s32(0);
        for (size_t s = s0; s < s0 + GROUP; s += STEP) {
          int8x16_t wv[4];
          for (int c = 0; c < 4; c++) wv[c] = vld1q_s8(block + s * BLOCK + c * 16);
          for (int r = 0; r < count; r++) {
            int32_t four;
            memcpy(&four, a + (size_t)(r0 + r) * lda + s, 4);
            int8x16_t x = vreinterpretq_s8_s32(vdupq_n_s32(four));
            for (int c = 0; c < 4; c++) acc[r][c] = vdotq_s32(acc[r][c], wv[c], x);
          }
        }
        for (int t = 0; t < count / 2; t++) {
          int token = r0 / 2 + t;
          for (int c = 0; c < 4; c++) {
            int at = b * BLOCK + c * 4;
            int32x4_t sum = vaddq_s32(vshlq_n_s32(acc[2 * t][c], 8), acc[2 * t + 1][c]);
            if (out->raw != NULL) {
              vst1q_s32(out->raw + g * out->raw_group + (size_t)token * out->raw_token + at, sum);
              continue;
            }
            float *target = out->acc + token * 64 + at;
            float32x4_t scale = vld1q_f32(out->scales + g * out->stride + at);
            vst1q_f32(target, vfmaq_f32(vld1q_f32(target), vcvtq_f32_s32(sum), scale));
          }
        }
      }
    }
  }
}
#endif

static void tile_scalar(const int8_t *a, size_t lda, const int8_t *w, size_t kp, const Groups *out, int rows,
                        int nb) {
  for (int t = 0; t < rows / 2; t++)
    for (int b = 0; b < nb; b++)
      for (int c = 0; c < BLOCK; c++) {
        const int8_t *block = w + b * BLOCK * kp;
        for (size_t g = 0, s0 = 0; s0 < kp; g++, s0 += GROUP) {
          int32_t coarse = 0, fine = 0;
          for (size_t s = s0; s < s0 + GROUP; s += STEP)
            for (int i = 0; i < STEP; i++) {
              int32_t code = block[s * BLOCK + c * STEP + i];
              coarse += (int32_t)a[2 * t * lda + s + i] * code;
              fine += (int32_t)a[(2 * t + 1) * lda + s + i] * code;
            }
          accumulate_scalar(out, g, t, b * BLOCK + c, coarse * FINE + fine);
        }
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

static void tile_at(int path, const int8_t *a, size_t lda, const int8_t *w, size_t kp, const Groups *out,
                    int rows, int nb) {
#if defined(__x86_64__)
  if (path >= 2) return tile_vnni_any(a, lda, w, kp, out, rows, nb);
  if (path >= 1) return tile_avx2_any(a, lda, w, kp, out, rows, nb);
#elif defined(__aarch64__)
  if (path >= 1) return tile_sdot_any(a, lda, w, kp, out, rows, nb);
#endif
  tile_scalar(a, lda, w, kp, out, rows, nb);
}

// Columns col0..<col1 in groups of 4 blocks (64 columns, whose weights stay in cache while
// every row block passes over them), tokens in blocks of 3 (6 code rows). With `raw` (tests),
// each tile's group sums go through `scratch` (groups x TOKENS x 64) into raw.
static void qgemm(const int8_t *a, const float *row_scales, size_t m, size_t lda, const int8_t *packed,
                  const float *scales, const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1, float *c,
                  size_t ldc, int32_t *raw, int32_t *scratch, int path) {
  path = effective_path(path);
  size_t kp = engram_qgemm_padded_inputs(k), np = engram_qgemm_padded_outputs(n), groups = kp / GROUP;
  float acc[TOKENS * 64] __attribute__((aligned(64)));
  for (size_t col = col0; col < col1; col += 4 * BLOCK) {
    size_t count = col1 - col < 4 * BLOCK ? col1 - col : 4 * BLOCK;
    int nb = (int)((count + BLOCK - 1) / BLOCK);
    const int8_t *w = packed + (col / BLOCK) * BLOCK * kp;
    for (size_t row = 0; row < m; row += TOKENS) {
      int tokens = m - row < TOKENS ? (int)(m - row) : TOKENS;
      Groups out = {scales + col, sums + col, np, acc, scratch, TOKENS * 64, 64};
      if (raw == NULL) memset(acc, 0, sizeof acc);
      tile_at(path, a + 2 * row * lda, lda, w, kp, &out, 2 * tokens, nb);
      for (int r = 0; r < tokens; r++) {
        if (raw != NULL) {
          for (size_t g = 0; g < groups; g++)
            memcpy(raw + (g * m + row + r) * ldc + col, scratch + (g * TOKENS + r) * 64, count * sizeof(int32_t));
          continue;
        }
        float *target = c + (row + r) * ldc + col;
        float scale = row_scales[row + r];
        for (size_t j = 0; j < count; j++) target[j] = acc[r * 64 + j] * scale;
      }
    }
  }
}

void engram_qgemm_i32_path(const int8_t *a, size_t m, size_t lda, const int8_t *packed, const float *scales,
                           const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1, int32_t *out,
                           size_t ldo, int path) {
  int32_t *scratch = malloc(engram_qgemm_groups(k) * TOKENS * 64 * sizeof(int32_t));
  if (scratch == NULL) return;
  qgemm(a, NULL, m, lda, packed, scales, sums, n, k, col0, col1, NULL, ldo, out, scratch, path);
  free(scratch);
}

void engram_qgemm_f32_path(const int8_t *a, const float *row_scales, size_t m, size_t lda, const int8_t *packed,
                           const float *scales, const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1,
                           float *c, size_t ldc, int path) {
  qgemm(a, row_scales, m, lda, packed, scales, sums, n, k, col0, col1, c, ldc, NULL, NULL, path);
}

void engram_qgemm_f32(const int8_t *a, const float *row_scales, size_t m, size_t lda, const int8_t *packed,
                      const float *scales, const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1,
                      float *c, size_t ldc) {
  engram_qgemm_f32_path(a, row_scales, m, lda, packed, scales, sums, n, k, col0, col1, c, ldc,
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
