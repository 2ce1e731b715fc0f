/* dlc's thread pool keeps each participant on its home shard (tests/test_thread_pool.py):
 * regions of 8 chunks on 2 threads, back to back; each chunk busy-waits ~50 us and records the
 * thread that ran it. A region "kept its homes" when the caller (participant 0) ran chunks 0-3
 * and one pool thread ran chunks 4-7. Prints the number of such regions out of 200. A pool
 * that hands chunks out from one shared counter interleaves them (the caller 0, 2, ...; the
 * pool thread 1, 3, ...) and keeps no region's homes; a descheduled pool thread makes the
 * caller run (steal) all 8, which counts as not kept. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

void dlc_parallel_for(void (*task)(void *, int64_t, int64_t), void *data, int64_t trip,
                      int32_t threads);

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void record(void *data, int64_t first, int64_t last) {
  pthread_t *ran = data;
  for (int64_t i = first; i < last; i++) {
    int64_t until = now_ns() + 50000;
    while (now_ns() < until) {
    }
    ran[i] = pthread_self();
  }
}

int main(void) {
  pthread_t me = pthread_self();
  int kept = 0;
  for (int region = 0; region < 200; region++) {
    pthread_t ran[8];
    dlc_parallel_for(record, ran, 8, 2);
    int homes = 1;
    for (int i = 0; i < 8; i++) {
      int mine = pthread_equal(ran[i], me);
      if (mine != (i < 4) || !pthread_equal(ran[i], ran[i < 4 ? 0 : 4])) homes = 0;
    }
    kept += homes;
  }
  printf("%d\n", kept);
  return 0;
}
