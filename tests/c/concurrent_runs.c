/* Concurrent calls of a dlc model library's C interface (tests/test_c_api.py).
 *
 *   concurrent_runs INPUTS.bin OUTPUTS.bin THREADS ROUNDS
 *
 * INPUTS.bin holds K inputs of the small CNN (float32, raw). THREADS pthreads each run every
 * input ROUNDS times, alternating small_cnn_run and small_cnn_run_with_workspace (a workspace
 * of their own), while another thread keeps changing the thread count (set_num_threads 0, 1,
 * 2). Each thread's last outputs go to OUTPUTS.bin (THREADS x K x 10 float32): the test
 * compares every one with the reference. Exits 1 on any error code. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "small_cnn.h"

enum { IN = SMALL_CNN_INPUT_IMAGE_SIZE, OUT = SMALL_CNN_OUTPUT_PROBABILITIES_SIZE };

static float *inputs;
static float *outputs;
static int count, rounds;
static atomic_int failures, running;

static void *worker(void *arg) {
  long t = (long)arg;
  size_t bytes = (SMALL_CNN_WORKSPACE_BYTES + SMALL_CNN_WORKSPACE_ALIGNMENT - 1) /
                 SMALL_CNN_WORKSPACE_ALIGNMENT * SMALL_CNN_WORKSPACE_ALIGNMENT;
  void *workspace = bytes ? aligned_alloc(SMALL_CNN_WORKSPACE_ALIGNMENT, bytes) : NULL;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < count; ++i) {
      int k = (i + (int)t) % count; /* threads start at different inputs */
      struct small_cnn_inputs in = {.image = inputs + (size_t)k * IN};
      struct small_cnn_outputs out = {.probabilities = outputs + ((size_t)t * count + k) * OUT};
      int code = (r + i) % 2 ? small_cnn_run_with_workspace(&in, &out, workspace, bytes)
                             : small_cnn_run(&in, &out);
      if (code != SMALL_CNN_OK) {
        fprintf(stderr, "thread %ld: %s\n", t, small_cnn_error_string(code));
        atomic_fetch_add(&failures, 1);
      }
    }
  }
  free(workspace);
  atomic_fetch_sub(&running, 1);
  return NULL;
}

static void *switcher(void *arg) {
  (void)arg;
  for (int n = 0; atomic_load(&running) > 0; n = (n + 1) % 3)
    if (small_cnn_set_num_threads(n) != SMALL_CNN_OK) atomic_fetch_add(&failures, 1);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s INPUTS.bin OUTPUTS.bin THREADS ROUNDS\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[3]);
  rounds = atoi(argv[4]);
  FILE *file = fopen(argv[1], "rb");
  if (file == NULL) return 2;
  fseek(file, 0, SEEK_END);
  count = (int)(ftell(file) / (long)(IN * sizeof(float)));
  rewind(file);
  inputs = malloc((size_t)count * IN * sizeof(float));
  outputs = calloc((size_t)threads * count * OUT, sizeof(float));
  if (fread(inputs, sizeof(float) * IN, (size_t)count, file) != (size_t)count) return 2;
  fclose(file);

  pthread_t ids[64], control;
  if (threads < 1 || threads > 64) return 2;
  atomic_store(&running, threads);
  for (long t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, worker, (void *)t);
  pthread_create(&control, NULL, switcher, NULL);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  pthread_join(control, NULL);

  file = fopen(argv[2], "wb");
  if (file == NULL) return 2;
  fwrite(outputs, sizeof(float) * OUT, (size_t)threads * count, file);
  fclose(file);
  printf("%d threads x %d inputs x %d rounds, %d failures\n", threads, count, rounds,
         atomic_load(&failures));
  return atomic_load(&failures) ? 1 : 0;
}
