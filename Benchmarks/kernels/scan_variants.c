// AVX2 scan variants beside the library's kernels and a plain read of the same bytes, all
// timed in one process, alternating every repetition (the order rotates), so a shared host's
// load falls on each alike. 100k x 384 float32 rows (153.6 MB) and their int8 codes (38.8 MB),
// scanned in blocks of 1024 with the select kernel, as VectorIndex scans. Run (x86-64):
//
//   cc -std=gnu11 -O2 -ISources/CEngramKernels/include Sources/CEngramKernels/*.c
//      Benchmarks/kernels/scan_variants.c -o /tmp/scan_variants -lpthread -lm   (one line)
//   ENGRAM_CPU_LEVEL=avx2 /tmp/scan_variants 200 [f32|int8]   (all variants, or one kind)
//
// It checks each variant against the library first (float32 within rounding, int8 exactly).
#include "engram_kernels.h"
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AVX2 __attribute__((target("avx2,fma")))
enum { N = 100000, D = 384, BLOCK = 1024 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

AVX2 static inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

AVX2 static inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

typedef void (*f32_rows)(const float *, const float *, size_t, size_t, float *);
typedef void (*i8_rows)(const int8_t *, const int8_t *, size_t, size_t, int32_t *);

static void library_f32(const float *q, const float *r, size_t d, size_t n, float *o) {
  engram_dot_f32_rows_path(q, r, d, n, o, ENGRAM_LEVEL_AVX2);
}

// One row at a time (as the library) with a software prefetch DISTANCE bytes ahead.
#define PREFETCHING(DISTANCE)                                                                      \
  AVX2 static void prefetch_##DISTANCE(const float *q, const float *rows, size_t dim, size_t n,    \
                                       float *out) {                                               \
    for (size_t i = 0; i < n; i++) {                                                               \
      const float *r = rows + i * dim;                                                             \
      __m256 a0 = _mm256_setzero_ps(), a1 = a0;                                                    \
      for (size_t j = 0; j < dim; j += 16) {                                                       \
        _mm_prefetch((const char *)(r + j) + DISTANCE, _MM_HINT_T0);                               \
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(q + j), a0);                  \
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 8), _mm256_loadu_ps(q + j + 8), a1);          \
      }                                                                                            \
      out[i] = hsum(_mm256_add_ps(a0, a1));                                                        \
    }                                                                                              \
  }
PREFETCHING(1024)
PREFETCHING(4096)

// Four accumulators per row.
AVX2 static void four_accumulators(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) {
    const float *r = rows + i * dim;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t j = 0; j < dim; j += 32) {
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(q + j), a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 8), _mm256_loadu_ps(q + j + 8), a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 16), _mm256_loadu_ps(q + j + 16), a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 24), _mm256_loadu_ps(q + j + 24), a3);
    }
    out[i] = hsum(_mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3)));
  }
}

// Two rows at a time sharing the query's loads (two streams).
AVX2 static void two_rows(const float *q, const float *rows, size_t dim, size_t n, float *out) {
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const float *r = rows + i * dim, *s = r + dim;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
    for (size_t j = 0; j < dim; j += 16) {
      __m256 x = _mm256_loadu_ps(q + j), y = _mm256_loadu_ps(q + j + 8);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j), x, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r + j + 8), y, a1);
      b0 = _mm256_fmadd_ps(_mm256_loadu_ps(s + j), x, b0);
      b1 = _mm256_fmadd_ps(_mm256_loadu_ps(s + j + 8), y, b1);
    }
    out[i] = hsum(_mm256_add_ps(a0, a1));
    out[i + 1] = hsum(_mm256_add_ps(b0, b1));
  }
  if (i < n) library_f32(q, rows + i * dim, dim, n - i, out + i);
}

static const int32_t *row_sums;
static void library_i8(const int8_t *q, const int8_t *r, size_t d, size_t n, int32_t *o) {
  engram_dot_i8_rows_path(q, r, d, n, row_sums, o, ENGRAM_LEVEL_AVX2);
}

// vpmaddubsw with |q| precomputed once per query (loaded from L1 rather than vpabsb per step),
// two accumulators, 64 bytes per step.
AVX2 static void i8_abs_once(const int8_t *q, const int8_t *rows, size_t dim, size_t n, int32_t *out) {
  int8_t magnitude[4096] __attribute__((aligned(32)));
  for (size_t j = 0; j < dim; j++) magnitude[j] = (int8_t)(q[j] < 0 ? -q[j] : q[j]);
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t i = 0; i < n; i++) {
    const int8_t *r = rows + i * dim;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0;
    size_t j = 0;
    for (; j + 64 <= dim; j += 64) {
      __m256i p0 = _mm256_maddubs_epi16(_mm256_load_si256((const __m256i *)(magnitude + j)),
                                        _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(r + j)),
                                                         _mm256_loadu_si256((const __m256i *)(q + j))));
      __m256i p1 = _mm256_maddubs_epi16(_mm256_load_si256((const __m256i *)(magnitude + j + 32)),
                                        _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(r + j + 32)),
                                                         _mm256_loadu_si256((const __m256i *)(q + j + 32))));
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(p0, ones));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(p1, ones));
    }
    int sum = hsum_i32(_mm256_add_epi32(a0, a1));
    for (; j < dim; j++) sum += q[j] * r[j];
    out[i] = sum;
  }
}

// |q| once per query as above, one row at a time (one stream), and the horizontal sums of
// four rows' accumulators shared (two vphaddd levels, one lane add).
AVX2 static void i8_abs_once_sum4(const int8_t *q, const int8_t *rows, size_t dim, size_t n, int32_t *out) {
  int8_t magnitude[4096] __attribute__((aligned(32)));
  for (size_t j = 0; j < dim; j++) magnitude[j] = (int8_t)(q[j] < 0 ? -q[j] : q[j]);
  const __m256i ones = _mm256_set1_epi16(1);
  size_t full = dim & ~(size_t)31, i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256i acc[4];
    for (int t = 0; t < 4; t++) {
      const int8_t *r = rows + (i + (size_t)t) * dim;
      __m256i a = _mm256_setzero_si256();
      for (size_t j = 0; j < full; j += 32) {
        __m256i p = _mm256_maddubs_epi16(_mm256_load_si256((const __m256i *)(magnitude + j)),
                                         _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(r + j)),
                                                          _mm256_loadu_si256((const __m256i *)(q + j))));
        a = _mm256_add_epi32(a, _mm256_madd_epi16(p, ones));
      }
      acc[t] = a;
    }
    __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]), _mm256_hadd_epi32(acc[2], acc[3]));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    _mm_storeu_si128((__m128i *)(out + i), s);
    for (int t = 0; t < 4; t++)
      for (size_t j = full; j < dim; j++) out[i + (size_t)t] += q[j] * rows[(i + (size_t)t) * dim + j];
  }
  if (i < n) i8_abs_once(q, rows + i * dim, dim, n - i, out + i);
}

// The 16-bit widening: the row's bytes sign-extended (vpmovsxbw), the query widened once.
AVX2 static void i8_widening(const int8_t *q, const int8_t *rows, size_t dim, size_t n, int32_t *out) {
  int16_t wide[4096] __attribute__((aligned(32)));
  for (size_t j = 0; j < dim; j++) wide[j] = q[j];
  for (size_t i = 0; i < n; i++) {
    const int8_t *r = rows + i * dim;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0;
    size_t j = 0;
    for (; j + 32 <= dim; j += 32) {
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(r + j))),
                                                   _mm256_load_si256((const __m256i *)(wide + j))));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(r + j + 16))),
                                                   _mm256_load_si256((const __m256i *)(wide + j + 16))));
    }
    int sum = hsum_i32(_mm256_add_epi32(a0, a1));
    for (; j < dim; j++) sum += q[j] * r[j];
    out[i] = sum;
  }
}

// A top-1 scan through the select kernel, as VectorIndex's scan offers blocks to its heap.
static float scan_f32(f32_rows rows_fn, const float *q, const float *rows) {
  float scores[BLOCK], best = -1e30f;
  int32_t picks[BLOCK];
  for (size_t start = 0; start < N; start += BLOCK) {
    size_t count = N - start < BLOCK ? N - start : BLOCK;
    rows_fn(q, rows + start * D, D, count, scores);
    size_t picked = engram_select_at_least(scores, count, best, picks);
    for (size_t i = 0; i < picked; i++)
      if (scores[picks[i]] > best) best = scores[picks[i]];
  }
  return best;
}

static float scan_i8(i8_rows rows_fn, const int8_t *q, const int8_t *codes, const float *scales) {
  int32_t dots[BLOCK], picks[BLOCK];
  float scores[BLOCK], best = -1e30f;
  for (size_t start = 0; start < N; start += BLOCK) {
    size_t count = N - start < BLOCK ? N - start : BLOCK;
    rows_fn(q, codes + start * D, D, count, dots);
    for (size_t j = 0; j < count; j++) scores[j] = (float)dots[j] * scales[start + j];
    size_t picked = engram_select_at_least(scores, count, best, picks);
    for (size_t i = 0; i < picked; i++)
      if (scores[picks[i]] > best) best = scores[picks[i]];
  }
  return best;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 100;
  const char *only = argc > 2 ? argv[2] : "";
  if (reps < 1 || engram_cpu_level() < ENGRAM_LEVEL_AVX2) {
    fprintf(stderr, "usage: scan_variants REPS (on a CPU with AVX2 and FMA)\n");
    return 2;
  }
  float *rows = engram_alloc_rows((size_t)N * D * sizeof(float));
  int8_t *codes = engram_alloc_rows((size_t)N * D);
  float *scales = malloc(N * sizeof(float));
  int32_t *sums = malloc(N * sizeof(int32_t));
  float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
  int32_t *x = malloc(N * sizeof(int32_t)), *y = malloc(N * sizeof(int32_t));
  if (!rows || !codes || !scales || !sums || !a || !b || !x || !y) return 1;
  srand(1);
  for (size_t i = 0; i < (size_t)N * D; i++) rows[i] = ((float)rand() / (float)RAND_MAX - 0.5f) * 0.1f;
  engram_quantize_rows_i8(rows, N, D, codes, scales, sums);
  row_sums = sums;
  float q[D];
  int8_t qc[D];
  for (int j = 0; j < D; j++) {
    q[j] = (float)rand() / (float)RAND_MAX - 0.5f;
    qc[j] = (int8_t)(rand() % 255 - 127);
  }

  const char *names[] = {"floor f32", "library f32", "prefetch 1 KiB", "prefetch 4 KiB", "4 accumulators",
                         "2 rows at once", "floor int8", "library int8", "int8 |q| once", "int8 16-bit", "int8 |q|+sum4"};
  f32_rows f32[] = {library_f32, prefetch_1024, prefetch_4096, four_accumulators, two_rows};
  i8_rows i8[] = {library_i8, i8_abs_once, i8_widening, i8_abs_once_sum4};
  enum { VARIANTS = 11 };
  library_f32(q, rows, D, N, a);
  for (int v = 1; v < 5; v++) {
    f32[v](q, rows, D, N, b);
    double worst = 0;
    for (int i = 0; i < N; i++) worst = fabs(a[i] - b[i]) > worst ? fabs(a[i] - b[i]) : worst;
    if (worst > 1e-5) return fprintf(stderr, "%s differs by %g\n", names[v + 1], worst), 1;
  }
  library_i8(qc, codes, D, N, x);
  for (int v = 1; v < 4; v++) {
    i8[v](qc, codes, D, N, y);
    if (memcmp(x, y, N * sizeof(int32_t)) != 0) return fprintf(stderr, "%s is not exact\n", names[v + 7]), 1;
  }

  double *times[VARIANTS];
  for (int v = 0; v < VARIANTS; v++) times[v] = malloc((size_t)reps * sizeof(double));
  volatile float sink = 0;
  volatile uint64_t read_sink = 0;
  double load[3];
  getloadavg(load, 3);
  double load_before = load[0];
  for (int r = 0; r < reps; r++)
    for (int step = 0; step < VARIANTS; step++) {
      int v = (step + r) % VARIANTS;
      if ((strcmp(only, "f32") == 0 && v >= 6) || (strcmp(only, "int8") == 0 && v < 6)) continue;
      double start = now();
      if (v == 0) read_sink += engram_read_bytes(rows, (size_t)N * D * sizeof(float));
      else if (v < 6) sink += scan_f32(f32[v - 1], q, rows);
      else if (v == 6) read_sink += engram_read_bytes(codes, (size_t)N * (D + 4));
      else sink += scan_i8(i8[v - 7], qc, codes, scales);
      times[v][r] = now() - start;
    }
  getloadavg(load, 3);
  printf("%d repetitions, level %s, load average %.1f before, %.1f after\n", reps,
         engram_cpu_level_name(engram_cpu_level()), load_before, load[0]);
  for (int v = 0; v < VARIANTS; v++) {
    if ((strcmp(only, "f32") == 0 && v >= 6) || (strcmp(only, "int8") == 0 && v < 6)) continue;
    qsort(times[v], (size_t)reps, sizeof(double), by_value);
    double floor = v < 6 ? times[0][reps / 2] : times[6][reps / 2];
    printf("%-16s p50 %7.3f ms  min %7.3f ms  p50 / floor p50 %.2f\n", names[v], times[v][reps / 2] * 1e3,
           times[v][0] * 1e3, times[v][reps / 2] / floor);
  }
  return 0;
}
