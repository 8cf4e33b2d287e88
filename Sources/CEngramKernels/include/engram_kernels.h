#ifndef ENGRAM_KERNELS_H
#define ENGRAM_KERNELS_H
#include <stddef.h>
#include <stdint.h>

/// SIMD levels. On x86-64: scalar, AVX2+FMA, AVX-512 (F+BW+VL). On AArch64: scalar and NEON
/// (Advanced SIMD, which every AArch64 CPU has). Levels of one architecture are ordered.
enum {
  ENGRAM_LEVEL_SCALAR = 0,
  ENGRAM_LEVEL_AVX2 = 1,
  ENGRAM_LEVEL_NEON = 1,
  ENGRAM_LEVEL_AVX512 = 2,
};

/// The SIMD level the kernels use: the widest this CPU supports, lowered to
/// `ENGRAM_CPU_LEVEL` (`scalar`, `avx2`, `avx512` on x86-64; `scalar`, `neon` on AArch64) when
/// that names a lower level of this architecture. Read once: the kernels cache it on first use.
int engram_cpu_level(void);

/// The level a name stands for on this architecture (`"avx2"` -> 1 on x86-64), or -1.
int engram_cpu_level_named(const char *name);

/// The name of a level on this architecture (`"scalar"`, `"avx2"`, `"avx512"`, `"neon"`).
const char *engram_cpu_level_name(int level);

/// Whether this CPU has AVX-512 VNNI (vpdpbusd on 512-bit registers) besides level 2.
int engram_cpu_has_avx512_vnni(void);

/// Scores `n` contiguous row-major float32 rows of `dim` against `query`: out[i] = <query, row i>.
/// Every row is reduced with the same instruction sequence, so equal rows get bit-equal scores.
void engram_dot_f32_rows(const float *query, const float *rows, size_t dim, size_t n, float *out);

/// Scores the rows listed in `indices` (row numbers into `base`): out[i] = <query, base[indices[i]]>.
/// Bit-equal to `engram_dot_f32_rows` for the same row.
void engram_dot_f32_gather(const float *query, const float *base, size_t dim, const int32_t *indices,
                           size_t n, float *out);

/// `engram_dot_f32_rows` on a chosen level (`ENGRAM_LEVEL_*`); a level above the dispatch level
/// runs at the dispatch level. For testing the levels against each other. Levels differ in
/// rounding (lane count, fused multiply-add), within the bound documented in the tests.
void engram_dot_f32_rows_path(const float *query, const float *rows, size_t dim, size_t n, float *out,
                              int path);

/// `engram_dot_f32_gather` on a chosen level, like `engram_dot_f32_rows_path`.
void engram_dot_f32_gather_path(const float *query, const float *base, size_t dim,
                                const int32_t *indices, size_t n, float *out, int path);

/// One float32 dot product with the same reduction as the row kernels.
float engram_dot_f32(const float *a, const float *b, size_t dim);

/// Integer dot products of signed int8 `query` codes with `n` contiguous int8 rows of `dim`
/// bytes: out[i] = sum_j query[j] * rows[i][j], exact for codes in -127...127. `row_sums[i]` must be sum_j rows[i][j]
/// (the VNNI path biases the query to unsigned and subtracts 128 * row_sums[i]).
void engram_dot_i8_rows(const int8_t *query, const int8_t *rows, size_t dim, size_t n,
                        const int32_t *row_sums, int32_t *out);

/// `engram_dot_i8_rows` on a chosen level (`ENGRAM_LEVEL_*`; level 2 is the AVX-512 VNNI path
/// when the CPU has VNNI, else AVX2); never above the dispatch level. Every level is exact
/// for codes in -127...127 (what `engram_quantize_rows_i8` writes): the AVX2 path's
/// vpmaddubsw pairs cannot saturate there. For testing the levels against each other.
void engram_dot_i8_rows_path(const int8_t *query, const int8_t *rows, size_t dim, size_t n,
                             const int32_t *row_sums, int32_t *out, int path);

/// The int8 scan of `n` contiguous rows: row i's score is `(float)dot(query, row i) * scales[i]`
/// (bit for bit `engram_dot_i8_rows` then a float32 multiply); the positions and scores of the
/// rows whose score is at least `threshold` (ordered: NaN never passes) go to `picks` and
/// `scores` in row order, and their count is returned (both arrays need room for `n`).
/// `row_sums` as for `engram_dot_i8_rows`.
size_t engram_scan_i8_rows(const int8_t *query, const int8_t *rows, size_t dim, size_t n, const int32_t *row_sums,
                           const float *scales, float threshold, int32_t *picks, float *scores);

/// `engram_scan_i8_rows` on a chosen level, like `engram_dot_i8_rows_path`.
size_t engram_scan_i8_rows_path(const int8_t *query, const int8_t *rows, size_t dim, size_t n,
                                const int32_t *row_sums, const float *scales, float threshold, int32_t *picks,
                                float *scores, int path);

/// One signed int8 dot product on a chosen path: 0 scalar, 1 AVX2 or NEON, 2 AVX-512 VNNI; a
/// path the CPU lacks falls back to the next narrower one. Exact for codes in -127...127 on
/// every path, and for -128 too on the scalar, NEON and VNNI paths. For testing the kernels
/// against each other.
int32_t engram_dot_i8_path(const int8_t *a, const int8_t *b, size_t n, int path);

/// Validates and unit-normalizes `n` rows of `dim` floats from `src` into `dst` (may alias).
/// Returns 0 when every row is finite and non-zero; 1 when a component is NaN or infinite
/// (`*bad_row`, `*bad_column` set); 2 when a row has zero (or underflowing) norm (`*bad_row`).
int engram_normalize_rows(const float *src, float *dst, size_t n, size_t dim, size_t *bad_row,
                          size_t *bad_column);

/// Quantizes `n` unit rows to int8 with one scale per row (max |x| / 127): codes, scales and
/// the per-row sum of codes the VNNI kernel needs. Returns the largest quantization error,
/// max_i || rows[i] - scales[i] * codes[i] ||, which bounds how
/// far an int8 score can be from the exact one.
float engram_quantize_rows_i8(const float *rows, size_t n, size_t dim, int8_t *codes, float *scales,
                              int32_t *sums);

/// A fast non-cryptographic 64-bit checksum of `length` bytes, chained through `seed`.
uint64_t engram_checksum64(const void *data, size_t length, uint64_t seed);

/// C = alpha * A · Wᵀ for a few rows of A, without the operand packing of BLAS sgemm:
/// C[i * ldc + j] = alpha * sum_p A[i * lda + p] * W[j * ldw + p] for i < m, j < n, p < k.
/// W is [n x k] row-major (the layout of safetensors linear weights). Fast while A (m x k)
/// fits in L2, say m <= 32; for larger m a packed sgemm wins.
void engram_gemm_nt_small(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                          const float *w, size_t ldw, float *c, size_t ldc);

/// `engram_gemm_nt_small` on a chosen path (`ENGRAM_LEVEL_*`: 0 portable, 1 AVX2+FMA or NEON,
/// 2 AVX-512); a path above the dispatch level runs at the dispatch level. For testing the
/// paths against each other.
void engram_gemm_nt_path(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                         const float *w, size_t ldw, float *c, size_t ldc, int path);

/// e^x as the softmax kernels compute it (Cephes expf polynomial, about 1 ulp; inputs clamped
/// to the finite range), for testing against libm.
float engram_exp_approx(float x);

/// erf(x) as the GELU kernels compute it (Eigen's rational approximation, absolute error below
/// 5e-7), for testing against libm.
float engram_erf_approx(float x);

/// For `rows` rows of `n` floats `ld` apart: x[r * ld + j] += bias[j], then when `gelu` is
/// non-zero x = 0.5 · x · (1 + erf(x / √2)), the exact GELU of BERT.
void engram_bias_gelu_rows(float *x, size_t rows, size_t n, size_t ld, const float *bias, int gelu);

/// `engram_bias_gelu_rows` on a chosen level (`ENGRAM_LEVEL_*`), never above the dispatch
/// level. For testing the levels against each other.
void engram_bias_gelu_rows_path(float *x, size_t rows, size_t n, size_t ld, const float *bias, int gelu,
                                int path);

/// Softmax in place of each of `rows` contiguous rows of `n` floats: subtract the row's
/// maximum, exponentiate, divide by the sum.
void engram_softmax_rows(float *x, size_t rows, size_t n);

/// `engram_softmax_rows` on a chosen level, like `engram_bias_gelu_rows_path`.
void engram_softmax_rows_path(float *x, size_t rows, size_t n, int path);

/// Scaled dot-product attention of one head over `n` tokens: out[i] = softmax(scale · q[i] · kᵀ) · v
/// for i < n, where the rows of q, k, v and out are `d` floats wide and `ld` floats apart (one
/// head's columns of the packed query, key, value and context matrices). `scratch` holds
/// `engram_attention_scratch(n, d)` floats. The softmax's exponentials are those of
/// `engram_softmax_rows`; its division comes last, as Σ_j e_j v_j / Σ_j e_j. Returns 1, or 0
/// without writing anything when this CPU level has no kernel for `d` (the AVX-512 kernel
/// takes d = 16, 32, 48, 64): the caller then uses BLAS.
int engram_attention_head(const float *q, const float *k, const float *v, float *out, size_t n, size_t d,
                          size_t ld, float scale, float *scratch);
/// `engram_attention_head` on a chosen level: level 0 always runs (portable C, the reference
/// for tests); a level with no kernel for `d` returns 0.
int engram_attention_head_path(const float *q, const float *k, const float *v, float *out, size_t n, size_t d,
                               size_t ld, float scale, float *scratch, int path);
/// Floats of scratch `engram_attention_head` needs: (d + 4) · n rounded up to 16.
size_t engram_attention_scratch(size_t n, size_t d);

/// rows × width: out[r] = LayerNorm(a[r] + b[r]) · gamma + beta (b may be NULL: a[r] alone);
/// `out` may alias `a` or `b`. The variance is the mean square deviation (two passes).
void engram_add_layer_norm(const float *a, const float *b, float *out, size_t rows, size_t width,
                           const float *gamma, const float *beta, float epsilon);

/// `engram_add_layer_norm` on a chosen level, like `engram_bias_gelu_rows_path`.
void engram_add_layer_norm_path(const float *a, const float *b, float *out, size_t rows, size_t width,
                                const float *gamma, const float *beta, float epsilon, int path);

/// Writes the positions i < n with scores[i] >= threshold to `out` (room for n), in
/// increasing order, and returns how many. NaN scores never pass. For top-k scans, where
/// almost every score is below the heap's threshold.
size_t engram_select_at_least(const float *scores, size_t n, float threshold, int32_t *out);

/// `engram_select_at_least` on a chosen path (`ENGRAM_LEVEL_*`: 0 portable, 1 AVX2 or NEON,
/// 2 AVX-512); a path above the dispatch level runs at the dispatch level. For testing the
/// paths against each other.
size_t engram_select_at_least_path(const float *scores, size_t n, float threshold, int32_t *out,
                                   int path);

/// Reads `bytes` sequentially with the widest loads of the dispatch level and returns a sum
/// of them (so the read cannot be optimized away): the memory-bandwidth floor of a scan.
uint64_t engram_read_bytes(const void *data, size_t bytes);

/// Allocates `bytes` for row storage: 64-byte aligned, and from 2 MiB up 2 MiB aligned with
/// transparent huge pages requested (Linux), so long scans do not walk page tables. NULL when
/// out of memory. Free with `engram_free_rows`.
void *engram_alloc_rows(size_t bytes);

/// Frees memory from `engram_alloc_rows` (NULL is ignored).
void engram_free_rows(void *pointer);

/// One part of a parallel region: called with the region's context and a part in 0..<parts.
typedef void (*engram_part_fn)(void *context, int part);

/// Runs fn(context, part) for every part in 0..<parts and returns when all have finished.
/// The calling thread takes parts too; the others go to a persistent pool of threads that spin
/// briefly between regions (so short regions don't pay a kernel wake-up) and then park. One
/// region runs at a time: a call made while another region is running (from another thread,
/// or nested inside a part) runs its parts serially on the calling thread.
void engram_parallel(int parts, engram_part_fn fn, void *context);


/// Int8 products for linear layers (`qgemm_i8.c`). A weight matrix W [n x k] (row-major, a
/// row per output) is packed once by `engram_qgemm_pack`: each row quantized symmetrically to
/// codes -127...127 in groups of 64 inputs (128: the `_grouped` functions below), each group
/// with its own scale (largest |w| / 127), laid out in blocks of 16 output columns, and within
/// a block in steps of 4 inputs, 64 bytes a step (column c's 4 codes at byte 4c). k is padded
/// to a multiple of the group and n to one of 16 with zero codes.
size_t engram_qgemm_padded_inputs(size_t k);
/// n rounded up to a multiple of 16.
size_t engram_qgemm_padded_outputs(size_t n);
/// The groups of 64 inputs of a row: the padded k / 64.
size_t engram_qgemm_groups(size_t k);
/// Bytes of a packed [n x k] matrix.
size_t engram_qgemm_packed_bytes(size_t n, size_t k);
/// Packs W (rows `ldw` apart) into `packed` (`engram_qgemm_packed_bytes`), the scale of row j's
/// group g into scales[g * np + j] and its code sum into sums[g * np + j] (np the padded n;
/// both arrays `engram_qgemm_groups(k) * np` long, zero past n).
void engram_qgemm_pack(const float *w, size_t n, size_t k, size_t ldw, int8_t *packed, float *scales,
                       int32_t *sums);

/// Quantizes `m` rows of `k` floats (`ldx` apart) in `passes` int8 passes (1 or 2), into
/// passes * m code rows `ldq` apart (row i's first at passes * i; zeros from k to k padded to a
/// multiple of 128, or to ldq if that is less: what the products of either weight group read;
/// bytes past it are not written): with
/// t = x * 127 / max|x| over the row, the (coarse) codes rint(t) and, at two passes, the fine
/// codes rint((t - rint(t)) * 256) in the next row, clamped to +-127 (ties to even);
/// scales[i] = max|x| / 127 (one pass) or max|x| / 127 / 256 (two), so that x ~ scale * codes
/// or x ~ scale * (256 coarse + fine).
void engram_quantize_rows(const float *x, size_t m, size_t k, size_t ldx, int passes, int8_t *q, size_t ldq,
                          float *scales);
/// `engram_quantize_rows` on a chosen level; every level writes the same codes.
void engram_quantize_rows_path(const float *x, size_t m, size_t k, size_t ldx, int passes, int8_t *q, size_t ldq,
                               float *scales, int path);
/// Quantizes each of the `m` rows at one pass, or at two when its crest factor measured on its
/// one-pass codes, 127 / rms(codes), exceeds crest[i] (0: always two; infinity: never): a row
/// dominated by a few outlier channels keeps its other channels only at two passes. Returns m1,
/// the rows at one pass: positions 0..<m1 hold them (codes at row p of q, `ldq` apart), in input
/// order, and positions m1..<m the two-pass rows (coarse codes at row 2p, fine at 2p + 1);
/// scales[p] is position p's scale and order[p] its input row. q needs 2m rows; the codes and
/// decisions are the same on every level. When `channels` is not NULL, what is quantized (and
/// measured) is x[i, p] * channels[p]: a smoothed input, whose weights were multiplied by the
/// channel's inverse factor when they were packed (see `BertModel+Smoothing.swift`).
size_t engram_quantize_rows_mixed(const float *x, size_t m, size_t k, size_t ldx, const float *channels,
                                  const float *crest, int8_t *q, size_t ldq, float *scales, int32_t *order);
/// `engram_quantize_rows_mixed` on a chosen level.
size_t engram_quantize_rows_mixed_path(const float *x, size_t m, size_t k, size_t ldx, const float *channels,
                                       const float *crest, int8_t *q, size_t ldq, float *scales, int32_t *order,
                                       int path);

/// C[i, j] ~ (A row i) . (W row j) + bias[j] for i < m and col0 <= j < col1 (col0 a multiple of
/// 16), A being `engram_quantize_rows` codes at `passes` passes (passes * m rows `lda` apart,
/// lda >= the padded k, padding zero) with their `row_scales`, and W [n x k] packed by
/// `engram_qgemm_pack` with its `scales` and `sums`. Per group g of 64 inputs, the exact int32
/// s = dot(codes, w) (one pass) or 256 * dot(coarse, w) + dot(fine, w) (two) is added as
/// acc = fma(float(s), scale[g, j], acc) in order of g from 0; then C[i, j] =
/// fma(acc, row_scales[i], bias[j]) (bias 0 when `bias` is NULL), written directly to C's row
/// i, or to row rows[i] when `rows` is not NULL (the order `engram_quantize_rows_mixed` gives):
/// nothing else of C is touched, and C needs no zeroing. The sums are exact on every level
/// (AVX-512 VNNI vpdpbusd, AVX2 vpmaddubsw/vpmaddwd, NEON sdot or portable C, chosen at run
/// time), so all levels give bit-equal results.
void engram_qgemm_f32(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes,
                      const int32_t *rows, const int8_t *packed, const float *scales, const int32_t *sums, size_t n,
                      size_t k, size_t col0, size_t col1, const float *bias, float *c, size_t ldc);
/// `engram_qgemm_f32` on a chosen level (`ENGRAM_LEVEL_*`; 2 is VNNI where the CPU has it, else
/// AVX2; NEON needs the dot-product extension, else portable C), never above the dispatch level.
void engram_qgemm_f32_path(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes,
                           const int32_t *rows, const int8_t *packed, const float *scales, const int32_t *sums,
                           size_t n, size_t k, size_t col0, size_t col1, const float *bias, float *c, size_t ldc,
                           int path);
/// The exact int32 group sums of `engram_qgemm_f32_path`, for tests: s of token i, group g and
/// column j at out[(g * m + i) * ldo + j].
void engram_qgemm_i32_path(const int8_t *a, size_t m, size_t lda, int passes, const int8_t *packed,
                           const float *scales, const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1,
                           int32_t *out, size_t ldo, int path);


/// The same products with weights in groups of `group` inputs, 64 or 128 (any other value
/// means 64): k padded to a multiple of the group, `groups` = padded k / group. A larger group
/// halves the float work per input (one conversion and fused multiply-add per group and output)
/// for a coarser weight grid; multilingual-e5-small packs at 128 (`BertModel.LinearBuilder`).
/// The activations' code rows need `lda` >= the padded k of the group.
size_t engram_qgemm_padded_inputs_grouped(size_t k, size_t group);
size_t engram_qgemm_groups_grouped(size_t k, size_t group);
size_t engram_qgemm_packed_bytes_grouped(size_t n, size_t k, size_t group);
void engram_qgemm_pack_grouped(const float *w, size_t n, size_t k, size_t ldw, size_t group, int8_t *packed,
                               float *scales, int32_t *sums);
void engram_qgemm_f32_grouped(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes,
                              const int32_t *rows, const int8_t *packed, size_t group, const float *scales,
                              const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1, const float *bias,
                              float *c, size_t ldc);
void engram_qgemm_f32_grouped_path(const int8_t *a, const float *row_scales, size_t m, size_t lda, int passes,
                                   const int32_t *rows, const int8_t *packed, size_t group, const float *scales,
                                   const int32_t *sums, size_t n, size_t k, size_t col0, size_t col1,
                                   const float *bias, float *c, size_t ldc, int path);
/// The exact int32 group sums, for tests: token i, group g, column j at out[(g * m + i) * ldo + j].
void engram_qgemm_i32_grouped_path(const int8_t *a, size_t m, size_t lda, int passes, const int8_t *packed,
                                   size_t group, const float *scales, const int32_t *sums, size_t n, size_t k,
                                   size_t col0, size_t col1, int32_t *out, size_t ldo, int path);

#endif
