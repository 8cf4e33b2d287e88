#include "engram_kernels.h"
#include <math.h>
#include <string.h>

int engram_normalize_rows(const float *src, float *dst, size_t n, size_t dim, size_t *bad_row,
                          size_t *bad_column) {
  for (size_t i = 0; i < n; i++) {
    const float *row = src + i * dim;
    double norm2 = 0;
    for (size_t j = 0; j < dim; j++) {
      float x = row[j];
      if (!isfinite(x)) {
        *bad_row = i;
        *bad_column = j;
        return 1;
      }
      norm2 += (double)x * (double)x;
    }
    // A norm this small cannot be normalized without amplifying rounding noise to 1.
    if (!(norm2 > 1e-30)) {
      *bad_row = i;
      *bad_column = 0;
      return 2;
    }
    float inv = (float)(1.0 / sqrt(norm2));
    float *out = dst + i * dim;
    for (size_t j = 0; j < dim; j++) out[j] = row[j] * inv;
  }
  return 0;
}

float engram_quantize_rows_i8(const float *rows, size_t n, size_t dim, int8_t *codes, float *scales,
                              int32_t *sums) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    const float *row = rows + i * dim;
    int8_t *code = codes + i * dim;
    float peak = 0;
    for (size_t j = 0; j < dim; j++) {
      float a = fabsf(row[j]);
      peak = a > peak ? a : peak;
    }
    float scale = peak > 0 ? peak / 127.0f : 1.0f;
    float inv = 1.0f / scale;
    int32_t sum = 0;
    for (size_t j = 0; j < dim; j++) {
      // Round half away from zero without a libm call, so the loop vectorizes.
      float v = row[j] * inv;
      v = v > 127 ? 127 : (v < -127 ? -127 : v);
      int32_t c = (int32_t)(v + (v >= 0 ? 0.5f : -0.5f));
      code[j] = (int8_t)c;
      sum += c;
    }
    // The error while the row is still in L1, in independent lanes so the loop vectorizes.
    // Float is plenty: the bound is about 1e-2 and its users add a 1e-4 margin.
    float lanes[16] = {0};
    for (size_t j = 0; j < dim; j++) {
      float d = row[j] - scale * (float)code[j];
      lanes[j & 15] += d * d;
    }
    float squares = 0;
    for (int l = 0; l < 16; l++) squares += lanes[l];
    scales[i] = scale;
    sums[i] = sum;
    worst = squares > worst ? squares : worst;
  }
  return (float)sqrt(worst);
}

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t engram_checksum64(const void *data, size_t length, uint64_t seed) {
  const uint64_t p1 = 0x9E3779B185EBCA87ULL, p2 = 0xC2B2AE3D27D4EB4FULL;
  const unsigned char *bytes = (const unsigned char *)data;
  uint64_t h[4] = {seed + p1, seed ^ p2, seed - p1, rotl64(seed, 17) + p2};
  size_t i = 0;
  for (; i + 32 <= length; i += 32) {
    for (int l = 0; l < 4; l++) {
      uint64_t w;
      memcpy(&w, bytes + i + 8 * l, 8);
      h[l] = rotl64(h[l] + w * p2, 31) * p1;
    }
  }
  uint64_t acc = rotl64(h[0], 1) + rotl64(h[1], 7) + rotl64(h[2], 12) + rotl64(h[3], 18);
  for (; i < length; i++) acc = rotl64(acc ^ (bytes[i] * p1), 11) * p2;
  acc ^= (uint64_t)length;
  acc ^= acc >> 33;
  acc *= p2;
  acc ^= acc >> 29;
  return acc;
}
