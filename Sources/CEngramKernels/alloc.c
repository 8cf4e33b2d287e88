#define _GNU_SOURCE
#include "engram_kernels.h"
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

// A scan over millions of rows touches a new 4 KiB page every few rows; on 2 MiB pages the
// TLB covers the whole stream and the page walks disappear. Linux hands out transparent huge
// pages only to 2 MiB-aligned ranges, and by default (THP "madvise") only when asked.
enum { HUGE_PAGE = 2 * 1024 * 1024 };

void *engram_alloc_rows(size_t bytes) {
  if (bytes == 0) bytes = 1;
  size_t alignment = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
  void *pointer = NULL;
  if (posix_memalign(&pointer, alignment, bytes) != 0) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (alignment == HUGE_PAGE) {
    // Advice only: failure (no THP in this kernel) leaves ordinary pages.
    (void)madvise(pointer, (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1), MADV_HUGEPAGE);
  }
#endif
  return pointer;
}

void engram_free_rows(void *pointer) { free(pointer); }
