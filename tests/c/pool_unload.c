/* dlc's thread pool unloads cleanly (tests/test_thread_pool.py): a program dlopens the pool
 * library given on the command line, runs a region on 3 threads, dlcloses the library, and
 * goes on running (so that a pool thread left in the unmapped code would crash it); then 50
 * times more, load, run on 8 threads and unload at once (pool threads that have not started
 * yet when the library unloads must stop too, not wait for a region). Prints "ok" and the
 * number of threads the process has during the first region and at the end. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

typedef void (*parallel_for)(void (*)(void *, int64_t, int64_t), void *, int64_t, int32_t);

static void add(void *data, int64_t first, int64_t last) {
  double *sums = data;
  for (int64_t i = first; i < last; i++) sums[i] += (double)i;
}

static int process_threads(void) {
  DIR *tasks = opendir("/proc/self/task");
  int count = 0;
  for (struct dirent *entry; tasks != NULL && (entry = readdir(tasks)) != NULL;)
    count += entry->d_name[0] != '.';
  if (tasks != NULL) closedir(tasks);
  return count;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    printf("%s\n", dlerror());
    return 1;
  }
  parallel_for run = (parallel_for)dlsym(library, "dlc_parallel_for");
  static double sums[100000];
  run(add, sums, 100000, 3);
  for (int64_t i = 0; i < 100000; i++)
    if (sums[i] != (double)i) return 1;
  int during = process_threads();
  dlclose(library);
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  for (int round = 0; round < 50; round++) {
    library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return 1;
    run = (parallel_for)dlsym(library, "dlc_parallel_for");
    run(add, sums, 1000, 8);
    dlclose(library);
  }
  nanosleep(&pause, NULL);
  printf("ok %d %d\n", during, process_threads());
  return 0;
}
