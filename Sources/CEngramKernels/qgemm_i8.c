// Int8 products for the embedders' linear layers.
//
// Weights: each output row quantized symmetrically (codes -127...127) in groups of 64 inputs
// (or 128: `engram_qgemm_pack_grouped`), one scale per (row, group). Activations: each row quantized with one scale s per row, in one
// int8 pass (codes c = round(x / s), x ~ s * c) or in two: the coarse codes c = round(x / (256 s))
// and the codes f of what they leave, round((x / (256 s) - c) * 256), so that x ~ s * (256 c + f),
// a 16-bit code carried by two int8 rows. The embedders choose per product (BertModel+Forward:
// two passes only where one costs parity). Per group, the exact int32 sum (dot(c, w), or
// 256 * dot(c, w) + dot(f, w)) is converted to float and multiplied by the group's weight
// scales into running float sums; after the last group the row scale and the bias are applied
// in one fused multiply-add and the result is written to C, so there is no separate pass to
// zero accumulators, scale or add the bias.
//
// Every level computes the exact integer sums, so they are equal bit for bit; the float
// epilogue is one fused multiply-add per group and one at the end (intrinsics on the SIMD
// levels, fmaf in C), so the float outputs are equal too.
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
#define GROUP 64  // inputs per weight scale (the default; 128 on request)
#define FINE 256  // the coarse codes' weight against the fine ones (a shift by 8)
#define ROWS 6    // code rows per tile: 6 tokens at one pass, 3 at two
// Loops over a tile's rows and blocks unrolled whole (clang; other compilers decide alone).
#if defined(__clang__)
#define UNROLL_FULL _Pragma("clang loop unroll(full)")
#else
#define UNROLL_FULL
#endif

// The group sizes a pack may use: 128, or else 64.
static size_t valid_group(size_t group) { return group == 128 ? 128 : GROUP; }

size_t engram_qgemm_padded_inputs_grouped(size_t k, size_t group) {
  group = valid_group(group);
  return (k + group - 1) & ~(group - 1);
}

size_t engram_qgemm_padded_inputs(size_t k) { return engram_qgemm_padded_inputs_grouped(k, GROUP); }

size_t engram_qgemm_padded_outputs(size_t n) { return (n + BLOCK - 1) & ~(size_t)(BLOCK - 1); }

size_t engram_qgemm_groups_grouped(size_t k, size_t group) {
  return engram_qgemm_padded_inputs_grouped(k, group) / valid_group(group);
}

size_t engram_qgemm_groups(size_t k) { return engram_qgemm_groups_grouped(k, GROUP); }

size_t engram_qgemm_packed_bytes_grouped(size_t n, size_t k, size_t group) {
  return engram_qgemm_padded_outputs(n) * engram_qgemm_padded_inputs_grouped(k, group);
}

size_t engram_qgemm_packed_bytes(size_t n, size_t k) { return engram_qgemm_packed_bytes_grouped(n, k, GROUP); }

static inline int8_t clamp_code(float rounded) {
  int32_t q = (int32_t)rounded;
  return (int8_t)(q > 127 ? 127 : (q < -127 ? -127 : q));
}

void engram_qgemm_pack_grouped(const float *w, size_t n, size_t k, size_t ldw, size_t group, int8_t *packed,
                               float *scales, int32_t *sums) {
  group = valid_group(group);
  size_t kp = engram_qgemm_padded_inputs_grouped(k, group), np = engram_qgemm_padded_outputs(n), groups = kp / group;
  memset(packed, 0, np * kp);
  for (size_t j = 0; j < np; j++) {
    int8_t *block = packed + (j / BLOCK) * BLOCK * kp;
    for (size_t g = 0; g < groups; g++) {
      size_t at = g * np + j, start = g * group, end = start + group < k ? start + group : k;
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

void engram_qgemm_pack(const float *w, size_t n, size_t k, size_t ldw, int8_t *packed, float *scales,
                       int32_t *sums) {
  engram_qgemm_pack_grouped(w, n, k, ldw, GROUP, packed, scales, sums);
}

// The codes of x at t = x * inverse: rint(t), then (two passes) rint((t - rint(t)) * 256);
// t - rint(t) is exact and so is the product by 256, so every level that rounds to nearest
// even agrees.
static inline void codes_of(float x, float inverse, int passes, int8_t *coarse, int8_t *fine) {
  float t = x * inverse;
  float q = __builtin_rintf(t);
  *coarse = clamp_code(q);
  if (passes == 2) *fine = clamp_code(__builtin_rintf((t - q) * (float)FINE));
}

static float row_inverse(float largest, int passes, float *scale) {
  *scale = passes == 2 ? largest / 127.0f / (float)FINE : largest / 127.0f;
  return largest > 0 ? 127.0f / largest : 0;
}

// Where a code row's zeros end: the products read a row up to k padded to its weight group (at
// most 128), so the quantizers clear no further, whatever the stride (an embedder's stride fits
// its widest input; clearing a 384-wide row up to 1536 was 15% of the quantizer's time).
static size_t padded_end(size_t k, size_t ldq) {
  size_t end = engram_qgemm_padded_inputs_grouped(k, 128);
  return end < ldq ? end : ldq;
}

// x[p] * channels[p] when `channels` is not NULL (one float multiply, as on every level).
static inline float channel_value(const float *row, const float *channels, size_t p) {
  return channels ? row[p] * channels[p] : row[p];
}

static void quantize_rows_scalar(const float *x, size_t m, size_t k, size_t ldx, const float *channels, int8_t *q,
                                 size_t ldq, float *scales, int passes) {
  for (size_t i = 0; i < m; i++) {
    const float *row = x + i * ldx;
    int8_t *coarse = q + (size_t)passes * i * ldq, *fine = coarse + ldq;
    float largest = 0;
    for (size_t p = 0; p < k; p++) largest = __builtin_fmaxf(largest, __builtin_fabsf(channel_value(row, channels, p)));
    float inverse = row_inverse(largest, passes, scales + i);
    for (size_t p = 0; p < k; p++) codes_of(channel_value(row, channels, p), inverse, passes, coarse + p, fine + p);
    for (size_t p = k, end = padded_end(k, ldq); p < end; p++) {
      coarse[p] = 0;
      if (passes == 2) fine[p] = 0;
    }
  }
}

// The sum of the squares of `k` codes (exact: at most k * 127^2, within int32 for any row the
// embedders quantize).
static int64_t code_squares_scalar(const int8_t *codes, size_t k) {
  int64_t squares = 0;
  for (size_t p = 0; p < k; p++) squares += (int32_t)codes[p] * codes[p];
  return squares;
}

// One tile's destination: the running float sums (up to ROWS tokens x 64 columns) and, after
// the last group, C; or, for tests, each group's exact int32 sums (token t, group g at
// raw + g * raw_group + t * raw_token).
typedef struct {
  const float *scales;      // the group scales of the tile's first column; group g at + g * stride
  const int32_t *sums;      // the weight code sums, the same layout
  size_t stride;
  size_t group;             // inputs per group: 64 or 128
  size_t groups;            // groups of the row: the last one writes C
  const float *row_scales;  // of the tile's first token
  const float *bias;        // of the tile's first column, or NULL
  float *acc;               // running sums, token t at + t * 64
  float *const *c;          // token t's output row at its first column: c[t]
  int count;                // the tile's columns (at most 64): C is written below it only
  int32_t *raw;
  size_t raw_group, raw_token;
} Tile;

// The portable epilogue of one column: acc = fma(sum, scale, acc) (acc 0 at the first group),
// then C = fma(acc, row scale, bias) after the last; the SIMD levels round the same way.
static inline void finish_scalar(const Tile *o, size_t g, int t, int col, int32_t sum) {
  if (o->raw != NULL) {
    o->raw[g * o->raw_group + (size_t)t * o->raw_token + col] = sum;
    return;
  }
  float *a = o->acc + t * 64 + col;
  float v = __builtin_fmaf((float)sum, o->scales[g * o->stride + col], g == 0 ? 0.0f : *a);
  if (g + 1 < o->groups) {
    *a = v;
    return;
  }
  if (col < o->count)
    o->c[t][col] = __builtin_fmaf(v, o->row_scales[t], o->bias != NULL ? o->bias[col] : 0.0f);
}

// Moves a tile's destination `tokens` tokens down (the SIMD levels that split a tile by rows).
static Tile tile_below(const Tile *o, int tokens) {
  Tile part = *o;
  part.acc += tokens * 64;
  part.row_scales += tokens;
  if (part.c != NULL) part.c += tokens;
  if (part.raw != NULL) part.raw += (size_t)tokens * part.raw_token;
  return part;
}

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define VNNI512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

// The same codes as quantize_rows_scalar: the largest magnitude is exact in any order,
// roundscale and cvtps2dq round to nearest even as rintf does, and the clamp to +-127 comes
// before the narrowing. At one pass the conversion rounds by itself (no roundscale) and the
// saturating narrowing (vpmovsdb) is the clamp above: 5 instructions for 16 codes, not 8.
// The row's 16 values at p, each times its channel's factor when `channels` is not NULL.
AVX512 static inline __m512 channel_values(const float *row, const float *channels, size_t p) {
  __m512 v = _mm512_loadu_ps(row + p);
  return channels ? _mm512_mul_ps(v, _mm512_loadu_ps(channels + p)) : v;
}

// The largest magnitude of a row (times its channels' factors), exact in any order: two chains
// of maxima, the channels' test out of the loop.
AVX512 static inline float row_largest_avx512(const float *row, size_t k, const float *channels) {
  __m512 big = _mm512_setzero_ps(), other = _mm512_setzero_ps();
  size_t p = 0;
  if (channels != NULL) {
    for (; p + 32 <= k; p += 32) {
      big = _mm512_max_ps(big, _mm512_abs_ps(_mm512_mul_ps(_mm512_loadu_ps(row + p), _mm512_loadu_ps(channels + p))));
      other = _mm512_max_ps(
          other, _mm512_abs_ps(_mm512_mul_ps(_mm512_loadu_ps(row + p + 16), _mm512_loadu_ps(channels + p + 16))));
    }
  } else {
    for (; p + 32 <= k; p += 32) {
      big = _mm512_max_ps(big, _mm512_abs_ps(_mm512_loadu_ps(row + p)));
      other = _mm512_max_ps(other, _mm512_abs_ps(_mm512_loadu_ps(row + p + 16)));
    }
  }
  for (; p + 16 <= k; p += 16) big = _mm512_max_ps(big, _mm512_abs_ps(channel_values(row, channels, p)));
  float largest = _mm512_reduce_max_ps(_mm512_max_ps(big, other));
  for (; p < k; p++) largest = __builtin_fmaxf(largest, __builtin_fabsf(channel_value(row, channels, p)));
  return largest;
}

AVX512 static void quantize_rows_avx512(const float *x, size_t m, size_t k, size_t ldx, const float *channels,
                                        int8_t *q, size_t ldq, float *scales, int passes) {
  const __m512i high = _mm512_set1_epi32(127), low = _mm512_set1_epi32(-127);
  const __m512 fine_weight = _mm512_set1_ps((float)FINE);
  for (size_t i = 0; i < m; i++) {
    const float *row = x + i * ldx;
    int8_t *coarse = q + (size_t)passes * i * ldq, *fine = coarse + ldq;
    float largest = row_largest_avx512(row, k, channels);
    float inverse = row_inverse(largest, passes, scales + i);
    const __m512 scale = _mm512_set1_ps(inverse);
    size_t p = 0;
    if (passes == 1) {
      for (; p + 16 <= k; p += 16) {
        __m512i c = _mm512_cvtps_epi32(_mm512_mul_ps(channel_values(row, channels, p), scale));
        _mm_storeu_si128((__m128i *)(coarse + p), _mm512_cvtsepi32_epi8(_mm512_max_epi32(c, low)));
      }
    } else {
      for (; p + 16 <= k; p += 16) {
        __m512 t = _mm512_mul_ps(channel_values(row, channels, p), scale);
        __m512 rounded = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m512i c = _mm512_max_epi32(_mm512_min_epi32(_mm512_cvtps_epi32(rounded), high), low);
        _mm_storeu_si128((__m128i *)(coarse + p), _mm512_cvtepi32_epi8(c));
        __m512i f = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_sub_ps(t, rounded), fine_weight));
        f = _mm512_max_epi32(_mm512_min_epi32(f, high), low);
        _mm_storeu_si128((__m128i *)(fine + p), _mm512_cvtepi32_epi8(f));
      }
    }
    for (; p < k; p++) codes_of(channel_value(row, channels, p), inverse, passes, coarse + p, fine + p);
    for (size_t end = padded_end(k, ldq); p < end; p++) {
      coarse[p] = 0;
      if (passes == 2) fine[p] = 0;
    }
  }
}

// One row at one pass, as quantize_rows_avx512 writes it, returning the sum of its codes'
// squares (code_squares of the row) for the crest test of engram_quantize_rows_mixed: 64
// codes a step narrowed in registers by two saturating packs (the same clamp as vpmovsdb:
// -127 first, then 127 by saturation) and put in order by one permutation, and their squares
// summed from those bytes (|c| * |c| in pairs, then in fours) instead of a second pass over the
// stored codes. The same codes and the same exact integer as the two passes.
AVX512 static int64_t quantize_row_measured_avx512(const float *row, size_t k, const float *channels, int8_t *coarse,
                                                   size_t ldq, float *scale_out) {
  float largest = row_largest_avx512(row, k, channels);
  float inverse = row_inverse(largest, 1, scale_out);
  const __m512 scale = _mm512_set1_ps(inverse);
  const __m512i low = _mm512_set1_epi32(-127), ones = _mm512_set1_epi16(1);
  // The packs work within 128-bit lanes: dword 4L + v of the packed bytes holds vector v's
  // codes 4L..4L+3 (the row's codes 16v + 4L...), which belong at dword 4v + L.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m512i squares = _mm512_setzero_si512();
  size_t p = 0;
  for (; p + 64 <= k; p += 64) {
    __m512i c0 = _mm512_max_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(channel_values(row, channels, p), scale)), low);
    __m512i c1 = _mm512_max_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(channel_values(row, channels, p + 16), scale)), low);
    __m512i c2 = _mm512_max_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(channel_values(row, channels, p + 32), scale)), low);
    __m512i c3 = _mm512_max_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(channel_values(row, channels, p + 48), scale)), low);
    __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(c0, c1), _mm512_packs_epi32(c2, c3));
    _mm512_storeu_si512(coarse + p, _mm512_permutexvar_epi32(order, bytes));
    __m512i magnitude = _mm512_abs_epi8(bytes);  // at most 127: pairs of squares fit int16
    squares = _mm512_add_epi32(squares, _mm512_madd_epi16(_mm512_maddubs_epi16(magnitude, magnitude), ones));
  }
  size_t measured = p;
  for (; p + 16 <= k; p += 16) {
    __m512i c = _mm512_cvtps_epi32(_mm512_mul_ps(channel_values(row, channels, p), scale));
    _mm_storeu_si128((__m128i *)(coarse + p), _mm512_cvtsepi32_epi8(_mm512_max_epi32(c, low)));
  }
  for (; p < k; p++) codes_of(channel_value(row, channels, p), inverse, 1, coarse + p, NULL);
  for (size_t end = padded_end(k, ldq); p < end; p++) coarse[p] = 0;
  return (int64_t)_mm512_reduce_add_epi32(squares) + code_squares_scalar(coarse + measured, k - measured);
}

// AVX-512 VNNI: vpdpbusd multiplies unsigned by signed bytes, so each activation code a is
// biased to a + 128 (an XOR with 0x80); per group, 128 * (the column's code sum) times 1 (one
// pass) or 256 + 1 (two) comes off the sum, exactly in int32 (the sums start from it). `rows` code rows
// (rows / passes tokens) x `nb` blocks of 16 columns, all accumulators in registers (6 x 4 =
// 24 of the 32). (Biasing a tile's codes into a copy before its loop, so that they are
// broadcast straight from memory, made the product 5-8% faster in a C benchmark, but in an
// ingest the copy itself took 10% of the samples, more than it saved.)
VNNI512 static inline __attribute__((always_inline)) void tile_vnni(const int8_t *a, size_t lda, const int8_t *w,
                                                                    size_t kp, const Tile *o, const int rows,
                                                                    const int nb, const int passes) {
  const __m512i bias = _mm512_set1_epi32((int32_t)0x80808080u);
  const __m512 zero = _mm512_setzero_ps();
  const int tokens = rows / passes;
  // The group's sums leave the registers through `dump`: with the epilogue reading `acc`
  // itself, clang kept acc in memory between groups and zeroed it with a call to memset per
  // group (6% of an int8 ingest's samples).
  __m512i dump[6][4];
  const size_t group = o->group;
  for (size_t g = 0, s0 = 0; s0 < kp; g++, s0 += group) {
    // Each sum starts at minus 128 times its column's code sum (the bias of the codes), so the
    // epilogue subtracts nothing: at two passes 256 * (coarse - 128 s) + (fine - 128 s) is the
    // same integer as 256 * coarse + fine - 128 * 257 * s.
    __m512i acc[6][4], start[4];
UNROLL_FULL
    for (int b = 0; b < nb; b++)
      start[b] = _mm512_sub_epi32(_mm512_setzero_si512(),
                                  _mm512_slli_epi32(_mm512_loadu_si512(o->sums + g * o->stride + b * BLOCK), 7));
UNROLL_FULL
    for (int r = 0; r < rows; r++)
UNROLL_FULL
      for (int b = 0; b < nb; b++) acc[r][b] = start[b];
    for (size_t s = s0; s < s0 + group; s += STEP) {
      __m512i wv[4];
UNROLL_FULL
      for (int b = 0; b < nb; b++) wv[b] = _mm512_loadu_si512(w + b * BLOCK * kp + s * BLOCK);
UNROLL_FULL
      for (int r = 0; r < rows; r++) {
        int32_t four;
        memcpy(&four, a + r * lda + s, 4);
        __m512i u = _mm512_xor_si512(_mm512_set1_epi32(four), bias);
UNROLL_FULL
        for (int b = 0; b < nb; b++) acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], u, wv[b]);
      }
    }
UNROLL_FULL
    for (int r = 0; r < rows; r++)
UNROLL_FULL
      for (int b = 0; b < nb; b++) _mm512_store_si512(&dump[r][b], acc[r][b]);
    // Three loops, each unrolled over the tile's tokens, rather than one testing per token
    // whether it writes raw sums, running sums or C (the same operations in the same order).
    int last = g + 1 == o->groups;
UNROLL_FULL
    for (int b = 0; b < nb; b++) {
      __m512i sum[6];
UNROLL_FULL
      for (int t = 0; t < tokens; t++)
        sum[t] = passes == 2 ? _mm512_add_epi32(_mm512_slli_epi32(dump[2 * t][b], 8), dump[2 * t + 1][b]) : dump[t][b];
      if (o->raw != NULL) {
        for (int t = 0; t < tokens; t++)
          _mm512_storeu_si512(o->raw + g * o->raw_group + t * o->raw_token + b * BLOCK, sum[t]);
        continue;
      }
      __m512 scale = _mm512_loadu_ps(o->scales + g * o->stride + b * BLOCK);
      float *running = o->acc + b * BLOCK;
      if (!last) {
UNROLL_FULL
        for (int t = 0; t < tokens; t++)
          _mm512_storeu_ps(running + t * 64, _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[t]), scale,
                                                             g == 0 ? zero : _mm512_loadu_ps(running + t * 64)));
        continue;
      }
      int left = o->count - b * BLOCK;
      __mmask16 mask = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
      __m512 add = o->bias != NULL ? _mm512_maskz_loadu_ps(mask, o->bias + b * BLOCK) : zero;
UNROLL_FULL
      for (int t = 0; t < tokens; t++) {
        __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[t]), scale, g == 0 ? zero : _mm512_loadu_ps(running + t * 64));
        _mm512_mask_storeu_ps(o->c[t] + b * BLOCK, mask, _mm512_fmadd_ps(v, _mm512_set1_ps(o->row_scales[t]), add));
      }
    }
  }
}

// CALL(NB, R, P) with the tile's blocks of 16 columns, nb, as a constant (1 to 4), in a switch.
#define VNNI_SWITCH_NB(CALL, R, P) \
  switch (nb) {                    \
  case 1: CALL(1, R, P)            \
  case 2: CALL(2, R, P)            \
  case 3: CALL(3, R, P)            \
  default: CALL(4, R, P)           \
  }

VNNI512 static void tile_vnni_any(const int8_t *a, size_t lda, const int8_t *w, size_t kp, const Tile *o,
                                  int rows, int nb, int passes) {
#define VNNI_TILE(NB, R, P)              \
  tile_vnni(a, lda, w, kp, o, R, NB, P); \
  return;
#define VNNI_NB(R, P) VNNI_SWITCH_NB(VNNI_TILE, R, P)
  if (passes == 2) {
    switch (rows) {
    case 2: VNNI_NB(2, 2)
    case 4: VNNI_NB(4, 2)
    default: VNNI_NB(6, 2)
    }
  }
  switch (rows) {
  case 1: VNNI_NB(1, 1)
  case 2: VNNI_NB(2, 1)
  case 3: VNNI_NB(3, 1)
  case 4: VNNI_NB(4, 1)
  case 5: VNNI_NB(5, 1)
  default: VNNI_NB(6, 1)
  }
#undef VNNI_NB
#undef VNNI_TILE
}

// The full row blocks of one column block (`rows` code rows each), from `row` on, in one call:
// the tile is instantiated once for the column block rather than dispatched per row block (the
// call, its switch and the tile's set-up were 3% of an ingest's samples). Returns the first row
// not done.
VNNI512 static size_t tiles_vnni(const int8_t *a, size_t lda, const int8_t *w, size_t kp, Tile *o, size_t m,
                                 const int32_t *map, float *c, size_t ldc, size_t col, const float *row_scales,
                                 int nb, int passes) {
  const size_t per_tile = ROWS / (size_t)passes;
  float *targets[ROWS];
  o->c = targets;
  size_t row = 0;
// The targets in two loops, one per case: as one loop clang vectorized the choice into a load
// of `map` masked off when it is NULL, and a masked load from near address 0 takes a slow
// fault-suppression path (2% of the tile's samples in an ingest, 13% in a C benchmark).
#define VNNI_ROWS(NB, R, P)                                                          \
  for (; row + per_tile <= m; row += per_tile) {                                     \
    if (map != NULL)                                                                 \
      for (size_t t = 0; t < per_tile; t++) targets[t] = c + (size_t)map[row + t] * ldc + col; \
    else                                                                             \
      for (size_t t = 0; t < per_tile; t++) targets[t] = c + (row + t) * ldc + col;  \
    o->row_scales = row_scales + row;                                                \
    tile_vnni(a + (size_t)passes * row * lda, lda, w, kp, o, R, NB, P);              \
  }                                                                                  \
  return row;
  if (passes == 2) VNNI_SWITCH_NB(VNNI_ROWS, ROWS, 2)
  VNNI_SWITCH_NB(VNNI_ROWS, ROWS, 1)
#undef VNNI_ROWS
}
#undef VNNI_SWITCH_NB

// AVX2: vpmaddubsw takes unsigned x signed bytes into saturating i16 pairs. With |a| as the
// unsigned side and the weights given a's sign (vpsignb), each pair is at most
// 2 * 127 * 127 = 32258 and never saturates, so the sums are exact; vpmaddwd by ones widens
// the pairs to i32. `rows` code rows (up to 4) x 1 block (two registers of 8 columns).
AVX2 static inline __attribute__((always_inline)) void tile_avx2(const int8_t *a, size_t lda, const int8_t *w,
                                                                 size_t kp, const Tile *o, int col, const int rows,
                                                                 const int passes) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 zero = _mm256_setzero_ps();
  const int tokens = rows / passes;
  const size_t group = o->group;
  for (size_t g = 0, s0 = 0; s0 < kp; g++, s0 += group) {
    __m256i acc[4][2];
    for (int r = 0; r < rows; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (size_t s = s0; s < s0 + group; s += STEP) {
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
    int last = g + 1 == o->groups;
    for (int h = 0; h < 2; h++) {
      int at = col + 8 * h;
      if (at >= o->count && o->raw == NULL && last) continue;
      __m256 scale = _mm256_loadu_ps(o->scales + g * o->stride + at);
      __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(o->count - at), lanes);
      __m256 add = o->bias != NULL && last ? _mm256_maskload_ps(o->bias + at, mask) : zero;
      for (int t = 0; t < tokens; t++) {
        __m256i sum = passes == 2 ? _mm256_add_epi32(_mm256_slli_epi32(acc[2 * t][h], 8), acc[2 * t + 1][h])
                                  : acc[t][h];
        if (o->raw != NULL) {
          _mm256_storeu_si256((__m256i *)(o->raw + g * o->raw_group + t * o->raw_token + at), sum);
          continue;
        }
        float *running = o->acc + t * 64 + at;
        __m256 v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), scale, g == 0 ? zero : _mm256_loadu_ps(running));
        if (!last) {
          _mm256_storeu_ps(running, v);
          continue;
        }
        _mm256_maskstore_ps(o->c[t] + at, mask,
                            _mm256_fmadd_ps(v, _mm256_set1_ps(o->row_scales[t]), add));
      }
    }
  }
}

AVX2 static void tile_avx2_any(const int8_t *a, size_t lda, const int8_t *w, size_t kp, const Tile *o, int rows,
                               int nb, int passes) {
  for (int b = 0; b < nb; b++) {
    const int8_t *block = w + b * BLOCK * kp;
    for (int r = 0; r < rows; r += 4) {
      Tile part = tile_below(o, r / passes);
      int count = rows - r < 4 ? rows - r : 4;
      if (passes == 2) {
        if (count == 4) tile_avx2(a + r * lda, lda, block, kp, &part, b * BLOCK, 4, 2);
        else tile_avx2(a + r * lda, lda, block, kp, &part, b * BLOCK, 2, 2);
        continue;
      }
      switch (count) {
      case 1: tile_avx2(a + r * lda, lda, block, kp, &part, b * BLOCK, 1, 1); break;
      case 2: tile_avx2(a + r * lda, lda, block, kp, &part, b * BLOCK, 2, 1); break;
      case 3: tile_avx2(a + r * lda, lda, block, kp, &part, b * BLOCK, 3, 1); break;
      default: tile_avx2(a + r * lda, lda, block, kp, &part, b * BLOCK, 4, 1); break;
      }
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
                                                const Tile *o, int rows, int nb, int passes) {
  for (int b = 0; b < nb; b++) {
    const int8_t *block = w + b * BLOCK * kp;
    for (int r0 = 0; r0 < rows; r0 += 4) {
      int count = rows - r0 < 4 ? rows - r0 : 4;
      Tile part = tile_below(o, r0 / passes);
      for (size_t g = 0, s0 = 0; s0 < kp; g++, s0 += part.group) {
        int32x4_t acc[4][4];
        for (int r = 0; r < 4; r++)
          for (int c = 0; c < 4; c++) acc[r][c] = vdupq_n_s32(0);
        for (size_t s = s0; s < s0 + part.group; s += STEP) {
          int8x16_t wv[4];
          for (int c = 0; c < 4; c++) wv[c] = vld1q_s8(block + s * BLOCK + c * 16);
          for (int r = 0; r < count; r++) {
            int32_t four;
            memcpy(&four, a + (size_t)(r0 + r) * lda + s, 4);
            int8x16_t x = vreinterpretq_s8_s32(vdupq_n_s32(four));
            for (int c = 0; c < 4; c++) acc[r][c] = vdotq_s32(acc[r][c], wv[c], x);
          }
        }
        int last = g + 1 == part.groups;
        for (int t = 0; t < count / passes; t++) {
          for (int c = 0; c < 4; c++) {
            int at = b * BLOCK + c * 4;
            int32x4_t sum = passes == 2 ? vaddq_s32(vshlq_n_s32(acc[2 * t][c], 8), acc[2 * t + 1][c]) : acc[t][c];
            if (part.raw != NULL) {
              vst1q_s32(part.raw + g * part.raw_group + (size_t)t * part.raw_token + at, sum);
              continue;
            }
            float *running = part.acc + t * 64 + at;
            float32x4_t scale = vld1q_f32(part.scales + g * part.stride + at);
            float32x4_t v = vfmaq_f32(g == 0 ? vdupq_n_f32(0) : vld1q_f32(running), vcvtq_f32_s32(sum), scale);
            if (!last) {
              vst1q_f32(running, v);
              continue;
            }
            float lanes[4], add[4] = {0, 0, 0, 0};
            int left = part.count - at;
            if (left <= 0) continue;
            if (left > 4) left = 4;
            if (part.bias != NULL) memcpy(add, part.bias + at, (size_t)left * sizeof(float));
            vst1q_f32(lanes, vfmaq_f32(vld1q_f32(add), v, vdupq_n_f32(part.row_scales[t])));
            memcpy(part.c[t] + at, lanes, (size_t)left * sizeof(float));
          }
        }
      }
    }
  }
}
#endif

static void tile_scalar(const int8_t *a, size_t lda, const int8_t *w, size_t kp, const Tile *o, int rows, int nb,
                        int passes) {
  for (int t = 0; t < rows / passes; t++)
    for (int b = 0; b < nb; b++)
      for (int c = 0; c < BLOCK; c++) {
        const int8_t *block = w + b * BLOCK * kp;
        const int8_t *coarse_row = a + (size_t)passes * t * lda, *fine_row = coarse_row + lda;
        for (size_t g = 0, s0 = 0; s0 < kp; g++, s0 += o->group) {
          int32_t coarse = 0, fine = 0;
          for (size_t s = s0; s < s0 + o->group; s += STEP)
            for (int i = 0; i < STEP; i++) {
              int32_t code = block[s * BLOCK + c * STEP + i];
              coarse += (int32_t)coarse_row[s + i] * code;
              if (passes == 2) fine += (int32_t)fine_row[s + i] * code;
            }
          finish_scalar(o, g, t, b * BLOCK + c, passes == 2 ? coarse * FINE + fine : coarse);
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

static void tile_at(int path, const int8_t *a, size_t lda, const int8_t *w, size_t kp, const Tile *o, int rows,
                    int nb, int passes) {
#if defined(__x86_64__)
  if (path >= 2) return tile_vnni_any(a, lda, w, kp, o, rows, nb, passes);
  if (path >= 1) return tile_avx2_any(a, lda, w, kp, o, rows, nb, passes);
#elif defined(__aarch64__)
  if (path >= 1) return tile_sdot_any(a, lda, w, kp, o, rows, nb, passes);
#endif
  tile_scalar(a, lda, w, kp, o, rows, nb, passes);
}

// Columns col0..<col1 in groups of 4 blocks (64 columns, whose weights stay in cache while
// every row block passes over them), tokens in blocks of ROWS / passes. With `raw` (tests),
// each tile's group sums go through `scratch` (groups x ROWS x 64) into raw.
static void qgemm(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes, const int32_t *rows,
                  const int8_t *packed, size_t group, const float *scales, const int32_t *sums, size_t n, size_t k,
                  size_t col0, size_t col1, const float *bias, float *c, size_t ldc, int32_t *raw, int32_t *scratch,
                  int path) {
  path = effective_path(path);
  passes = passes == 2 ? 2 : 1;
  group = valid_group(group);
  size_t kp = engram_qgemm_padded_inputs_grouped(k, group), np = engram_qgemm_padded_outputs(n), groups = kp / group;
  size_t per_tile = ROWS / (size_t)passes;
  float acc[ROWS * 64] __attribute__((aligned(64)));
  float *targets[ROWS];
  for (size_t col = col0; col < col1; col += 4 * BLOCK) {
    size_t count = col1 - col < 4 * BLOCK ? col1 - col : 4 * BLOCK;
    int nb = (int)((count + BLOCK - 1) / BLOCK);
    const int8_t *w = packed + (col / BLOCK) * BLOCK * kp;
    size_t row = 0;
#if defined(__x86_64__)
    if (path >= 2 && raw == NULL && c != NULL) {
      Tile out = {scales + col, sums + col, np, group, groups, NULL, bias != NULL ? bias + col : NULL, acc, NULL,
                  (int)count, NULL, 0, 0};
      row = tiles_vnni(a, lda, w, kp, &out, m, rows, c, ldc, col, row_scales, nb, passes);
    }
#endif
    for (; row < m; row += per_tile) {
      int tokens = m - row < per_tile ? (int)(m - row) : (int)per_tile;
      if (c != NULL && rows != NULL)  // two loops: see VNNI_ROWS
        for (int t = 0; t < tokens; t++) targets[t] = c + (size_t)rows[row + t] * ldc + col;
      else if (c != NULL)
        for (int t = 0; t < tokens; t++) targets[t] = c + (row + t) * ldc + col;
      Tile out = {scales + col,
                  sums + col,
                  np,
                  group,
                  groups,
                  raw == NULL ? row_scales + row : NULL,
                  bias != NULL ? bias + col : NULL,
                  acc,
                  c != NULL ? targets : NULL,
                  (int)count,
                  scratch,
                  ROWS * 64,
                  64};
      tile_at(path, a + (size_t)passes * row * lda, lda, w, kp, &out, passes * tokens, nb, passes);
      if (raw == NULL) continue;
      for (int r = 0; r < tokens; r++)
        for (size_t g = 0; g < groups; g++)
          memcpy(raw + (g * m + row + r) * ldc + col, scratch + (g * ROWS + r) * 64, count * sizeof(int32_t));
    }
  }
}

void engram_qgemm_i32_grouped_path(const int8_t *a, size_t m, size_t lda, int passes, const int8_t *packed,
                                   size_t group, const float *scales, const int32_t *sums, size_t n, size_t k,
                                   size_t col0, size_t col1, int32_t *out, size_t ldo, int path) {
  int32_t *scratch = malloc(engram_qgemm_groups_grouped(k, group) * ROWS * 64 * sizeof(int32_t));
  if (scratch == NULL) return;
  qgemm(a, NULL, m, lda, passes, NULL, packed, group, scales, sums, n, k, col0, col1, NULL, NULL, ldo, out, scratch,
        path);
  free(scratch);
}

void engram_qgemm_i32_path(const int8_t *a, size_t m, size_t lda, int passes, const int8_t *packed,
                           const float *scales, const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1,
                           int32_t *out, size_t ldo, int path) {
  engram_qgemm_i32_grouped_path(a, m, lda, passes, packed, GROUP, scales, sums, n, k, col0, col1, out, ldo, path);
}

void engram_qgemm_f32_grouped_path(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes,
                                   const int32_t *rows, const int8_t *packed, size_t group, const float *scales,
                                   const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1,
                                   const float *bias, float *c, size_t ldc, int path) {
  qgemm(a, row_scales, m, lda, passes, rows, packed, group, scales, sums, n, k, col0, col1, bias, c, ldc, NULL, NULL,
        path);
}

void engram_qgemm_f32_grouped(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes,
                              const int32_t *rows, const int8_t *packed, size_t group, const float *scales,
                              const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1, const float *bias,
                              float *c, size_t ldc) {
  engram_qgemm_f32_grouped_path(a, row_scales, m, lda, passes, rows, packed, group, scales, sums, n, k, col0, col1,
                                bias, c, ldc, ENGRAM_LEVEL_AVX512);
}

void engram_qgemm_f32_path(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes,
                           const int32_t *rows, const int8_t *packed, const float *scales, const int32_t *sums,
                           size_t n, size_t k, size_t col0, size_t col1, const float *bias, float *c, size_t ldc,
                           int path) {
  engram_qgemm_f32_grouped_path(a, row_scales, m, lda, passes, rows, packed, GROUP, scales, sums, n, k, col0, col1,
                                bias, c, ldc, path);
}

void engram_qgemm_f32(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes,
                      const int32_t *rows, const int8_t *packed, const float *scales, const int32_t *sums, size_t n,
                      size_t k, size_t col0, size_t col1, const float *bias, float *c, size_t ldc) {
  engram_qgemm_f32_path(a, row_scales, m, lda, passes, rows, packed, scales, sums, n, k, col0, col1, bias, c, ldc,
                        ENGRAM_LEVEL_AVX512);
}

static void quantize_rows_at(const float *x, size_t m, size_t k, size_t ldx, const float *channels, int passes,
                             int8_t *q, size_t ldq, float *scales, int path) {
  int level = engram_level_cached();
  path = path < level ? path : level;
  passes = passes == 2 ? 2 : 1;
#if defined(__x86_64__)
  if (path >= 2) return quantize_rows_avx512(x, m, k, ldx, channels, q, ldq, scales, passes);
#endif
  quantize_rows_scalar(x, m, k, ldx, channels, q, ldq, scales, passes);
}

void engram_quantize_rows_path(const float *x, size_t m, size_t k, size_t ldx, int passes, int8_t *q, size_t ldq,
                               float *scales, int path) {
  quantize_rows_at(x, m, k, ldx, NULL, passes, q, ldq, scales, path);
}

void engram_quantize_rows(const float *x, size_t m, size_t k, size_t ldx, int passes, int8_t *q, size_t ldq,
                          float *scales) {
  engram_quantize_rows_path(x, m, k, ldx, passes, q, ldq, scales, ENGRAM_LEVEL_AVX512);
}


#if defined(__x86_64__)
AVX512 static int64_t code_squares_avx512(const int8_t *codes, size_t k) {
  __m512i sum = _mm512_setzero_si512();
  size_t p = 0;
  for (; p + 32 <= k; p += 32) {
    __m512i wide = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(codes + p)));
    sum = _mm512_add_epi32(sum, _mm512_madd_epi16(wide, wide));
  }
  return (int64_t)_mm512_reduce_add_epi32(sum) + code_squares_scalar(codes + p, k - p);
}
#endif

static int64_t code_squares(const int8_t *codes, size_t k, int path) {
#if defined(__x86_64__)
  if (path >= 2 && k <= (size_t)1 << 16) return code_squares_avx512(codes, k);
#endif
  (void)path;
  return code_squares_scalar(codes, k);
}

// Quantizes each row at one pass into its place and measures it on its own codes (exact
// integers, so every level decides alike); a row whose crest factor 127 / rms(codes) exceeds
// its `crest` is quantized again at two passes, into the code rows counted from the end.
size_t engram_quantize_rows_mixed_path(const float *x, size_t m, size_t k, size_t ldx, const float *channels,
                                       const float *crest, int8_t *q, size_t ldq, float *scales, int32_t *order,
                                       int path) {
  size_t single = 0, twice = 0;
  int level = engram_level_cached();
  path = path < level ? path : level;
  for (size_t i = 0; i < m; i++) {
    double limit = (double)crest[i] * (double)crest[i];
    int8_t *codes = q + single * ldq;
    float scale;
    int64_t squares;
#if defined(__x86_64__)
    if (path >= 2 && k <= (size_t)1 << 16) {
      squares = quantize_row_measured_avx512(x + i * ldx, k, channels, codes, ldq, &scale);
    } else
#endif
    {
      quantize_rows_at(x + i * ldx, 1, k, ldx, channels, 1, codes, ldq, &scale, path);
      squares = code_squares(codes, k, path);
    }
    if ((double)(127 * 127) * (double)k > limit * (double)squares) {
      size_t at = m - 1 - twice++;
      quantize_rows_at(x + i * ldx, 1, k, ldx, channels, 2, q + 2 * at * ldq, ldq, scales + at, path);
      order[at] = (int32_t)i;
      continue;
    }
    scales[single] = scale;
    order[single++] = (int32_t)i;
  }
  return single;
}

size_t engram_quantize_rows_mixed(const float *x, size_t m, size_t k, size_t ldx, const float *channels,
                                  const float *crest, int8_t *q, size_t ldq, float *scales, int32_t *order) {
  return engram_quantize_rows_mixed_path(x, m, k, ldx, channels, crest, q, ldq, scales, order, ENGRAM_LEVEL_AVX512);
}
