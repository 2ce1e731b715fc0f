/* Whether small_cnn_set_num_threads reaches the model's parallel loops (tests/test_c_api.py).
 *
 * The library's parallel loops run on dlc's thread pool (compiled into the library), which
 * starts threads on demand: a region asked to run on N threads has N - 1 pool threads beside
 * its caller, and they stay. For each count given on the command line this program sets the
 * count, runs the model on zeros and prints "COUNT: THREADS", the number of threads the
 * process then has (the entries of /proc/self/task). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "small_cnn.h"

static int process_threads(void) {
  DIR *tasks = opendir("/proc/self/task");
  if (tasks == NULL) return -1;
  int count = 0;
  for (struct dirent *entry; (entry = readdir(tasks)) != NULL;)
    count += entry->d_name[0] != '.';
  closedir(tasks);
  return count;
}

int main(int argc, char **argv) {
  static float image[SMALL_CNN_INPUT_IMAGE_SIZE];
  static float scores[SMALL_CNN_OUTPUT_PROBABILITIES_SIZE];
  struct small_cnn_inputs in = {.image = image};
  struct small_cnn_outputs out = {.probabilities = scores};
  for (int a = 1; a < argc; ++a) {
    if (small_cnn_set_num_threads(atoi(argv[a])) != SMALL_CNN_OK) return 1;
    if (small_cnn_run(&in, &out) != SMALL_CNN_OK) return 1;
    printf("%s: %d\n", argv[a], process_threads());
  }
  return 0;
}
