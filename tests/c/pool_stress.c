/* dlc's thread pool under stress (tests/test_thread_pool.py): regions of random trip counts and
 * thread counts, submitted from several threads at once, some with a nested region inside their
 * tasks; every iteration of every region must run exactly once, and every region must be done
 * when dlc_parallel_for returns. Prints "ok" or the first violation. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void dlc_parallel_for(void (*task)(void *, int64_t, int64_t), void *data, int64_t trip,
                      int32_t threads);

struct region {
  _Atomic int *counts;
  int64_t trip;
  int nested; /* each iteration runs a region of 3 iterations over counts[trip + 3 * i...] */
};

static void mark(void *data, int64_t first, int64_t last) {
  struct region *r = data;
  for (int64_t i = first; i < last; i++) {
    atomic_fetch_add(&r->counts[i], 1);
    if (r->nested) {
      struct region inner = {r->counts + r->trip + 3 * i, 3, 0};
      dlc_parallel_for(mark, &inner, 3, 2);
    }
  }
}

static int run(unsigned seed, int regions) {
  _Atomic int *counts = calloc(4 * 4096, sizeof(int));
  for (int n = 0; n < regions; n++) {
    struct region r = {counts, rand_r(&seed) % 4096, rand_r(&seed) % 8 == 0};
    int64_t total = r.nested ? 4 * r.trip : r.trip;
    for (int64_t i = 0; i < total; i++) counts[i] = 0;
    dlc_parallel_for(mark, &r, r.trip, rand_r(&seed) % 6 - 1);
    for (int64_t i = 0; i < total; i++) {
      if (counts[i] != 1) {
        printf("region %d (trip %ld): iteration %ld ran %d times\n", n, (long)r.trip, (long)i,
               (int)counts[i]);
        return 1;
      }
    }
  }
  free((void *)counts);
  return 0;
}

static void *submitter(void *seed) { return (void *)(intptr_t)run((unsigned)(intptr_t)seed, 3000); }

int main(void) {
  pthread_t others[3];
  for (int i = 0; i < 3; i++) pthread_create(&others[i], NULL, submitter, (void *)(intptr_t)(i + 2));
  int failed = run(1, 3000);
  for (int i = 0; i < 3; i++) {
    void *result;
    pthread_join(others[i], &result);
    failed |= (int)(intptr_t)result;
  }
  if (!failed) printf("ok\n");
  return failed;
}
