#ifndef ENGRAM_CBLAS_SHIM_H
#define ENGRAM_CBLAS_SHIM_H
// Debian puts OpenBLAS's cblas.h under the openblas pkg-config cflags
// (e.g. /usr/include/x86_64-linux-gnu/openblas-pthread); Homebrew under its prefix.
#include <cblas.h>

// OpenBLAS thread control (not part of the CBLAS standard).
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
#endif
