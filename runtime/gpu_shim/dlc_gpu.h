/* The device runtime a dlc GPU library links: one small C file per API (opencl.c, cuda.c)
 * behind this interface, and the host code dlc generates from a GPU program's host plan
 * (driver/gpu_library.py), which calls it.
 *
 * The driver library (libOpenCL.so.1, libcuda.so.1) is opened with dlopen at first use, so a
 * GPU library links and loads without a GPU SDK. Every function but the DLC_EXPORT ones is
 * hidden (the units are compiled with -fvisibility=hidden); a library with a C interface
 * (runtime/c_api.py) makes those local too and calls them as <prefix>_last_error and
 * <prefix>_set_driver_library. Errors return nonzero and leave a
 * message for dlc_last_error(). Calls are serialised by one lock per library (the host code
 * takes it around each entry call).
 */
#ifndef DLC_GPU_H
#define DLC_GPU_H

#include <stddef.h>
#include <stdint.h>

#define DLC_EXPORT __attribute__((visibility("default")))

/* A device buffer: a cl_mem, or a CUdeviceptr. */
typedef uintptr_t dlc_buffer;

/* One slot of a host function: a device buffer or a host scalar (kept as both an integer and
 * a floating-point value; a launch argument takes the one its type needs). */
typedef struct {
    dlc_buffer buffer;
    int64_t i;
    double f;
} dlc_value;

/* Exported: the message of the last failure of this library (empty if none). */
DLC_EXPORT const char *dlc_last_error(void);

/* Exported: the driver library to dlopen instead of the default (libOpenCL.so.1 or
 * libcuda.so.1), before the first entry call; nonzero once the device is open. */
DLC_EXPORT int dlc_set_driver_library(const char *path);

/* Records a failure message (printf-style) for dlc_last_error; returns -1. */
int dlc_gpu_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

void dlc_gpu_lock(void);
void dlc_gpu_unlock(void);

/* Opens the device once (later calls only make it current): loads the driver library, picks
 * the device (OpenCL: the first GPU of any platform, else the first device; CUDA: device 0),
 * and builds `source` (OpenCL C, or PTX), a null-terminated string. */
int dlc_gpu_open(const char *source);

int dlc_gpu_alloc(size_t nbytes, dlc_buffer *buffer);
void dlc_gpu_free(dlc_buffer buffer);
int dlc_gpu_write(dlc_buffer buffer, const void *host, size_t nbytes);
/* Waits for every launch before it, then copies. */
int dlc_gpu_read(dlc_buffer buffer, void *host, size_t nbytes);

/* Launches kernel `name` on a grid of `grid` blocks of `block` threads with `count` arguments,
 * argument i being `sizes[i]` bytes at `values[i]`; `*kernel` caches the kernel's handle (null
 * before the first launch). */
int dlc_gpu_launch(void **kernel, const char *name, const size_t grid[3], const size_t block[3],
                   int count, void *const *values, const size_t *sizes);

#endif
