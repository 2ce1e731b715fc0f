/* What both device runtimes share: the last error and the lock (see dlc_gpu.h). */
#include "dlc_gpu.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static __thread char last_error[2048];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

const char *dlc_last_error(void) { return last_error; }

int dlc_gpu_fail(const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(last_error, sizeof last_error, format, arguments);
    va_end(arguments);
    return -1;
}

void dlc_gpu_lock(void) { pthread_mutex_lock(&lock); }
void dlc_gpu_unlock(void) { pthread_mutex_unlock(&lock); }
