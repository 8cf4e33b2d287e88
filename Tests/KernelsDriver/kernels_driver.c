// Checks every SIMD level of CEngramKernels against the scalar reference, in plain C, so it can
// be cross-compiled and run where Swift cannot (an AArch64 build under qemu-aarch64; see
// scripts/kernels-test.sh). Prints one line per failure and exits 1 if any check failed.
//
//   kernels_driver [EXPECTED_LEVEL]
//
// EXPECTED_LEVEL (a name: scalar, avx2, avx512, neon) is the dispatch level the run must
// report, so a build that silently fell back to scalar fails instead of passing trivially.
//
// Tolerances (float32 kernels; integer kernels and the select must match exactly): two
// summation orders of sum_j a_j b_j differ by at most 2 * n * u * sum_j |a_j b_j| with
// u = 2^-24 (each is within n * u * sum |a_j b_j| of the exact value; fused multiply-adds
// only tighten this); the checks allow exactly that plus 1e-30 for all-zero sums.
#include "engram_kernels.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0, checks = 0;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      if (failures <= 20) {                                                                        \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                      \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
      }                                                                                            \
    }                                                                                              \
  } while (0)

static uint64_t state = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}
static float uniform(void) { return (float)((next() >> 40) / (double)(1 << 24)) * 2.0f - 1.0f; }
static int8_t code(void) { return (int8_t)((int)(next() % 255) - 127); }

static double bound(const float *a, const float *b, size_t n) {
  double s = 0;
  for (size_t j = 0; j < n; j++) s += fabs((double)a[j] * (double)b[j]);
  return 2.0 * (double)n * ldexp(1.0, -24) * s + 1e-30;
}

static const size_t dims[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 384, 385, 1000};
enum { NDIMS = sizeof(dims) / sizeof(dims[0]) };

static void check_f32(int path) {
  for (int d = 0; d < NDIMS; d++) {
    size_t dim = dims[d], n = 13;
    float *q = malloc(dim * sizeof(float)), *rows = malloc(n * dim * sizeof(float));
    float ref[13], got[13], gathered[13];
    int32_t order[13];
    for (size_t j = 0; j < dim; j++) q[j] = uniform();
    for (size_t j = 0; j < n * dim; j++) rows[j] = uniform();
    // Row 5 repeats row 2: equal rows must score bit-equal on every loop of one level.
    memcpy(rows + 5 * dim, rows + 2 * dim, dim * sizeof(float));
    for (size_t i = 0; i < n; i++) order[i] = (int32_t)(n - 1 - i);
    engram_dot_f32_rows_path(q, rows, dim, n, ref, ENGRAM_LEVEL_SCALAR);
    engram_dot_f32_rows_path(q, rows, dim, n, got, path);
    engram_dot_f32_gather_path(q, rows, dim, order, n, gathered, path);
    for (size_t i = 0; i < n; i++) {
      double tol = bound(q, rows + i * dim, dim);
      CHECK(fabs((double)got[i] - ref[i]) <= tol, "f32 rows level %d dim %zu row %zu: %.9g vs scalar %.9g", path,
            dim, i, got[i], ref[i]);
      CHECK(gathered[n - 1 - i] == got[i], "f32 gather level %d dim %zu row %zu: %.9g vs rows %.9g", path, dim, i,
            gathered[n - 1 - i], got[i]);
    }
    CHECK(got[5] == got[2], "f32 level %d dim %zu: equal rows scored %.9g and %.9g", path, dim, got[2], got[5]);
    free(q);
    free(rows);
  }
}

static void check_i8(int path) {
  for (int d = 0; d < NDIMS; d++) {
    size_t dim = dims[d], n = 11;
    int8_t *q = malloc(dim), *rows = malloc(n * dim);
    int32_t sums[11], ref[11], got[11];
    for (size_t j = 0; j < dim; j++) q[j] = code();
    for (size_t j = 0; j < n * dim; j++) rows[j] = code();
    // Extremes: all +127 against all -127 and +127 (largest pair sums, the saturation edge).
    memset(rows, 127, dim);
    memset(rows + dim, (int8_t)-127, dim);
    for (size_t i = 0; i < n; i++) {
      int32_t s = 0;
      for (size_t j = 0; j < dim; j++) s += rows[i * dim + j];
      sums[i] = s;
    }
    engram_dot_i8_rows_path(q, rows, dim, n, sums, ref, ENGRAM_LEVEL_SCALAR);
    engram_dot_i8_rows_path(q, rows, dim, n, sums, got, path);
    for (size_t i = 0; i < n; i++) {
      CHECK(got[i] == ref[i], "i8 rows level %d dim %zu row %zu: %d vs scalar %d", path, dim, i, got[i], ref[i]);
      int32_t one = engram_dot_i8_path(q, rows + i * dim, dim, path);
      CHECK(one == ref[i], "i8 dot level %d dim %zu row %zu: %d vs scalar %d", path, dim, i, one, ref[i]);
    }
    int8_t *top = malloc(dim);
    memset(top, 127, dim);
    CHECK(engram_dot_i8_path(top, rows, dim, path) == 127 * 127 * (int32_t)dim, "i8 level %d dim %zu: 127 x 127",
          path, dim);
    free(top);
    free(q);
    free(rows);
  }
}

// The int8 scan (score and threshold test in one pass) against the scalar path and against
// the row kernel's dots times the scales: the same picks, bit-equal scores, for row counts
// odd and even (the AVX2 loop takes two rows at a time) and thresholds that keep all, some,
// none, and a tie.
static void check_scan_i8(int path) {
  static const size_t counts[] = {0, 1, 2, 3, 11, 64, 65};
  for (int d = 0; d < NDIMS; d++) {
    size_t dim = dims[d], n_max = 65;
    int8_t *q = malloc(dim), *rows = malloc(n_max * dim);
    int32_t sums[65], dots[65], ref_picks[65], got_picks[65];
    float scales[65], ref_scores[65], got_scores[65];
    for (size_t j = 0; j < dim; j++) q[j] = code();
    for (size_t j = 0; j < n_max * dim; j++) rows[j] = code();
    memset(rows, 127, dim);
    memset(rows + dim, (int8_t)-127, dim);
    memcpy(rows + 5 * dim, rows + 4 * dim, dim);  // a tie
    for (size_t i = 0; i < n_max; i++) {
      int32_t s = 0;
      for (size_t j = 0; j < dim; j++) s += rows[i * dim + j];
      sums[i] = s;
      scales[i] = 0.001f + 0.01f * uniform() * uniform();
    }
    scales[5] = scales[4];
    engram_dot_i8_rows_path(q, rows, dim, n_max, sums, dots, ENGRAM_LEVEL_SCALAR);
    float tie = (float)dots[4] * scales[4];
    const float thresholds[] = {-INFINITY, 0.0f, tie, INFINITY, NAN};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
      size_t n = counts[c];
      for (size_t t = 0; t < sizeof(thresholds) / sizeof(thresholds[0]); t++) {
        size_t a = engram_scan_i8_rows_path(q, rows, dim, n, sums, scales, thresholds[t], ref_picks, ref_scores,
                                            ENGRAM_LEVEL_SCALAR);
        size_t b = engram_scan_i8_rows_path(q, rows, dim, n, sums, scales, thresholds[t], got_picks, got_scores, path);
        CHECK(a == b && memcmp(ref_picks, got_picks, a * sizeof(int32_t)) == 0 &&
                  memcmp(ref_scores, got_scores, a * sizeof(float)) == 0,
              "scan i8 level %d dim %zu n %zu threshold %g: %zu vs %zu picks", path, dim, n, thresholds[t], b, a);
        size_t expected = 0;
        for (size_t i = 0; i < n; i++) {
          float score = (float)dots[i] * scales[i];
          if (score >= thresholds[t]) {
            CHECK(expected < a && ref_picks[expected] == (int32_t)i && ref_scores[expected] == score,
                  "scan i8 scalar dim %zu n %zu row %zu: not the row kernel's score", dim, n, i);
            expected++;
          }
        }
        CHECK(expected == a, "scan i8 scalar dim %zu n %zu threshold %g: %zu picks, %zu expected", dim, n,
              thresholds[t], a, expected);
      }
    }
    free(q);
    free(rows);
  }
}

static void check_select(int path) {
  static const size_t lengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 130, 1024, 4099};
  static const float thresholds[] = {-INFINITY, -1.0f, 0.0f, 0.5f, 0.99f, 2.0f};
  for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
    size_t n = lengths[l];
    float *scores = malloc((n + 1) * sizeof(float));
    int32_t *ref = malloc((n + 1) * sizeof(int32_t)), *got = malloc((n + 1) * sizeof(int32_t));
    for (size_t i = 0; i < n; i++) scores[i] = uniform();
    if (n > 3) {
      scores[1] = 0.5f;        // a tie passes
      scores[n - 1] = NAN;     // NaN never passes
      scores[n / 2] = -INFINITY;
    }
    for (size_t t = 0; t < sizeof(thresholds) / sizeof(thresholds[0]); t++) {
      size_t a = engram_select_at_least_path(scores, n, thresholds[t], ref, ENGRAM_LEVEL_SCALAR);
      size_t b = engram_select_at_least_path(scores, n, thresholds[t], got, path);
      CHECK(a == b && memcmp(ref, got, a * sizeof(int32_t)) == 0, "select level %d n %zu threshold %g: %zu vs %zu", path,
            n, thresholds[t], b, a);
    }
    free(scores);
    free(ref);
    free(got);
  }
}

static void check_gemm(int path) {
  static const size_t ks[] = {1, 3, 4, 8, 15, 16, 17, 33, 384};
  for (size_t m = 1; m <= 9; m++)
    for (size_t n = 1; n <= 9; n++)
      for (size_t kk = 0; kk < sizeof(ks) / sizeof(ks[0]); kk++) {
        size_t k = ks[kk], lda = k + 3, ldw = k + 1, ldc = n + 2;
        float *a = malloc(m * lda * sizeof(float)), *w = malloc(n * ldw * sizeof(float));
        float *ref = malloc(m * ldc * sizeof(float)), *got = malloc(m * ldc * sizeof(float));
        for (size_t j = 0; j < m * lda; j++) a[j] = uniform();
        for (size_t j = 0; j < n * ldw; j++) w[j] = uniform();
        for (size_t j = 0; j < m * ldc; j++) ref[j] = got[j] = 12345.0f;  // padding stays
        engram_gemm_nt_path(m, n, k, 0.5f, a, lda, w, ldw, ref, ldc, ENGRAM_LEVEL_SCALAR);
        engram_gemm_nt_path(m, n, k, 0.5f, a, lda, w, ldw, got, ldc, path);
        for (size_t i = 0; i < m; i++)
          for (size_t j = 0; j < ldc; j++) {
            double tol = j < n ? 0.5 * bound(a + i * lda, w + j * ldw, k) : 0;
            CHECK(fabs((double)got[i * ldc + j] - ref[i * ldc + j]) <= tol,
                  "gemm level %d m %zu n %zu k %zu at %zu,%zu: %.9g vs scalar %.9g", path, m, n, k, i, j,
                  got[i * ldc + j], ref[i * ldc + j]);
          }
        free(a);
        free(w);
        free(ref);
        free(got);
      }
}

// Element-wise kernels. Against double-precision references: exp within 4e-7 relative on
// [-80, 8] (the polynomial's about 1 ulp and the input's own rounding), erf within 6e-7
// absolute, GELU within 1e-6 · (1 + |x|), softmax within 1e-6 per probability, LayerNorm
// within 1e-5 · (1 + |gamma| + |beta|) (float sums of up to 1000 terms). Between a level and
// scalar (fused multiply-adds, lane order) the same bounds apply, halved for softmax and GELU.
static double gelu_reference(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }

static void check_elementwise(int path) {
  if (path == ENGRAM_LEVEL_SCALAR) {
    for (int i = 0; i <= 20000; i++) {
      float x = -80.0f + (float)i * 0.0044f;
      double want = exp((double)x);
      CHECK(fabs(engram_exp_approx(x) - want) <= 4e-7 * want, "exp(%.9g) = %.9g vs %.9g", x, engram_exp_approx(x), want);
      float y = -6.0f + (float)i * 0.0006f;
      CHECK(fabs(engram_erf_approx(y) - erf((double)y)) <= 6e-7, "erf(%.9g) = %.9g", y, engram_erf_approx(y));
    }
  }
  static const size_t widths[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 33, 384, 385};
  for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
    size_t n = widths[w], rows = 3, ld = n + 5;
    float *x = malloc(rows * ld * sizeof(float)), *ref = malloc(rows * ld * sizeof(float));
    float *bias = malloc(n * sizeof(float)), *gamma = malloc(n * sizeof(float)), *beta = malloc(n * sizeof(float));
    float *other = malloc(rows * n * sizeof(float)), *out = malloc(rows * n * sizeof(float));
    float *alias = malloc(rows * n * sizeof(float));
    for (size_t j = 0; j < n; j++) {
      bias[j] = uniform();
      gamma[j] = 1.0f + uniform();
      beta[j] = 0.5f * uniform();
    }
    for (int gelu = 0; gelu <= 1; gelu++) {
      for (size_t j = 0; j < rows * ld; j++) x[j] = ref[j] = 6.0f * uniform();
      engram_bias_gelu_rows_path(ref, rows, n, ld, bias, gelu, ENGRAM_LEVEL_SCALAR);
      float *got = malloc(rows * ld * sizeof(float));
      memcpy(got, x, rows * ld * sizeof(float));
      engram_bias_gelu_rows_path(got, rows, n, ld, bias, gelu, path);
      for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < ld; j++) {
          size_t at = r * ld + j;
          if (j >= n) {
            CHECK(got[at] == x[at], "bias_gelu level %d n %zu: padding at %zu changed", path, n, at);
            continue;
          }
          double v = (double)x[at] + (double)bias[j];
          double want = gelu ? gelu_reference(v) : v;
          CHECK(fabs(got[at] - want) <= 1e-6 * (1 + fabs(v)), "bias_gelu(%d) level %d n %zu at %zu: %.9g vs %.9g",
                gelu, path, n, at, got[at], want);
          CHECK(fabs(got[at] - ref[at]) <= 0.5e-6 * (1 + fabs(v)), "bias_gelu(%d) level %d n %zu at %zu: %.9g vs scalar %.9g",
                gelu, path, n, at, got[at], ref[at]);
        }
      free(got);
    }
    // GELU is computed per value: the whole row at once (the AVX-512 level takes four vectors
    // a step) equals the same row 16 values at a time, bit for bit.
    {
      for (size_t j = 0; j < rows * ld; j++) x[j] = ref[j] = 6.0f * uniform();
      engram_bias_gelu_rows_path(x, rows, n, ld, bias, 1, path);
      for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < n; j += 16)
          engram_bias_gelu_rows_path(ref + r * ld + j, 1, n - j < 16 ? n - j : 16, ld, bias + j, 1, path);
      CHECK(memcmp(x, ref, rows * ld * sizeof(float)) == 0, "bias_gelu level %d n %zu: a row differs from its parts",
            path, n);
    }
    // Softmax: scores spread over about +-20 like attention logits, rows of n contiguous floats.
    for (size_t j = 0; j < rows * n; j++) x[j] = ref[j] = 20.0f * uniform();
    float *soft = malloc(rows * n * sizeof(float));
    memcpy(soft, x, rows * n * sizeof(float));
    engram_softmax_rows_path(ref, rows, n, ENGRAM_LEVEL_SCALAR);
    engram_softmax_rows_path(soft, rows, n, path);
    for (size_t r = 0; r < rows; r++) {
      double top = -INFINITY, total = 0, sum = 0;
      for (size_t j = 0; j < n; j++) top = fmax(top, x[r * n + j]);
      for (size_t j = 0; j < n; j++) total += exp((double)x[r * n + j] - top);
      for (size_t j = 0; j < n; j++) {
        size_t at = r * n + j;
        double want = exp((double)x[at] - top) / total;
        sum += soft[at];
        CHECK(fabs(soft[at] - want) <= 1e-6, "softmax level %d n %zu at %zu: %.9g vs %.9g", path, n, at, soft[at], want);
        CHECK(fabs(soft[at] - ref[at]) <= 0.5e-6, "softmax level %d n %zu at %zu: %.9g vs scalar %.9g", path, n, at,
              soft[at], ref[at]);
      }
      CHECK(fabs(sum - 1) <= 1e-5, "softmax level %d n %zu row %zu sums to %.9g", path, n, r, sum);
    }
    free(soft);
    // LayerNorm of a + b into a separate buffer, and of a alone in place (out aliases a).
    for (size_t j = 0; j < rows * n; j++) {
      x[j] = 3.0f * uniform() + 1.0f;
      other[j] = uniform();
    }
    memcpy(alias, x, rows * n * sizeof(float));
    float *scalar = malloc(rows * n * sizeof(float));
    engram_add_layer_norm_path(x, other, scalar, rows, n, gamma, beta, 1e-12f, ENGRAM_LEVEL_SCALAR);
    engram_add_layer_norm_path(x, other, out, rows, n, gamma, beta, 1e-12f, path);
    engram_add_layer_norm_path(alias, NULL, alias, rows, n, gamma, beta, 1e-12f, path);
    for (size_t r = 0; r < rows; r++) {
      for (int sum_of_two = 0; sum_of_two <= 1; sum_of_two++) {
        double mean = 0, squares = 0;
        for (size_t j = 0; j < n; j++) mean += (double)x[r * n + j] + (sum_of_two ? other[r * n + j] : 0);
        mean /= (double)n;
        for (size_t j = 0; j < n; j++) {
          double d = (double)x[r * n + j] + (sum_of_two ? other[r * n + j] : 0) - mean;
          squares += d * d;
        }
        double scale = 1 / sqrt(squares / (double)n + 1e-12);
        for (size_t j = 0; j < n; j++) {
          size_t at = r * n + j;
          double d = (double)x[at] + (sum_of_two ? other[at] : 0) - mean;
          double want = d * scale * gamma[j] + beta[j];
          double tol = 1e-5 * (1 + fabs(gamma[j]) + fabs(beta[j]));
          float got = sum_of_two ? out[at] : alias[at];
          CHECK(fabs(got - want) <= tol, "layer_norm(%d) level %d n %zu at %zu: %.9g vs %.9g", sum_of_two, path, n, at,
                got, want);
          if (sum_of_two)
            CHECK(fabs(got - scalar[at]) <= tol, "layer_norm level %d n %zu at %zu: %.9g vs scalar %.9g", path, n, at,
                  got, scalar[at]);
        }
      }
    }
    free(scalar);
    free(x);
    free(ref);
    free(bias);
    free(gamma);
    free(beta);
    free(other);
    free(out);
    free(alias);
  }
}

// The int8 products of the embedders (qgemm_i8.c), at one and two activation passes and weight
// groups of 64 and 128 inputs: each level's codes, exact group sums and float outputs (bias
// fused, written straight to C) against the scalar level's, bit for bit, and the group sums
// against their definition read from the packed layout; extreme codes (every pair at +-127)
// over 1536 inputs too.
static void check_qgemm(int path) {
  static const size_t shapes[][3] = {{1, 1, 1}, {2, 5, 7}, {3, 16, 64}, {7, 17, 65}, {13, 64, 384},
                                     {4, 100, 130}, {5, 129, 1536}, {8, 70, 200}};
  for (size_t group = 64; group <= 128; group += 64)
  for (int passes = 1; passes <= 2; passes++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
      size_t kp = engram_qgemm_padded_inputs_grouped(k, group), np = engram_qgemm_padded_outputs(n),
             groups = engram_qgemm_groups_grouped(k, group);
      float *x = malloc(m * k * sizeof(float)), *w = malloc(n * k * sizeof(float)), *bias = malloc(n * sizeof(float));
      for (size_t i = 0; i < m * k; i++) x[i] = s == 6 ? (i % 2 ? 1.0f : -1.0f) : uniform() * 3;
      for (size_t i = 0; i < n * k; i++) w[i] = s == 6 ? ((i / k) % 2 ? 1.0f : -1.0f) : uniform();
      for (size_t j = 0; j < n; j++) bias[j] = uniform();
      int8_t *packed = malloc(engram_qgemm_packed_bytes_grouped(n, k, group));
      float *wscales = malloc(groups * np * sizeof(float)), *rscales = malloc(m * sizeof(float)),
            *rscales_ref = malloc(m * sizeof(float));
      int32_t *sums = malloc(groups * np * sizeof(int32_t));
      engram_qgemm_pack_grouped(w, n, k, k, group, packed, wscales, sums);
      size_t code_bytes = (size_t)passes * m * kp;
      int8_t *codes = malloc(code_bytes), *codes_ref = malloc(code_bytes);
      engram_quantize_rows_path(x, m, k, k, passes, codes_ref, kp, rscales_ref, ENGRAM_LEVEL_SCALAR);
      engram_quantize_rows_path(x, m, k, k, passes, codes, kp, rscales, path);
      CHECK(memcmp(codes, codes_ref, code_bytes) == 0 && memcmp(rscales, rscales_ref, m * sizeof(float)) == 0,
            "qgemm level %d passes %d m %zu k %zu: quantized codes differ from scalar", path, passes, m, k);
      int32_t *raw = malloc(groups * m * n * sizeof(int32_t));
      engram_qgemm_i32_grouped_path(codes_ref, m, kp, passes, packed, group, wscales, sums, n, k, 0, n, raw, n, path);
      for (size_t g = 0; g < groups; g++)
        for (size_t i = 0; i < m; i++)
          for (size_t j = 0; j < n; j++) {
            int32_t coarse = 0, fine = 0;
            for (size_t p = g * group; p < g * group + group; p++) {
              int32_t c = packed[(j / 16) * 16 * kp + (p / 4) * 64 + (j % 16) * 4 + p % 4];
              coarse += codes_ref[passes * i * kp + p] * c;
              if (passes == 2) fine += codes_ref[(2 * i + 1) * kp + p] * c;
            }
            int32_t want = passes == 2 ? coarse * 256 + fine : coarse, got = raw[(g * m + i) * n + j];
            CHECK(got == want, "qgemm level %d group size %zu passes %d m %zu n %zu k %zu group %zu [%zu, %zu]: %d vs %d",
                  path, group, passes, m, n, k, g, i, j, got, want);
          }
      // C is written, never read: NaN where the product goes must all be overwritten.
      float *ref = malloc(m * n * sizeof(float)), *got = malloc(m * n * sizeof(float));
      for (size_t i = 0; i < m * n; i++) ref[i] = got[i] = NAN;
      engram_qgemm_f32_grouped_path(codes_ref, rscales_ref, m, kp, passes, NULL, packed, group, wscales, sums, n, k, 0,
                                    n, bias, ref, n, ENGRAM_LEVEL_SCALAR);
      engram_qgemm_f32_grouped_path(codes_ref, rscales_ref, m, kp, passes, NULL, packed, group, wscales, sums, n, k, 0,
                                    n, bias, got, n, path);
      CHECK(memcmp(ref, got, m * n * sizeof(float)) == 0,
            "qgemm level %d group size %zu passes %d m %zu n %zu k %zu: floats differ", path, group, passes, m, n, k);
      for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
          double exact = bias[j], size = 0;
          for (size_t p = 0; p < k; p++) {
            exact += (double)x[i * k + p] * w[j * k + p];
            size += fabs((double)x[i * k + p] * w[j * k + p]);
          }
          double bound = (passes == 2 ? 0.01 : 0.03) * size + 1e-5;
          CHECK(fabs(got[i * n + j] - exact) <= bound, "qgemm level %d passes %d [%zu, %zu]: %.9g vs %.9g", path,
                passes, i, j, got[i * n + j], exact);
        }
      free(x), free(w), free(bias), free(packed), free(wscales), free(rscales), free(rscales_ref), free(sums),
          free(codes), free(codes_ref), free(raw), free(ref), free(got);
    }
  // Mixed passes: rows with one dominant channel (and a forced one) at two passes, the same
  // decisions, codes and outputs through the row map as the scalar level.
  {
    size_t m = 11, n = 40, k = 384, kp = engram_qgemm_padded_inputs(k), np = engram_qgemm_padded_outputs(n),
           groups = engram_qgemm_groups(k);
    float *x = malloc(m * k * sizeof(float)), *w = malloc(n * k * sizeof(float)), crest[11];
    for (size_t i = 0; i < m * k; i++) x[i] = uniform();
    for (size_t i = 0; i < n * k; i++) w[i] = uniform();
    for (size_t i = 0; i < m; i++) crest[i] = i == 10 ? 0.0f : 12.0f;
    x[2 * k + 5] = x[7 * k + 300] = 40;
    int8_t *packed = malloc(engram_qgemm_packed_bytes(n, k)), *codes[2];
    float *wscales = malloc(groups * np * sizeof(float)), scales[2][11], *out[2];
    int32_t *sums = malloc(groups * np * sizeof(int32_t)), order[2][11];
    engram_qgemm_pack(w, n, k, k, packed, wscales, sums);
    size_t single[2];
    for (int v = 0; v < 2; v++) {
      int level = v == 0 ? ENGRAM_LEVEL_SCALAR : path;
      codes[v] = calloc(2 * m * kp, 1);
      out[v] = malloc(m * n * sizeof(float));
      single[v] = engram_quantize_rows_mixed_path(x, m, k, k, NULL, crest, codes[v], kp, scales[v], order[v], level);
      engram_qgemm_f32_path(codes[v], scales[v], single[v], kp, 1, order[v], packed, wscales, sums, n, k, 0, n, NULL,
                            out[v], n, level);
      engram_qgemm_f32_path(codes[v] + 2 * single[v] * kp, scales[v] + single[v], m - single[v], kp, 2,
                            order[v] + single[v], packed, wscales, sums, n, k, 0, n, NULL, out[v], n, level);
    }
    CHECK(single[0] == 8 && single[1] == 8, "qgemm level %d mixed: %zu and %zu rows at one pass, not 8", path,
          single[0], single[1]);
    CHECK(memcmp(order[0], order[1], sizeof order[0]) == 0 && memcmp(scales[0], scales[1], sizeof scales[0]) == 0 &&
              memcmp(codes[0], codes[1], 2 * m * kp) == 0,
          "qgemm level %d mixed: quantized differently from scalar", path);
    CHECK(memcmp(out[0], out[1], m * n * sizeof(float)) == 0, "qgemm level %d mixed: floats differ", path);
    free(x), free(w), free(packed), free(wscales), free(sums);
    for (int v = 0; v < 2; v++) free(codes[v]), free(out[v]);
  }
}

// The mixed quantizer's crest test on every level, at widths with and without a tail of 64 and
// of 16 values, with channel factors: each row's limit is set half a unit of the code squares
// above or below its scalar sum (rows with one large value, so that the sum is small and the
// half unit is far above the limit's rounding), so a sum off by one on any level flips a
// decision. Then codes, scales and order against the scalar level, bit for bit.
static void check_quantize_mixed(int path) {
  static const size_t widths[] = {1, 17, 47, 64, 100, 384, 401, 1536};
  for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
    enum { M = 12 };
    size_t k = widths[w], kp = engram_qgemm_padded_inputs_grouped(k, 128);
    float *x = malloc(M * k * sizeof(float)), *channels = malloc(k * sizeof(float)), *scaled = malloc(M * k * sizeof(float));
    for (size_t p = 0; p < k; p++) channels[p] = 0.5f + 0.4f * uniform();
    for (size_t i = 0; i < M * k; i++) x[i] = uniform();
    for (size_t i = 0; i < M; i++) x[i * k + (i * 7) % k] = 60.0f * (i % 2 ? 1.0f : -1.0f);
    if (k > 20) x[3 * k + 20] = NAN, x[5 * k + 11] = INFINITY, x[8 * k + 19] = 0.5f;
    for (size_t i = 0; i < M * k; i++) scaled[i] = x[i] * channels[i % k];
    int8_t *one = calloc(M * kp, 1), *codes[2];
    float one_scales[M], crest[M], scales[2][M];
    int32_t order[2][M];
    int want[M];
    engram_quantize_rows_path(scaled, M, k, k, 1, one, kp, one_scales, ENGRAM_LEVEL_SCALAR);
    for (size_t i = 0; i < M; i++) {
      long long squares = 0;
      for (size_t p = 0; p < k; p++) squares += (long long)one[i * kp + p] * one[i * kp + p];
      want[i] = (int)(i % 2);  // 1: two passes
      double target = (double)squares + (want[i] ? 0.5 : -0.5);
      crest[i] = target > 0 ? (float)sqrt(127.0 * 127.0 * (double)k / target) : 1e30f;
      if (target <= 0) want[i] = 0;
    }
    size_t single[2];
    for (int v = 0; v < 2; v++) {
      codes[v] = calloc(2 * M * kp, 1);
      single[v] = engram_quantize_rows_mixed_path(x, M, k, k, channels, crest, codes[v], kp, scales[v], order[v],
                                                  v == 0 ? ENGRAM_LEVEL_SCALAR : path);
      for (size_t at = 0; at < M; at++) {
        int twice = at >= single[v];
        CHECK(twice == want[order[v][at]], "quantize mixed level %d k %zu: row %d decided %d, not %d", path, k,
              order[v][at], twice, want[order[v][at]]);
      }
    }
    CHECK(single[0] == single[1] && memcmp(order[0], order[1], sizeof order[0]) == 0 &&
              memcmp(scales[0], scales[1], sizeof scales[0]) == 0 && memcmp(codes[0], codes[1], 2 * M * kp) == 0,
          "quantize mixed level %d k %zu: differs from scalar", path, k);
    free(x), free(channels), free(scaled), free(one), free(codes[0]), free(codes[1]);
  }
}

// One head's attention against a double-precision definition, every level that has a kernel
// for the head width, with n past multiples of 16 (K's zero padding) and every score far below
// zero: a softmax whose maximum counted a padding column (0) would clamp every exponential to
// the same smallest value and weigh the values evenly.
static void check_attention(int path) {
  static const size_t lengths[] = {1, 5, 16, 17, 40, 64, 65, 74, 130};
  static const size_t widths[] = {16, 32, 64};
  for (size_t a = 0; a < sizeof(lengths) / sizeof(lengths[0]); a++)
    for (size_t b = 0; b < sizeof(widths) / sizeof(widths[0]); b++) {
      size_t n = lengths[a], d = widths[b], ld = d + 3;
      float *q = malloc(n * ld * sizeof(float)), *k = malloc(n * ld * sizeof(float)), *v = malloc(n * ld * sizeof(float));
      float *out = malloc(n * ld * sizeof(float)), *scratch = malloc(engram_attention_scratch(n, d) * sizeof(float));
      float scale = 1.0f / sqrtf((float)d);
      for (size_t i = 0; i < n * ld; i++) v[i] = uniform(), out[i] = 7.0f;
      for (size_t i = 0; i < n; i++)
        for (size_t p = 0; p < d; p++) {
          q[i * ld + p] = -150.0f / sqrtf((float)d) + 0.3f * uniform();  // scores near -150
          k[i * ld + p] = 1.0f + 0.05f * uniform();
        }
      if (!engram_attention_head_path(q, k, v, out, n, d, ld, scale, scratch, path)) {
        free(q), free(k), free(v), free(out), free(scratch);
        continue;
      }
      double *score = malloc(n * sizeof(double));
      for (size_t i = 0; i < n; i++) {
        double top = -INFINITY, sum = 0;
        for (size_t j = 0; j < n; j++) {
          double dot = 0;
          for (size_t p = 0; p < d; p++) dot += (double)q[i * ld + p] * k[j * ld + p];
          score[j] = dot * scale;
          top = score[j] > top ? score[j] : top;
        }
        CHECK(top < -100, "attention test n %zu d %zu: scores not far below zero (%g)", n, d, top);
        for (size_t j = 0; j < n; j++) sum += (score[j] = exp(score[j] - top));
        for (size_t p = 0; p < d; p++) {
          double want = 0, size = 0;
          for (size_t j = 0; j < n; j++) want += score[j] / sum * v[j * ld + p], size += score[j] / sum * fabs(v[j * ld + p]);
          CHECK(fabs(out[i * ld + p] - want) <= 2e-4 * size + 1e-6, "attention level %d n %zu d %zu [%zu, %zu]: %.9g vs %.9g",
                path, n, d, i, p, out[i * ld + p], want);
        }
        for (size_t p = d; p < ld; p++) CHECK(out[i * ld + p] == 7.0f, "attention level %d: padding written", path);
      }
      free(score), free(q), free(k), free(v), free(out), free(scratch);
    }
}

// Activation codes at the edges, each level against the scalar one bit for bit, at one and two
// passes: ties (a row whose largest magnitude is 127, so t = x: 0.5, 1.5, 126.5 round to even),
// values just under the largest, and rows holding NaN, an infinity or a huge value (the AVX-512
// one-pass loop rounds in its conversion and clamps in a saturating narrowing).
static void check_quantize_edges(int path) {
  enum { K = 48, M = 4 };
  float x[M * K];
  for (int p = 0; p < K; p++) {
    x[p] = p == 0 ? 127.0f : (float)(p % 2 ? p : -p) * 2.5f + (p % 4 ? 0.5f : -0.5f);
    x[K + p] = p % 3 ? 126.99999f : -127.0f;
    x[2 * K + p] = p == 5 ? NAN : p == 9 ? INFINITY : uniform();
    x[3 * K + p] = p == 17 ? -3e38f : uniform();
  }
  for (int passes = 1; passes <= 2; passes++) {
    int8_t codes[2 * M * 64], ref[2 * M * 64];
    float scales[M], ref_scales[M];
    engram_quantize_rows_path(x, M, K, K, passes, ref, 64, ref_scales, ENGRAM_LEVEL_SCALAR);
    engram_quantize_rows_path(x, M, K, K, passes, codes, 64, scales, path);
    CHECK(memcmp(codes, ref, sizeof codes / 2 * (size_t)passes) == 0,
          "quantize edges level %d passes %d: codes differ from scalar", path, passes);
    CHECK(memcmp(scales, ref_scales, sizeof scales) == 0,
          "quantize edges level %d passes %d: scales differ from scalar", path, passes);
  }
}

int main(int argc, char **argv) {
  int level = engram_cpu_level();
  if (argc > 1) {
    int expected = engram_cpu_level_named(argv[1]);
    if (expected < 0) {
      fprintf(stderr, "kernels_driver: unknown level '%s' on this architecture\n", argv[1]);
      return 2;
    }
    if (expected != level) {
      fprintf(stderr, "kernels_driver: dispatch level is %s, expected %s\n", engram_cpu_level_name(level), argv[1]);
      return 1;
    }
  }
  for (int path = ENGRAM_LEVEL_SCALAR; path <= level; path++) {
    check_f32(path);
    check_i8(path);
    check_scan_i8(path);
    check_select(path);
    check_gemm(path);
    check_elementwise(path);
    check_qgemm(path);
    check_quantize_edges(path);
    check_quantize_mixed(path);
    check_attention(path);
  }
  // The public entry points run the dispatch level: compare them with the level's own path.
  {
    float q[384], rows[384 * 5], a[5], b[5];
    for (int j = 0; j < 384; j++) q[j] = uniform();
    for (int j = 0; j < 384 * 5; j++) rows[j] = uniform();
    engram_dot_f32_rows(q, rows, 384, 5, a);
    engram_dot_f32_rows_path(q, rows, 384, 5, b, level);
    CHECK(memcmp(a, b, sizeof(a)) == 0, "engram_dot_f32_rows differs from level %d", level);
    CHECK(engram_dot_f32(q, rows + 384, 384) == b[1], "engram_dot_f32 differs from the row kernel");
  }
  printf("kernels_driver: level %s, %d checks, %d failed\n", engram_cpu_level_name(level), checks, failures);
  return failures ? 1 : 0;
}
