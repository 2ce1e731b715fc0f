/* dlc's thread pool keeps each participant on its home shard (tests/test_thread_pool.py):
 * regions of 8 chunks on 2 threads, back to back; each chunk busy-waits ~50 us and records the
 * thread that ran it and when it started. Prints two counts over 200 regions: those in which
 * the pool thread's first chunk was one of its home shard's (4-7), and those in which it was
 * one of the caller's (0-3). With home shards the second is 0 whatever the load: a participant
 * takes another's chunks only once its own shard is claimed, and the caller claims all of its
 * own before it takes any of the pool thread's, so a pool thread that finds its shard claimed
 * finds the caller's claimed too. A pool that hands out chunks from one shared counter gives
 * a pool thread that arrives while the caller runs chunk 0 the next one, 1. A region the pool
 * thread missed (descheduled: the caller ran all 8) counts in neither. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

void dlc_parallel_for(void (*task)(void *, int64_t, int64_t), void *data, int64_t trip,
                      int32_t threads);

struct region {
  pthread_t ran[8];
  int order[8];
  _Atomic int started;
};

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void record(void *data, int64_t first, int64_t last) {
  struct region *r = data;
  for (int64_t i = first; i < last; i++) {
    r->order[i] = atomic_fetch_add(&r->started, 1);
    r->ran[i] = pthread_self();
    int64_t until = now_ns() + 50000;
    while (now_ns() < until) {
    }
  }
}

int main(void) {
  pthread_t me = pthread_self();
  int home = 0, foreign = 0;
  for (int n = 0; n < 200; n++) {
    struct region r = {.started = 0};
    dlc_parallel_for(record, &r, 8, 2);
    int first = -1;
    for (int i = 0; i < 8; i++)
      if (!pthread_equal(r.ran[i], me) && (first < 0 || r.order[i] < r.order[first])) first = i;
    if (first >= 4) home++;
    else if (first >= 0) foreign++;
  }
  printf("%d %d\n", home, foreign);
  return 0;
}
