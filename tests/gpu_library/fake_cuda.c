/* A stand-in for libcuda.so.1 that runs nothing and logs every driver call a dlc GPU library
 * makes (tests/test_gpu_artifacts.py): device memory is host memory, kernels are found in the
 * loaded PTX by name (their parameter sizes read from the .entry's .param list), and each
 * launch is logged with its grid, block and argument values. Lines go to stderr:
 *   init | module <bytes> | alloc <n> <ptr> | free <ptr> | htod <ptr> <n> | dtoh <ptr> <n> |
 *   sync | launch <name> <gx> <gy> <gz> <bx> <by> <bz> <arg>...  (args: hex of their bytes)
 * Setting FAKE_CUDA_FAIL_LAUNCH makes every launch fail. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef struct {
    char name[256];
    int count;
    int sizes[64];
} Function;

static char *ptx;

CUresult cuInit(unsigned flags) { (void)flags; fprintf(stderr, "init\n"); return 0; }
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
    (void)device;
    *context = (void *)0x1;
    return 0;
}
CUresult cuCtxSetCurrent(void *context) { (void)context; return 0; }
CUresult cuCtxSynchronize(void) { fprintf(stderr, "sync\n"); return 0; }
CUresult cuGetErrorName(CUresult status, const char **name) {
    (void)status;
    *name = "CUDA_ERROR_FAKE";
    return 0;
}

CUresult cuModuleLoadData(void **module, const void *image) {
    ptx = strdup((const char *)image);
    fprintf(stderr, "module %zu\n", strlen(ptx));
    *module = (void *)0x2;
    return 0;
}

static int param_size(const char *type) {
    if (!strncmp(type, ".u64", 4) || !strncmp(type, ".b64", 4) || !strncmp(type, ".s64", 4) ||
        !strncmp(type, ".f64", 4))
        return 8;
    if (!strncmp(type, ".u32", 4) || !strncmp(type, ".b32", 4) || !strncmp(type, ".s32", 4) ||
        !strncmp(type, ".f32", 4))
        return 4;
    if (!strncmp(type, ".u16", 4) || !strncmp(type, ".b16", 4) || !strncmp(type, ".s16", 4))
        return 2;
    return 1;
}

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
    (void)module;
    char pattern[300];
    snprintf(pattern, sizeof pattern, ".entry %s(", name);
    const char *at = ptx ? strstr(ptx, pattern) : NULL;
    if (at == NULL)
        return 500; /* CUDA_ERROR_NOT_FOUND */
    Function *f = calloc(1, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    const char *end = strchr(at, ')');
    for (const char *p = strstr(at, ".param"); p && p < end && f->count < 64;
         p = strstr(p + 6, ".param"))
        f->sizes[f->count++] = param_size(p + 7);
    *function = f;
    return 0;
}

CUresult cuMemAlloc_v2(unsigned long long *pointer, size_t nbytes) {
    *pointer = (unsigned long long)(uintptr_t)malloc(nbytes);
    fprintf(stderr, "alloc %zu %llx\n", nbytes, *pointer);
    return 0;
}
CUresult cuMemFree_v2(unsigned long long pointer) {
    fprintf(stderr, "free %llx\n", pointer);
    free((void *)(uintptr_t)pointer);
    return 0;
}
CUresult cuMemcpyHtoD_v2(unsigned long long device, const void *host, size_t nbytes) {
    fprintf(stderr, "htod %llx %zu\n", device, nbytes);
    memcpy((void *)(uintptr_t)device, host, nbytes);
    return 0;
}
CUresult cuMemcpyDtoH_v2(void *host, unsigned long long device, size_t nbytes) {
    fprintf(stderr, "dtoh %llx %zu\n", device, nbytes);
    memcpy(host, (const void *)(uintptr_t)device, nbytes);
    return 0;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                        void **extra) {
    (void)shared, (void)stream, (void)extra;
    if (getenv("FAKE_CUDA_FAIL_LAUNCH"))
        return 719; /* CUDA_ERROR_LAUNCH_FAILED */
    const Function *f = function;
    fprintf(stderr, "launch %s %u %u %u %u %u %u", f->name, gx, gy, gz, bx, by, bz);
    for (int i = 0; i < f->count; i++) {
        unsigned long long value = 0;
        memcpy(&value, params[i], (size_t)f->sizes[i]);
        fprintf(stderr, " %llx", value);
    }
    fprintf(stderr, "\n");
    return 0;
}
