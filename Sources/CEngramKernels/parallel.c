#define _GNU_SOURCE
#include "engram_kernels.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define PAUSE() __asm__ __volatile__("yield")
#else
#define PAUSE() ((void)0)
#endif

// A persistent pool for the short parallel regions of one forward pass (a query embedding
// has about 24, each some 100 µs): waking a parked thread through the kernel costs about as
// much as a region saves, so workers spin for a while after each region before they park.
//
// One region runs at a time. `ticket` holds the region's generation (high 32 bits) and the
// next unclaimed part (low 32 bits); a participant claims a part by compare-and-swap, so a
// late worker can never run a part of a region that has already moved on: the function and
// context it read are the current region's whenever its claim succeeds.

enum { MAX_WORKERS = 63 };
static const int64_t SPIN_NANOSECONDS = 200000;  // a little longer than the gaps inside a pass

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;  // held by the caller of a region
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_signal = PTHREAD_COND_INITIALIZER;
static _Atomic uint64_t ticket = 0;
static _Atomic int parked = 0;
static _Atomic int finished = 0;
static _Atomic(engram_part_fn) region_fn = NULL;
static _Atomic(void *) region_context = NULL;
static _Atomic int region_parts = 0;
static int workers = 0;  // guarded by region_lock

// Claims and runs parts of the region whose ticket was `seen` until none are left.
static void participate(uint64_t seen) {
  for (;;) {
    uint32_t generation = (uint32_t)(seen >> 32);
    uint32_t next = (uint32_t)seen;
    engram_part_fn fn = atomic_load_explicit(&region_fn, memory_order_relaxed);
    void *context = atomic_load_explicit(&region_context, memory_order_relaxed);
    int parts = atomic_load_explicit(&region_parts, memory_order_relaxed);
    if ((int)next >= parts) return;
    if (atomic_compare_exchange_weak_explicit(&ticket, &seen, seen + 1, memory_order_acq_rel,
                                              memory_order_acquire)) {
      fn(context, (int)next);
      atomic_fetch_add_explicit(&finished, 1, memory_order_release);
      seen = atomic_load_explicit(&ticket, memory_order_acquire);
    }
    if ((uint32_t)(seen >> 32) != generation) return;
  }
}

// `previous` is the generation before the region its creator is about to publish: a worker that
// first ran after the publication and took the generation it read as already done would sit
// out that region (the first region of a process ran on its caller alone: 45 ms of an
// e5-small ingest's first tokenization).
static void *worker_main(void *previous) {
  uint32_t last = (uint32_t)(uintptr_t)previous;
  for (;;) {
    uint64_t seen = atomic_load_explicit(&ticket, memory_order_acquire);
    int64_t deadline = now_ns() + SPIN_NANOSECONDS;
    for (int spin = 1; (uint32_t)(seen >> 32) == last; spin++) {
      PAUSE();
      seen = atomic_load_explicit(&ticket, memory_order_acquire);
      if ((spin & 63) == 0 && now_ns() > deadline) break;
    }
    if ((uint32_t)(seen >> 32) == last) {
      // Park. Announcing first and re-checking after means a caller that publishes a region
      // either sees `parked` and signals, or is seen here: no wake-up is lost.
      pthread_mutex_lock(&park_lock);
      atomic_fetch_add(&parked, 1);
      while ((uint32_t)(atomic_load(&ticket) >> 32) == last) pthread_cond_wait(&park_signal, &park_lock);
      atomic_fetch_sub(&parked, 1);
      pthread_mutex_unlock(&park_lock);
      seen = atomic_load_explicit(&ticket, memory_order_acquire);
    }
    last = (uint32_t)(seen >> 32);
    participate(seen);
  }
  return NULL;
}

void engram_parallel(int parts, engram_part_fn fn, void *context) {
  if (parts <= 1 || pthread_mutex_trylock(&region_lock) != 0) {
    // One part, or another region is running (possibly this thread's own, nested): serial.
    for (int part = 0; part < parts; part++) fn(context, part);
    return;
  }
  int wanted = parts - 1 < MAX_WORKERS ? parts - 1 : MAX_WORKERS;
  uint32_t current = (uint32_t)(atomic_load_explicit(&ticket, memory_order_relaxed) >> 32);
  while (workers < wanted) {
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    int failed = pthread_create(&thread, &attributes, worker_main, (void *)(uintptr_t)current);
    pthread_attr_destroy(&attributes);
    if (failed) break;  // fewer helpers: the caller claims the remaining parts itself
    workers++;
  }
  atomic_store_explicit(&region_fn, fn, memory_order_relaxed);
  atomic_store_explicit(&region_context, context, memory_order_relaxed);
  atomic_store_explicit(&region_parts, parts, memory_order_relaxed);
  atomic_store_explicit(&finished, 0, memory_order_relaxed);
  uint64_t generation = (atomic_load_explicit(&ticket, memory_order_relaxed) >> 32) + 1;
  uint64_t start = (generation & 0xFFFFFFFFu) << 32;
  atomic_store(&ticket, start);  // sequentially consistent: pairs with the parking check
  if (atomic_load(&parked) > 0) {
    pthread_mutex_lock(&park_lock);
    pthread_cond_broadcast(&park_signal);
    pthread_mutex_unlock(&park_lock);
  }
  participate(start);
  // A part still running belongs to a worker; if it was preempted (more runnable threads
  // than cores), yielding lets it finish instead of spinning out this thread's time slice.
  for (int spin = 1; atomic_load_explicit(&finished, memory_order_acquire) < parts; spin++) {
    if (spin % 256 == 0) sched_yield(); else PAUSE();
  }
  pthread_mutex_unlock(&region_lock);
}
