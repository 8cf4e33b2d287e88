#include "dispatch.h"
#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// The transformer's element-wise steps: bias + GELU, softmax, residual + LayerNorm. They are
// in C rather than Swift because an unoptimized (debug) build of Swift SIMD code runs some
// 50x slower than the release build, where C at -O0 loses a few times at most; and so that
// every level gets the same care as the products around them.
//
// Every level evaluates the same formulas: e^x by Cody-Waite range reduction and the Cephes
// expf polynomial (about 1 ulp), erf by Eigen's rational approximation (absolute error below
// 5e-7), both without libm so they vectorize. Levels differ only in fused multiply-adds and
// in the order of the row sums (lanes), within the bounds in the tests.

enum { EXP_COEFFICIENTS = 6, ERF_P = 7, ERF_Q = 5 };
static const float EXP_P[EXP_COEFFICIENTS] = {1.98756915e-4f, 1.39819995e-3f, 8.33345190e-3f,
                                              4.16657959e-2f, 1.66666655e-1f, 5.00000012e-1f};
static const float ERF_NUMERATOR[ERF_P] = {-2.72614225e-10f, 2.77068142e-08f, -2.10102402e-06f,
                                           -5.69250639e-05f, -7.34990630e-04f, -2.95459980e-03f,
                                           -1.60960333e-02f};
static const float ERF_DENOMINATOR[ERF_Q] = {-1.45660718e-05f, -2.13374055e-04f, -1.68282697e-03f,
                                             -7.37332917e-03f, -1.42647390e-02f};
#define EXP_LOW (-87.33654f)
#define EXP_HIGH 88.72283f
#define LOG2E 1.44269504f
#define LN2_HIGH 0.693359375f
#define LN2_LOW (-2.12194440e-4f)
#define MAGIC 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer in the low bits */
#define INV_SQRT2 0.70710678118654752f

#if defined(__x86_64__)
// The constants broadcast to 16 lanes, so a vector constant is one aligned load even in an
// unoptimized build (where `_mm512_set1_ps` builds the vector lane by lane).
enum {
  K_EXP_LOW, K_EXP_HIGH, K_MAGIC, K_LOG2E, K_LN2_HIGH, K_LN2_LOW, K_ONE, K_HALF, K_ERF_LOW, K_ERF_HIGH,
  K_INV_SQRT2, K_EXP_P, K_ERF_NUMERATOR = K_EXP_P + EXP_COEFFICIENTS, K_ERF_DENOMINATOR = K_ERF_NUMERATOR + ERF_P,
  K_COUNT = K_ERF_DENOMINATOR + ERF_Q
};
#define X16(v) {v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v}
static const float BROADCAST[K_COUNT][16] __attribute__((aligned(64))) = {
    X16(EXP_LOW), X16(EXP_HIGH), X16(MAGIC), X16(LOG2E), X16(LN2_HIGH), X16(LN2_LOW), X16(1.0f), X16(0.5f),
    X16(-4.0f), X16(4.0f), X16(INV_SQRT2),
    X16(1.98756915e-4f), X16(1.39819995e-3f), X16(8.33345190e-3f), X16(4.16657959e-2f), X16(1.66666655e-1f),
    X16(5.00000012e-1f),
    X16(-2.72614225e-10f), X16(2.77068142e-08f), X16(-2.10102402e-06f), X16(-5.69250639e-05f),
    X16(-7.34990630e-04f), X16(-2.95459980e-03f), X16(-1.60960333e-02f),
    X16(-1.45660718e-05f), X16(-2.13374055e-04f), X16(-1.68282697e-03f), X16(-7.37332917e-03f),
    X16(-1.42647390e-02f)};
static const int32_t EXPONENT_BIAS[16] __attribute__((aligned(64))) = X16(127);
#endif

static inline __attribute__((always_inline)) float exp_scalar(float x) {
  x = x < EXP_LOW ? EXP_LOW : (x > EXP_HIGH ? EXP_HIGH : x);
  float shifted = x * LOG2E + MAGIC;
  float n = shifted - MAGIC;
  float r = x - n * LN2_HIGH - n * LN2_LOW;
  float p = EXP_P[0];
  for (int i = 1; i < EXP_COEFFICIENTS; i++) p = p * r + EXP_P[i];
  float y = p * r * r + r + 1.0f;
  int32_t bits, magic_bits;
  __builtin_memcpy(&bits, &shifted, 4);
  const float magic = MAGIC;
  __builtin_memcpy(&magic_bits, &magic, 4);
  int32_t scale_bits = (bits - magic_bits + 127) << 23;
  float scale;
  __builtin_memcpy(&scale, &scale_bits, 4);
  return y * scale;
}

static inline __attribute__((always_inline)) float erf_scalar(float x) {
  x = x < -4.0f ? -4.0f : (x > 4.0f ? 4.0f : x);
  float x2 = x * x;
  float p = ERF_NUMERATOR[0];
  for (int i = 1; i < ERF_P; i++) p = p * x2 + ERF_NUMERATOR[i];
  p = p * x;
  float q = ERF_DENOMINATOR[0];
  for (int i = 1; i < ERF_Q; i++) q = q * x2 + ERF_DENOMINATOR[i];
  return p / q;
}

float engram_exp_approx(float x) { return exp_scalar(x); }
float engram_erf_approx(float x) { return erf_scalar(x); }

// ---- portable C -------------------------------------------------------------------------

static void bias_gelu_scalar(float *x, size_t rows, size_t n, size_t ld, const float *bias, int gelu) {
  for (size_t r = 0; r < rows; r++) {
    float *row = x + r * ld;
    if (gelu) {
      for (size_t j = 0; j < n; j++) {
        float v = row[j] + bias[j];
        row[j] = 0.5f * v * (1.0f + erf_scalar(v * INV_SQRT2));
      }
    } else {
      for (size_t j = 0; j < n; j++) row[j] += bias[j];
    }
  }
}

static void softmax_scalar(float *x, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; r++) {
    float *row = x + r * n;
    float maximum = -INFINITY;
    for (size_t j = 0; j < n; j++) maximum = row[j] > maximum ? row[j] : maximum;
    float sum = 0;
    for (size_t j = 0; j < n; j++) {
      float e = exp_scalar(row[j] - maximum);
      row[j] = e;
      sum += e;
    }
    float inverse = 1.0f / sum;
    for (size_t j = 0; j < n; j++) row[j] *= inverse;
  }
}

// One head's attention for rows of `d` floats `ld` apart: out[i] = softmax(scale · q[i] · kᵀ) · v,
// the softmax left unnormalized until the end (Σ e_j v_j / Σ e_j). `scratch` holds n floats.
static void attention_head_scalar(const float *q, const float *k, const float *v, float *out, size_t n, size_t d,
                                  size_t ld, float scale, float *scratch) {
  for (size_t i = 0; i < n; i++) {
    float maximum = -INFINITY;
    for (size_t j = 0; j < n; j++) {
      float dot = 0;
      for (size_t p = 0; p < d; p++) dot += q[i * ld + p] * k[j * ld + p];
      scratch[j] = dot * scale;
      maximum = scratch[j] > maximum ? scratch[j] : maximum;
    }
    float sum = 0;
    for (size_t j = 0; j < n; j++) {
      scratch[j] = exp_scalar(scratch[j] - maximum);
      sum += scratch[j];
    }
    float inverse = 1.0f / sum;
    for (size_t p = 0; p < d; p++) {
      float total = 0;
      for (size_t j = 0; j < n; j++) total += scratch[j] * v[j * ld + p];
      out[i * ld + p] = total * inverse;
    }
  }
}

static void add_layer_norm_scalar(const float *a, const float *b, float *out, size_t rows, size_t width,
                                  const float *gamma, const float *beta, float epsilon) {
  float inverse_width = 1.0f / (float)width;
  for (size_t r = 0; r < rows; r++) {
    float *x = out + r * width;
    const float *left = a + r * width;
    if (b != NULL) {
      const float *right = b + r * width;
      for (size_t j = 0; j < width; j++) x[j] = left[j] + right[j];
    } else if (x != left) {
      for (size_t j = 0; j < width; j++) x[j] = left[j];
    }
    float sum = 0;
    for (size_t j = 0; j < width; j++) sum += x[j];
    float mean = sum * inverse_width;
    float squares = 0;
    for (size_t j = 0; j < width; j++) squares += (x[j] - mean) * (x[j] - mean);
    float scale = 1.0f / sqrtf(squares * inverse_width + epsilon);
    for (size_t j = 0; j < width; j++) x[j] = (x[j] - mean) * scale * gamma[j] + beta[j];
  }
}

// ---- AVX2 + FMA and AVX-512 -------------------------------------------------------------

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f,avx512dq")))
// Inlined even unoptimized (debug builds), where a call copies every vector argument.
#define INLINE static inline __attribute__((always_inline))

AVX2 INLINE __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_load_ps(BROADCAST[K_EXP_LOW])), _mm256_load_ps(BROADCAST[K_EXP_HIGH]));
  const __m256 magic = _mm256_load_ps(BROADCAST[K_MAGIC]);
  __m256 shifted = _mm256_fmadd_ps(x, _mm256_load_ps(BROADCAST[K_LOG2E]), magic);
  __m256 n = _mm256_sub_ps(shifted, magic);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_load_ps(BROADCAST[K_LN2_HIGH]), x);
  r = _mm256_fnmadd_ps(n, _mm256_load_ps(BROADCAST[K_LN2_LOW]), r);
  __m256 p = _mm256_load_ps(BROADCAST[K_EXP_P]);
  for (int i = 1; i < EXP_COEFFICIENTS; i++) p = _mm256_fmadd_ps(p, r, _mm256_load_ps(BROADCAST[K_EXP_P + i]));
  __m256 y = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_load_ps(BROADCAST[K_ONE]));
  __m256i exponent = _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_castps_si256(magic));
  __m256i scale = _mm256_slli_epi32(_mm256_add_epi32(exponent, _mm256_load_si256((const __m256i *)EXPONENT_BIAS)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(scale));
}

AVX2 INLINE __m256 erf8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_load_ps(BROADCAST[K_ERF_LOW])), _mm256_load_ps(BROADCAST[K_ERF_HIGH]));
  __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_load_ps(BROADCAST[K_ERF_NUMERATOR]);
  for (int i = 1; i < ERF_P; i++) p = _mm256_fmadd_ps(p, x2, _mm256_load_ps(BROADCAST[K_ERF_NUMERATOR + i]));
  p = _mm256_mul_ps(p, x);
  __m256 q = _mm256_load_ps(BROADCAST[K_ERF_DENOMINATOR]);
  for (int i = 1; i < ERF_Q; i++) q = _mm256_fmadd_ps(q, x2, _mm256_load_ps(BROADCAST[K_ERF_DENOMINATOR + i]));
  return _mm256_div_ps(p, q);
}

AVX2 INLINE __m256 gelu8(__m256 v) {
  __m256 e = erf8(_mm256_mul_ps(v, _mm256_load_ps(BROADCAST[K_INV_SQRT2])));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(BROADCAST[K_HALF]), v), _mm256_add_ps(_mm256_load_ps(BROADCAST[K_ONE]), e));
}

AVX2 INLINE __m256i tail8(size_t rest) {
  const int32_t base[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256((const __m256i *)(base + 8 - rest));
}

AVX2 INLINE float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

AVX2 INLINE float hmax8(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

AVX2 static void bias_gelu_avx2(float *x, size_t rows, size_t n, size_t ld, const float *bias, int gelu) {
  for (size_t r = 0; r < rows; r++) {
    float *row = x + r * ld;
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
      __m256 v = _mm256_add_ps(_mm256_loadu_ps(row + j), _mm256_loadu_ps(bias + j));
      _mm256_storeu_ps(row + j, gelu ? gelu8(v) : v);
    }
    if (j < n) {
      __m256i m = tail8(n - j);
      __m256 v = _mm256_add_ps(_mm256_maskload_ps(row + j, m), _mm256_maskload_ps(bias + j, m));
      _mm256_maskstore_ps(row + j, m, gelu ? gelu8(v) : v);
    }
  }
}

AVX2 static void softmax_avx2(float *x, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; r++) {
    float *row = x + r * n;
    size_t full = n & ~(size_t)7;
    __m256 top = _mm256_set1_ps(-INFINITY);
    for (size_t j = 0; j < full; j += 8) top = _mm256_max_ps(top, _mm256_loadu_ps(row + j));
    float maximum = hmax8(top);
    for (size_t j = full; j < n; j++) maximum = row[j] > maximum ? row[j] : maximum;
    __m256 shift = _mm256_set1_ps(maximum);
    __m256 sums = _mm256_setzero_ps();
    for (size_t j = 0; j < full; j += 8) {
      __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), shift));
      sums = _mm256_add_ps(sums, e);
      _mm256_storeu_ps(row + j, e);
    }
    if (full < n) {
      __m256i m = tail8(n - full);
      __m256 e = exp8(_mm256_sub_ps(_mm256_maskload_ps(row + full, m), shift));
      e = _mm256_and_ps(e, _mm256_castsi256_ps(m));
      sums = _mm256_add_ps(sums, e);
      _mm256_maskstore_ps(row + full, m, e);
    }
    __m256 inverse = _mm256_set1_ps(1.0f / hsum8(sums));
    for (size_t j = 0; j < full; j += 8) _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inverse));
    if (full < n) {
      __m256i m = tail8(n - full);
      _mm256_maskstore_ps(row + full, m, _mm256_mul_ps(_mm256_maskload_ps(row + full, m), inverse));
    }
  }
}

AVX2 static void add_layer_norm_avx2(const float *a, const float *b, float *out, size_t rows, size_t width,
                                     const float *gamma, const float *beta, float epsilon) {
  float inverse_width = 1.0f / (float)width;
  for (size_t r = 0; r < rows; r++) {
    float *x = out + r * width;
    const float *left = a + r * width;
    const float *right = b != NULL ? b + r * width : NULL;
    __m256 sums = _mm256_setzero_ps();
    size_t j = 0;
    for (; j + 8 <= width; j += 8) {
      __m256 v = _mm256_loadu_ps(left + j);
      if (right) v = _mm256_add_ps(v, _mm256_loadu_ps(right + j));
      _mm256_storeu_ps(x + j, v);
      sums = _mm256_add_ps(sums, v);
    }
    float sum = hsum8(sums);
    for (; j < width; j++) {
      float v = right ? left[j] + right[j] : left[j];
      x[j] = v;
      sum += v;
    }
    float mean = sum * inverse_width;
    __m256 mean8 = _mm256_set1_ps(mean);
    __m256 squares8 = _mm256_setzero_ps();
    for (j = 0; j + 8 <= width; j += 8) {
      __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + j), mean8);
      squares8 = _mm256_fmadd_ps(d, d, squares8);
    }
    float squares = hsum8(squares8);
    for (; j < width; j++) squares += (x[j] - mean) * (x[j] - mean);
    float scale = 1.0f / sqrtf(squares * inverse_width + epsilon);
    __m256 scale8 = _mm256_set1_ps(scale);
    for (j = 0; j + 8 <= width; j += 8) {
      __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), mean8), scale8);
      _mm256_storeu_ps(x + j, _mm256_fmadd_ps(d, _mm256_loadu_ps(gamma + j), _mm256_loadu_ps(beta + j)));
    }
    for (; j < width; j++) x[j] = (x[j] - mean) * scale * gamma[j] + beta[j];
  }
}

AVX512 INLINE __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_load_ps(BROADCAST[K_EXP_LOW])), _mm512_load_ps(BROADCAST[K_EXP_HIGH]));
  const __m512 magic = _mm512_load_ps(BROADCAST[K_MAGIC]);
  __m512 shifted = _mm512_fmadd_ps(x, _mm512_load_ps(BROADCAST[K_LOG2E]), magic);
  __m512 n = _mm512_sub_ps(shifted, magic);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_load_ps(BROADCAST[K_LN2_HIGH]), x);
  r = _mm512_fnmadd_ps(n, _mm512_load_ps(BROADCAST[K_LN2_LOW]), r);
  __m512 p = _mm512_load_ps(BROADCAST[K_EXP_P]);
  for (int i = 1; i < EXP_COEFFICIENTS; i++) p = _mm512_fmadd_ps(p, r, _mm512_load_ps(BROADCAST[K_EXP_P + i]));
  __m512 y = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_load_ps(BROADCAST[K_ONE]));
  __m512i exponent = _mm512_sub_epi32(_mm512_castps_si512(shifted), _mm512_castps_si512(magic));
  __m512i scale = _mm512_slli_epi32(_mm512_add_epi32(exponent, _mm512_load_si512(EXPONENT_BIAS)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(scale));
}

AVX512 INLINE __m512 gelu16(__m512 v) {
  __m512 x = _mm512_mul_ps(v, _mm512_load_ps(BROADCAST[K_INV_SQRT2]));
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_load_ps(BROADCAST[K_ERF_LOW])), _mm512_load_ps(BROADCAST[K_ERF_HIGH]));
  __m512 x2 = _mm512_mul_ps(x, x);
  __m512 p = _mm512_load_ps(BROADCAST[K_ERF_NUMERATOR]);
  for (int i = 1; i < ERF_P; i++) p = _mm512_fmadd_ps(p, x2, _mm512_load_ps(BROADCAST[K_ERF_NUMERATOR + i]));
  p = _mm512_mul_ps(p, x);
  __m512 q = _mm512_load_ps(BROADCAST[K_ERF_DENOMINATOR]);
  for (int i = 1; i < ERF_Q; i++) q = _mm512_fmadd_ps(q, x2, _mm512_load_ps(BROADCAST[K_ERF_DENOMINATOR + i]));
  __m512 e = _mm512_div_ps(p, q);
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_load_ps(BROADCAST[K_HALF]), v), _mm512_add_ps(_mm512_load_ps(BROADCAST[K_ONE]), e));
}

INLINE __mmask16 tail16(size_t rest) { return (__mmask16)((1u << rest) - 1); }

// GELU takes four vectors a step: each value's operations are those of gelu16 alone, but one
// vector's chain (about 60 cycles of latency through erf's two polynomials and the division)
// left the core waiting; four side by side run 6-9% faster (the same bits).
AVX512 static void bias_gelu_avx512(float *x, size_t rows, size_t n, size_t ld, const float *bias, int gelu) {
  for (size_t r = 0; r < rows; r++) {
    float *row = x + r * ld;
    size_t j = 0;
    if (gelu) {
      for (; j + 64 <= n; j += 64) {
        __m512 v0 = _mm512_add_ps(_mm512_loadu_ps(row + j), _mm512_loadu_ps(bias + j));
        __m512 v1 = _mm512_add_ps(_mm512_loadu_ps(row + j + 16), _mm512_loadu_ps(bias + j + 16));
        __m512 v2 = _mm512_add_ps(_mm512_loadu_ps(row + j + 32), _mm512_loadu_ps(bias + j + 32));
        __m512 v3 = _mm512_add_ps(_mm512_loadu_ps(row + j + 48), _mm512_loadu_ps(bias + j + 48));
        _mm512_storeu_ps(row + j, gelu16(v0));
        _mm512_storeu_ps(row + j + 16, gelu16(v1));
        _mm512_storeu_ps(row + j + 32, gelu16(v2));
        _mm512_storeu_ps(row + j + 48, gelu16(v3));
      }
    }
    for (; j < n; j += 16) {
      __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF : tail16(n - j);
      __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, row + j), _mm512_maskz_loadu_ps(m, bias + j));
      _mm512_mask_storeu_ps(row + j, m, gelu ? gelu16(v) : v);
    }
  }
}

// row[j] = e^(row[j] - max) for j < n, in place; returns their sum (softmax without its division).
AVX512 INLINE float exponentials_avx512(float *row, size_t n) {
  __m512 top = _mm512_set1_ps(-INFINITY);
  for (size_t j = 0; j < n; j += 16) {
    __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF : tail16(n - j);
    top = _mm512_mask_max_ps(top, m, top, _mm512_maskz_loadu_ps(m, row + j));
  }
  __m512 shift = _mm512_set1_ps(_mm512_reduce_max_ps(top));
  __m512 sums = _mm512_setzero_ps();
  for (size_t j = 0; j < n; j += 16) {
    __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF : tail16(n - j);
    __m512 e = _mm512_maskz_mov_ps(m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + j), shift)));
    sums = _mm512_add_ps(sums, e);
    _mm512_mask_storeu_ps(row + j, m, e);
  }
  return _mm512_reduce_add_ps(sums);
}

// exponentials_avx512 of `rows` rows (np floats apart) side by side, bit for bit the same: each
// row's maximum, exponentials and sum in the same order, but the rows' dependency chains
// interleaved (a row at a time waited on its two reductions: a head at 74 tokens now takes 10%
// less). inverse[r] = 1 / the row's sum.
// `top[r]` holds row r's running maxima by lane (its scores' maximum, kept as the scores were
// stored: attention_scores_avx512).
AVX512 INLINE void exponentials_rows_avx512(float *s, size_t np, size_t n, float *inverse, const __m512 top[4],
                                            const int rows) {
  __m512 sums[4], shift[4];
  for (int r = 0; r < rows; r++) {
    shift[r] = _mm512_set1_ps(_mm512_reduce_max_ps(top[r]));
    sums[r] = _mm512_setzero_ps();
  }
  for (size_t j = 0; j < n; j += 16) {
    __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF : tail16(n - j);
    for (int r = 0; r < rows; r++) {
      __m512 e = _mm512_maskz_mov_ps(m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, s + r * np + j), shift[r])));
      sums[r] = _mm512_add_ps(sums[r], e);
      _mm512_mask_storeu_ps(s + r * np + j, m, e);
    }
  }
  for (int r = 0; r < rows; r++) inverse[r] = 1.0f / _mm512_reduce_add_ps(sums[r]);
}

AVX512 static void softmax_avx512(float *x, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; r++) {
    float *row = x + r * n;
    __m512 inverse = _mm512_set1_ps(1.0f / exponentials_avx512(row, n));
    for (size_t j = 0; j < n; j += 16) {
      __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF : tail16(n - j);
      _mm512_mask_storeu_ps(row + j, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + j), inverse));
    }
  }
}

AVX512 static void add_layer_norm_avx512(const float *a, const float *b, float *out, size_t rows, size_t width,
                                         const float *gamma, const float *beta, float epsilon) {
  float inverse_width = 1.0f / (float)width;
  for (size_t r = 0; r < rows; r++) {
    float *x = out + r * width;
    const float *left = a + r * width;
    const float *right = b != NULL ? b + r * width : NULL;
    __m512 sums = _mm512_setzero_ps();
    for (size_t j = 0; j < width; j += 16) {
      __mmask16 m = width - j >= 16 ? (__mmask16)0xFFFF : tail16(width - j);
      __m512 v = _mm512_maskz_loadu_ps(m, left + j);
      if (right) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, right + j));
      _mm512_mask_storeu_ps(x + j, m, v);
      sums = _mm512_add_ps(sums, v);
    }
    __m512 mean = _mm512_set1_ps(_mm512_reduce_add_ps(sums) * inverse_width);
    __m512 squares = _mm512_setzero_ps();
    for (size_t j = 0; j < width; j += 16) {
      __mmask16 m = width - j >= 16 ? (__mmask16)0xFFFF : tail16(width - j);
      __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + j), mean);
      squares = _mm512_fmadd_ps(d, d, squares);
    }
    __m512 scale = _mm512_set1_ps(1.0f / sqrtf(_mm512_reduce_add_ps(squares) * inverse_width + epsilon));
    for (size_t j = 0; j < width; j += 16) {
      __mmask16 m = width - j >= 16 ? (__mmask16)0xFFFF : tail16(width - j);
      __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j), mean), scale);
      _mm512_mask_storeu_ps(x + j, m, _mm512_fmadd_ps(d, _mm512_maskz_loadu_ps(m, gamma + j), _mm512_maskz_loadu_ps(m, beta + j)));
    }
  }
}

// Attention of one head, `hv` vectors of 16 floats wide (d = 16 · hv): K transposed once into
// `kt` (d rows of np floats, zero past n); then, `rows` query rows at a time (so that each load
// of kt or v feeds several independent chains of fused multiply-adds), the scores by
// broadcasts of the rows' values against kt's rows, the softmax's exponentials, and
// Σ e_j v_j, scaled by 1 / Σ e_j at the end. BLAS took two sgemm calls per head, each packing
// both operands, for products of 70 x 70 x 32.
// acc[r][u] = Σ_p a[r * lda + p] · b[p * ldb + 16u ..< 16u + 16], for `rows` rows and `nv`
// vectors of 16: each load of b feeds `rows` independent chains of fused multiply-adds. The
// scores (q against kt) and the weighted sum (e against v) are both this product.
AVX512 INLINE void broadcast_tile_avx512(const float *a, size_t lda, const float *b, size_t ldb, size_t k,
                                         const int rows, const int nv, __m512 acc[4][4]) {
  for (int r = 0; r < rows; r++)
    for (int u = 0; u < nv; u++) acc[r][u] = _mm512_setzero_ps();
  for (size_t p = 0; p < k; p++) {
    __m512 w[4];
    for (int u = 0; u < nv; u++) w[u] = _mm512_loadu_ps(b + p * ldb + 16 * u);
    for (int r = 0; r < rows; r++) {
      __m512 x = _mm512_set1_ps(a[r * lda + p]);
      for (int u = 0; u < nv; u++) acc[r][u] = _mm512_fmadd_ps(x, w[u], acc[r][u]);
    }
  }
}

// The scores of `rows` rows against `nv` vectors of kt's columns, `valid` of them real (the
// rest is K's zero padding), stored to s; each row's maxima by lane, over the real columns,
// go into top[r] in the order exponentials_avx512 reads them (so the softmax reads its scores
// once less; the same maximum, bit for bit).
AVX512 INLINE void attention_scores_avx512(const float *q, size_t ld, const float *kt, size_t np, size_t d,
                                           float scale, float *s, size_t valid, __m512 top[4], const int rows,
                                           const int nv) {
  __m512 acc[4][4];
  broadcast_tile_avx512(q, ld, kt, np, d, rows, nv, acc);
  __m512 factor = _mm512_set1_ps(scale);
  for (int u = 0; u < nv; u++) {
    size_t left = valid - 16 * (size_t)u;  // at least 1: the block's last vector holds a real column
    __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : tail16(left);
    for (int r = 0; r < rows; r++) {
      __m512 score = _mm512_mul_ps(acc[r][u], factor);
      _mm512_storeu_ps(s + r * np + 16 * u, score);
      top[r] = _mm512_mask_max_ps(top[r], m, top[r], score);
    }
  }
}

AVX512 INLINE void attention_rows_avx512(const float *q, const float *kt, const float *v, float *out, size_t n,
                                         size_t ld, float scale, float *s, const int rows, const int hv) {
  const size_t d = 16 * (size_t)hv, np = (n + 15) & ~(size_t)15;
  __m512 top[4];
  for (int r = 0; r < rows; r++) top[r] = _mm512_set1_ps(-INFINITY);
  for (size_t c = 0; c < np; c += 64) {
    switch ((np - c) / 16) {
    case 1: attention_scores_avx512(q, ld, kt + c, np, d, scale, s + c, n - c, top, rows, 1); break;
    case 2: attention_scores_avx512(q, ld, kt + c, np, d, scale, s + c, n - c, top, rows, 2); break;
    case 3: attention_scores_avx512(q, ld, kt + c, np, d, scale, s + c, n - c, top, rows, 3); break;
    default: attention_scores_avx512(q, ld, kt + c, np, d, scale, s + c, n - c, top, rows, 4); break;
    }
  }
  float inverse[4];
  exponentials_rows_avx512(s, np, n, inverse, top, rows);
  __m512 acc[4][4];
  broadcast_tile_avx512(s, np, v, ld, n, rows, hv, acc);
  for (int r = 0; r < rows; r++)
    for (int h = 0; h < hv; h++)
      _mm512_storeu_ps(out + r * ld + 16 * h, _mm512_mul_ps(acc[r][h], _mm512_set1_ps(inverse[r])));
}

// Stores the transpose of the 16 x 16 block of 32-bit values in r (row i = r[i]): value c of
// row i goes to out[c * stride + i]. Unpacks of 32 and 64 bits, then two rounds of 128-bit lane
// shuffles (64 shuffles for 256 values); r is overwritten.
AVX512 INLINE void transpose16_avx512(__m512 r[16], float *out, size_t stride) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // r[4c + g], 128-bit lane L: rows 4g...4g+3 of column 4L + c.
  for (int g = 0; g < 4; g++) {
    __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
    __m512d c = _mm512_castps_pd(t[4 * g + 2]), e = _mm512_castps_pd(t[4 * g + 3]);
    r[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 + g] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[8 + g] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, e));
    r[12 + g] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, e));
  }
  // Column 4L + c gathers lane L of r[4c], r[4c + 1], r[4c + 2], r[4c + 3].
  for (int c = 0; c < 4; c++) {
    __m512 v0 = _mm512_shuffle_f32x4(r[4 * c], r[4 * c + 1], 0x44);
    __m512 v1 = _mm512_shuffle_f32x4(r[4 * c], r[4 * c + 1], 0xEE);
    __m512 v2 = _mm512_shuffle_f32x4(r[4 * c + 2], r[4 * c + 3], 0x44);
    __m512 v3 = _mm512_shuffle_f32x4(r[4 * c + 2], r[4 * c + 3], 0xEE);
    _mm512_storeu_ps(out + (size_t)c * stride, _mm512_shuffle_f32x4(v0, v2, 0x88));
    _mm512_storeu_ps(out + (size_t)(4 + c) * stride, _mm512_shuffle_f32x4(v0, v2, 0xDD));
    _mm512_storeu_ps(out + (size_t)(8 + c) * stride, _mm512_shuffle_f32x4(v1, v3, 0x88));
    _mm512_storeu_ps(out + (size_t)(12 + c) * stride, _mm512_shuffle_f32x4(v1, v3, 0xDD));
  }
}

// kt[p * np + i] = k[i * ld + p] for p < 16 and i < 16, zero for rows i >= rows: a 16 x 16 block
// of K transposed in registers (a scalar copy, element by element, was 5% of the kernel's time).
AVX512 INLINE void transpose_keys_avx512(const float *k, size_t ld, size_t rows, float *kt, size_t np) {
  __m512 r[16];
  for (int i = 0; i < 16; i++) r[i] = (size_t)i < rows ? _mm512_loadu_ps(k + i * ld) : _mm512_setzero_ps();
  transpose16_avx512(r, kt, np);
}

AVX512 INLINE void attention_head_avx512(const float *q, const float *k, const float *v, float *out, size_t n,
                                         size_t ld, float scale, float *scratch, const int hv) {
  const size_t d = 16 * (size_t)hv, np = (n + 15) & ~(size_t)15;
  float *kt = scratch, *s = scratch + d * np;
  for (size_t j = 0; j < np; j += 16)
    for (int h = 0; h < hv; h++) transpose_keys_avx512(k + j * ld + 16 * h, ld, n - j, kt + 16 * h * np + j, np);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) attention_rows_avx512(q + i * ld, kt, v, out + i * ld, n, ld, scale, s, 4, hv);
  switch (n - i) {
  case 1: attention_rows_avx512(q + i * ld, kt, v, out + i * ld, n, ld, scale, s, 1, hv); break;
  case 2: attention_rows_avx512(q + i * ld, kt, v, out + i * ld, n, ld, scale, s, 2, hv); break;
  case 3: attention_rows_avx512(q + i * ld, kt, v, out + i * ld, n, ld, scale, s, 3, hv); break;
  default: break;
  }
}

#endif

// ---- NEON ---------------------------------------------------------------------------------

#if defined(__aarch64__)
#define INLINE static inline __attribute__((always_inline))
INLINE float32x4_t exp4(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(EXP_LOW)), vdupq_n_f32(EXP_HIGH));
  const float32x4_t magic = vdupq_n_f32(MAGIC);
  float32x4_t shifted = vfmaq_f32(magic, x, vdupq_n_f32(LOG2E));
  float32x4_t n = vsubq_f32(shifted, magic);
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(LN2_HIGH));
  r = vfmsq_f32(r, n, vdupq_n_f32(LN2_LOW));
  float32x4_t p = vdupq_n_f32(EXP_P[0]);
  for (int i = 1; i < EXP_COEFFICIENTS; i++) p = vfmaq_f32(vdupq_n_f32(EXP_P[i]), p, r);
  float32x4_t y = vaddq_f32(vfmaq_f32(r, vmulq_f32(p, r), r), vdupq_n_f32(1.0f));
  int32x4_t exponent = vsubq_s32(vreinterpretq_s32_f32(shifted), vreinterpretq_s32_f32(magic));
  int32x4_t scale = vshlq_n_s32(vaddq_s32(exponent, vdupq_n_s32(127)), 23);
  return vmulq_f32(y, vreinterpretq_f32_s32(scale));
}

INLINE float32x4_t gelu4(float32x4_t v) {
  float32x4_t x = vmulq_f32(v, vdupq_n_f32(INV_SQRT2));
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-4.0f)), vdupq_n_f32(4.0f));
  float32x4_t x2 = vmulq_f32(x, x);
  float32x4_t p = vdupq_n_f32(ERF_NUMERATOR[0]);
  for (int i = 1; i < ERF_P; i++) p = vfmaq_f32(vdupq_n_f32(ERF_NUMERATOR[i]), p, x2);
  p = vmulq_f32(p, x);
  float32x4_t q = vdupq_n_f32(ERF_DENOMINATOR[0]);
  for (int i = 1; i < ERF_Q; i++) q = vfmaq_f32(vdupq_n_f32(ERF_DENOMINATOR[i]), q, x2);
  float32x4_t e = vdivq_f32(p, q);
  return vmulq_f32(vmulq_f32(vdupq_n_f32(0.5f), v), vaddq_f32(vdupq_n_f32(1.0f), e));
}

static void bias_gelu_neon(float *x, size_t rows, size_t n, size_t ld, const float *bias, int gelu) {
  for (size_t r = 0; r < rows; r++) {
    float *row = x + r * ld;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      float32x4_t v = vaddq_f32(vld1q_f32(row + j), vld1q_f32(bias + j));
      vst1q_f32(row + j, gelu ? gelu4(v) : v);
    }
    for (; j < n; j++) {
      float v = row[j] + bias[j];
      row[j] = gelu ? vgetq_lane_f32(gelu4(vdupq_n_f32(v)), 0) : v;
    }
  }
}

static void softmax_neon(float *x, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; r++) {
    float *row = x + r * n;
    size_t full = n & ~(size_t)3;
    float32x4_t top = vdupq_n_f32(-INFINITY);
    for (size_t j = 0; j < full; j += 4) top = vmaxq_f32(top, vld1q_f32(row + j));
    float maximum = vmaxvq_f32(top);
    for (size_t j = full; j < n; j++) maximum = row[j] > maximum ? row[j] : maximum;
    float32x4_t shift = vdupq_n_f32(maximum);
    float32x4_t sums = vdupq_n_f32(0);
    for (size_t j = 0; j < full; j += 4) {
      float32x4_t e = exp4(vsubq_f32(vld1q_f32(row + j), shift));
      sums = vaddq_f32(sums, e);
      vst1q_f32(row + j, e);
    }
    float sum = vaddvq_f32(sums);
    for (size_t j = full; j < n; j++) {
      float e = vgetq_lane_f32(exp4(vdupq_n_f32(row[j] - maximum)), 0);
      row[j] = e;
      sum += e;
    }
    float32x4_t inverse = vdupq_n_f32(1.0f / sum);
    for (size_t j = 0; j < full; j += 4) vst1q_f32(row + j, vmulq_f32(vld1q_f32(row + j), inverse));
    for (size_t j = full; j < n; j++) row[j] *= vgetq_lane_f32(inverse, 0);
  }
}

static void add_layer_norm_neon(const float *a, const float *b, float *out, size_t rows, size_t width,
                                const float *gamma, const float *beta, float epsilon) {
  float inverse_width = 1.0f / (float)width;
  size_t full = width & ~(size_t)3;
  for (size_t r = 0; r < rows; r++) {
    float *x = out + r * width;
    const float *left = a + r * width;
    const float *right = b != NULL ? b + r * width : NULL;
    float32x4_t sums = vdupq_n_f32(0);
    for (size_t j = 0; j < full; j += 4) {
      float32x4_t v = vld1q_f32(left + j);
      if (right) v = vaddq_f32(v, vld1q_f32(right + j));
      vst1q_f32(x + j, v);
      sums = vaddq_f32(sums, v);
    }
    float sum = vaddvq_f32(sums);
    for (size_t j = full; j < width; j++) {
      float v = right ? left[j] + right[j] : left[j];
      x[j] = v;
      sum += v;
    }
    float mean = sum * inverse_width;
    float32x4_t mean4 = vdupq_n_f32(mean);
    float32x4_t squares4 = vdupq_n_f32(0);
    for (size_t j = 0; j < full; j += 4) {
      float32x4_t d = vsubq_f32(vld1q_f32(x + j), mean4);
      squares4 = vfmaq_f32(squares4, d, d);
    }
    float squares = vaddvq_f32(squares4);
    for (size_t j = full; j < width; j++) squares += (x[j] - mean) * (x[j] - mean);
    float scale = 1.0f / sqrtf(squares * inverse_width + epsilon);
    float32x4_t scale4 = vdupq_n_f32(scale);
    for (size_t j = 0; j < full; j += 4) {
      float32x4_t d = vmulq_f32(vsubq_f32(vld1q_f32(x + j), mean4), scale4);
      vst1q_f32(x + j, vfmaq_f32(vld1q_f32(beta + j), d, vld1q_f32(gamma + j)));
    }
    for (size_t j = full; j < width; j++) x[j] = (x[j] - mean) * scale * gamma[j] + beta[j];
  }
}
#endif

#if defined(__x86_64__)
AVX512 static void attention_head_avx512_any(const float *q, const float *k, const float *v, float *out, size_t n,
                                             size_t ld, float scale, float *scratch, int hv) {
  switch (hv) {
  case 1: attention_head_avx512(q, k, v, out, n, ld, scale, scratch, 1); return;
  case 2: attention_head_avx512(q, k, v, out, n, ld, scale, scratch, 2); return;
  case 3: attention_head_avx512(q, k, v, out, n, ld, scale, scratch, 3); return;
  default: attention_head_avx512(q, k, v, out, n, ld, scale, scratch, 4); return;
  }
}
#endif

// ---- dispatch -----------------------------------------------------------------------------

static inline int elementwise_path(int path) {
  int level = engram_level_cached();
  return path < level ? (path < 0 ? 0 : path) : level;
}

void engram_bias_gelu_rows_path(float *x, size_t rows, size_t n, size_t ld, const float *bias, int gelu,
                                int path) {
  path = elementwise_path(path);
#if defined(__x86_64__)
  if (path >= 2) {
    bias_gelu_avx512(x, rows, n, ld, bias, gelu);
    return;
  }
  if (path == 1) {
    bias_gelu_avx2(x, rows, n, ld, bias, gelu);
    return;
  }
#elif defined(__aarch64__)
  if (path >= 1) {
    bias_gelu_neon(x, rows, n, ld, bias, gelu);
    return;
  }
#endif
  bias_gelu_scalar(x, rows, n, ld, bias, gelu);
}

void engram_bias_gelu_rows(float *x, size_t rows, size_t n, size_t ld, const float *bias, int gelu) {
  engram_bias_gelu_rows_path(x, rows, n, ld, bias, gelu, ENGRAM_LEVEL_AVX512);
}

void engram_softmax_rows_path(float *x, size_t rows, size_t n, int path) {
  path = elementwise_path(path);
#if defined(__x86_64__)
  if (path >= 2) {
    softmax_avx512(x, rows, n);
    return;
  }
  if (path == 1) {
    softmax_avx2(x, rows, n);
    return;
  }
#elif defined(__aarch64__)
  if (path >= 1) {
    softmax_neon(x, rows, n);
    return;
  }
#endif
  softmax_scalar(x, rows, n);
}

void engram_softmax_rows(float *x, size_t rows, size_t n) {
  engram_softmax_rows_path(x, rows, n, ENGRAM_LEVEL_AVX512);
}

void engram_add_layer_norm_path(const float *a, const float *b, float *out, size_t rows, size_t width,
                                const float *gamma, const float *beta, float epsilon, int path) {
  path = elementwise_path(path);
#if defined(__x86_64__)
  if (path >= 2) {
    add_layer_norm_avx512(a, b, out, rows, width, gamma, beta, epsilon);
    return;
  }
  if (path == 1) {
    add_layer_norm_avx2(a, b, out, rows, width, gamma, beta, epsilon);
    return;
  }
#elif defined(__aarch64__)
  if (path >= 1) {
    add_layer_norm_neon(a, b, out, rows, width, gamma, beta, epsilon);
    return;
  }
#endif
  add_layer_norm_scalar(a, b, out, rows, width, gamma, beta, epsilon);
}

void engram_add_layer_norm(const float *a, const float *b, float *out, size_t rows, size_t width,
                           const float *gamma, const float *beta, float epsilon) {
  engram_add_layer_norm_path(a, b, out, rows, width, gamma, beta, epsilon, ENGRAM_LEVEL_AVX512);
}

size_t engram_attention_scratch(size_t n, size_t d) { return (d + 4) * ((n + 15) & ~(size_t)15); }

int engram_attention_head_path(const float *q, const float *k, const float *v, float *out, size_t n, size_t d,
                               size_t ld, float scale, float *scratch, int path) {
  path = elementwise_path(path);
  if (n == 0) return 1;
#if defined(__x86_64__)
  if (path >= 2 && d % 16 == 0 && d >= 16 && d <= 64) {
    attention_head_avx512_any(q, k, v, out, n, ld, scale, scratch, (int)(d / 16));
    return 1;
  }
#endif
  if (path > 0) return 0;
  attention_head_scalar(q, k, v, out, n, d, ld, scale, scratch);
  return 1;
}

int engram_attention_head(const float *q, const float *k, const float *v, float *out, size_t n, size_t d,
                          size_t ld, float scale, float *scratch) {
  return engram_attention_head_path(q, k, v, out, n, d, ld, scale, scratch, ENGRAM_LEVEL_AVX512);
}
