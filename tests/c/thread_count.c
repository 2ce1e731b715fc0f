/* Whether small_cnn_set_num_threads reaches the model's parallel loops (tests/test_c_api.py).
 *
 * This program defines GOMP_parallel itself: the library's calls of it bind to this definition
 * (the executable comes first in the lookup scope), which records the team size asked for and
 * forwards to libgomp's. For each count given on the command line it sets the count, runs the
 * model on zeros and prints "COUNT: the sizes asked for" (the distinct ones, in order). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "small_cnn.h"

typedef void (*gomp_parallel_fn)(void (*)(void *), void *, unsigned, unsigned);

static unsigned asked[64];
static int asked_count;

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags) {
  static gomp_parallel_fn real;
  if (real == NULL) real = (gomp_parallel_fn)dlsym(RTLD_NEXT, "GOMP_parallel");
  int seen = 0;
  for (int i = 0; i < asked_count; ++i) seen |= asked[i] == num_threads;
  if (!seen && asked_count < 64) asked[asked_count++] = num_threads;
  real(fn, data, num_threads, flags);
}

int main(int argc, char **argv) {
  static float image[SMALL_CNN_INPUT_IMAGE_SIZE];
  static float scores[SMALL_CNN_OUTPUT_PROBABILITIES_SIZE];
  struct small_cnn_inputs in = {.image = image};
  struct small_cnn_outputs out = {.probabilities = scores};
  for (int a = 1; a < argc; ++a) {
    if (small_cnn_set_num_threads(atoi(argv[a])) != SMALL_CNN_OK) return 1;
    asked_count = 0;
    if (small_cnn_run(&in, &out) != SMALL_CNN_OK) return 1;
    printf("%s:", argv[a]);
    for (int i = 0; i < asked_count; ++i) printf(" %u", asked[i]);
    printf("\n");
  }
  return 0;
}
