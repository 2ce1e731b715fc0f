/* The CUDA device runtime of a dlc GPU library (see dlc_gpu.h): the CUDA driver API of
 * libcuda.so.1, opened with dlopen at first use (no CUDA toolkit to build against: the few
 * types and functions used are declared here as in cuda.h, with their _v2 symbols). The PTX is
 * JIT-compiled by the driver when the module loads. */
#include "dlc_gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

#define CUDA_SUCCESS 0

#define CUDA_FUNCTIONS(X)                                                                       \
    X(cuInit, cuInit, (unsigned int))                                                           \
    X(cuDeviceGet, cuDeviceGet, (CUdevice *, int))                                              \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))              \
    X(cuCtxSetCurrent, cuCtxSetCurrent, (CUcontext))                                            \
    X(cuModuleLoadData, cuModuleLoadData, (CUmodule *, const void *))                           \
    X(cuModuleGetFunction, cuModuleGetFunction, (CUfunction *, CUmodule, const char *))         \
    X(cuMemAlloc, cuMemAlloc_v2, (CUdeviceptr *, size_t))                                       \
    X(cuMemFree, cuMemFree_v2, (CUdeviceptr))                                                   \
    X(cuMemcpyHtoD, cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))                       \
    X(cuMemcpyDtoH, cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))                             \
    X(cuLaunchKernel, cuLaunchKernel,                                                           \
      (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,         \
       unsigned int, unsigned int, CUstream, void **, void **))                                 \
    X(cuCtxSynchronize, cuCtxSynchronize, (void))                                               \
    X(cuGetErrorName, cuGetErrorName, (CUresult, const char **))

#define DECLARE(name, symbol, parameters) static CUresult(*p_##name) parameters;
CUDA_FUNCTIONS(DECLARE)

static char driver_path[4096] = "libcuda.so.1";
static CUcontext context;
static CUmodule module;

int dlc_set_driver_library(const char *path) {
    if (context != NULL)
        return dlc_gpu_fail("dlc_set_driver_library: the CUDA device is already open");
    if (strlen(path) >= sizeof driver_path)
        return dlc_gpu_fail("dlc_set_driver_library: path too long");
    strcpy(driver_path, path);
    return 0;
}

/* Fails with the driver's name for `status` unless it is CUDA_SUCCESS. */
static int check(CUresult status, const char *call) {
    if (status == CUDA_SUCCESS)
        return 0;
    const char *name = NULL;
    if (p_cuGetErrorName == NULL || p_cuGetErrorName(status, &name) != CUDA_SUCCESS || !name)
        name = "unknown error";
    return dlc_gpu_fail("%s failed: %s (%d)", call, name, status);
}

static int load_driver(void) {
    void *library = dlopen(driver_path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL)
        return dlc_gpu_fail("no CUDA driver: cannot load %s (%s)", driver_path, dlerror());
#define RESOLVE(name, symbol, parameters)                                                      \
    p_##name = (CUresult(*) parameters)dlsym(library, #symbol);                                \
    if (p_##name == NULL)                                                                      \
        return dlc_gpu_fail("no CUDA driver: %s lacks %s", driver_path, #symbol);
    CUDA_FUNCTIONS(RESOLVE)
    return 0;
}

int dlc_gpu_open(const char *source) {
    if (module != NULL)
        return check(p_cuCtxSetCurrent(context), "cuCtxSetCurrent");
    CUdevice device;
    if (p_cuInit == NULL && load_driver() != 0)
        return -1;
    if (check(p_cuInit(0), "cuInit") || check(p_cuDeviceGet(&device, 0), "cuDeviceGet"))
        return -1;
    if (context == NULL &&
        check(p_cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain"))
        return -1;
    if (check(p_cuCtxSetCurrent(context), "cuCtxSetCurrent"))
        return -1;
    return check(p_cuModuleLoadData(&module, source), "cuModuleLoadData");
}

int dlc_gpu_alloc(size_t nbytes, dlc_buffer *buffer) {
    CUdeviceptr pointer = 0;
    if (check(p_cuMemAlloc(&pointer, nbytes ? nbytes : 1), "cuMemAlloc"))
        return -1;
    *buffer = (dlc_buffer)pointer;
    return 0;
}

void dlc_gpu_free(dlc_buffer buffer) { p_cuMemFree((CUdeviceptr)buffer); }

int dlc_gpu_write(dlc_buffer buffer, const void *host, size_t nbytes) {
    if (nbytes == 0)
        return 0;
    return check(p_cuMemcpyHtoD((CUdeviceptr)buffer, host, nbytes), "cuMemcpyHtoD");
}

int dlc_gpu_read(dlc_buffer buffer, void *host, size_t nbytes) {
    if (check(p_cuCtxSynchronize(), "cuCtxSynchronize"))
        return -1;
    if (nbytes == 0)
        return 0;
    return check(p_cuMemcpyDtoH(host, (CUdeviceptr)buffer, nbytes), "cuMemcpyDtoH");
}

int dlc_gpu_launch(void **kernel, const char *name, const size_t grid[3], const size_t block[3],
                   int count, void *const *values, const size_t *sizes) {
    (void)count;
    (void)sizes;
    if (*kernel == NULL &&
        check(p_cuModuleGetFunction((CUfunction *)kernel, module, name), "cuModuleGetFunction"))
        return -1;
    CUresult status = p_cuLaunchKernel((CUfunction)*kernel, (unsigned)grid[0], (unsigned)grid[1],
                                       (unsigned)grid[2], (unsigned)block[0], (unsigned)block[1],
                                       (unsigned)block[2], 0, NULL, (void **)values, NULL);
    if (status == CUDA_SUCCESS)
        return 0;
    char call[256];
    snprintf(call, sizeof call, "cuLaunchKernel(%s)", name);
    return check(status, call);
}
