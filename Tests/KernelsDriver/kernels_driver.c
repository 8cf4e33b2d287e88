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
    check_select(path);
    check_gemm(path);
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
