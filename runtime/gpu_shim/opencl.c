/* The OpenCL device runtime of a dlc GPU library (see dlc_gpu.h): libOpenCL.so.1 is opened
 * with dlopen at first use (no OpenCL SDK to build against: the few types and functions used
 * are declared here, as in the OpenCL 1.2 headers). */
#include "dlc_gpu.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_bitfield;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_event *cl_event;

#define CL_SUCCESS 0
#define CL_DEVICE_TYPE_GPU (1 << 2)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF
#define CL_MEM_READ_WRITE (1 << 0)
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_TRUE 1

#define OPENCL_FUNCTIONS(X)                                                                     \
    X(cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *))                         \
    X(cl_int, clGetDeviceIDs, (cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *)) \
    X(cl_context, clCreateContext,                                                              \
      (const intptr_t *, cl_uint, const cl_device_id *, void *, void *, cl_int *))              \
    X(cl_command_queue, clCreateCommandQueue, (cl_context, cl_device_id, cl_bitfield, cl_int *)) \
    X(cl_program, clCreateProgramWithSource,                                                    \
      (cl_context, cl_uint, const char **, const size_t *, cl_int *))                           \
    X(cl_int, clBuildProgram,                                                                   \
      (cl_program, cl_uint, const cl_device_id *, const char *, void *, void *))                \
    X(cl_int, clGetProgramBuildInfo,                                                            \
      (cl_program, cl_device_id, cl_uint, size_t, void *, size_t *))                            \
    X(cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *))                          \
    X(cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *))                       \
    X(cl_int, clEnqueueNDRangeKernel,                                                           \
      (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,    \
       cl_uint, const cl_event *, cl_event *))                                                  \
    X(cl_mem, clCreateBuffer, (cl_context, cl_bitfield, size_t, void *, cl_int *))              \
    X(cl_int, clReleaseMemObject, (cl_mem))                                                     \
    X(cl_int, clEnqueueWriteBuffer,                                                             \
      (cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, cl_uint,               \
       const cl_event *, cl_event *))                                                           \
    X(cl_int, clEnqueueReadBuffer,                                                              \
      (cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint, const cl_event *,    \
       cl_event *))                                                                             \
    X(cl_int, clReleaseProgram, (cl_program))                                                 \
    X(cl_int, clReleaseContext, (cl_context))                                                 \
    X(cl_int, clFinish, (cl_command_queue))

#define DECLARE(result, name, parameters) static result(*p_##name) parameters;
OPENCL_FUNCTIONS(DECLARE)

static char driver_path[4096] = "libOpenCL.so.1";
static cl_context context;
static cl_command_queue queue;
static cl_program program;

int dlc_set_driver_library(const char *path) {
    if (context != NULL)
        return dlc_gpu_fail("dlc_set_driver_library: the OpenCL device is already open");
    if (strlen(path) >= sizeof driver_path)
        return dlc_gpu_fail("dlc_set_driver_library: path too long");
    strcpy(driver_path, path);
    return 0;
}

static int load_driver(void) {
    void *library = dlopen(driver_path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL)
        return dlc_gpu_fail("no OpenCL: cannot load %s (%s)", driver_path, dlerror());
#define RESOLVE(result, name, parameters)                                                      \
    p_##name = (result(*) parameters)dlsym(library, #name);                                    \
    if (p_##name == NULL)                                                                      \
        return dlc_gpu_fail("no OpenCL: %s lacks %s", driver_path, #name);
    OPENCL_FUNCTIONS(RESOLVE)
    return 0;
}

/* The first GPU of any platform, else the first device of any (PoCL's CPU device). */
static int pick_device(cl_device_id *device) {
    cl_platform_id platforms[16];
    cl_uint count = 0;
    cl_int status = p_clGetPlatformIDs(16, platforms, &count);
    if (status != CL_SUCCESS || count == 0)
        return dlc_gpu_fail("no OpenCL platform (clGetPlatformIDs returned %d)", status);
    if (count > 16)
        count = 16;
    const cl_bitfield types[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL};
    for (int t = 0; t < 2; t++)
        for (cl_uint p = 0; p < count; p++)
            if (p_clGetDeviceIDs(platforms[p], types[t], 1, device, NULL) == CL_SUCCESS)
                return 0;
    return dlc_gpu_fail("no OpenCL device found");
}

static int build(cl_device_id device, const char *source) {
    cl_int status;
    cl_program built = p_clCreateProgramWithSource(context, 1, &source, NULL, &status);
    if (status != CL_SUCCESS)
        return dlc_gpu_fail("clCreateProgramWithSource failed (%d)", status);
    status = p_clBuildProgram(built, 1, &device, "", NULL, NULL);
    if (status == CL_SUCCESS) {
        program = built;
        return 0;
    }
    size_t size = 0;
    char *log = NULL;
    if (p_clGetProgramBuildInfo(built, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) ==
            CL_SUCCESS &&
        (log = calloc(size + 1, 1)) != NULL)
        p_clGetProgramBuildInfo(built, device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    dlc_gpu_fail("the OpenCL C program failed to build (%d): %s", status, log ? log : "");
    free(log);
    p_clReleaseProgram(built);
    return -1;
}

int dlc_gpu_open(const char *source) {
    if (program != NULL)
        return 0;
    cl_device_id device;
    cl_int status;
    if (p_clFinish == NULL && load_driver() != 0)
        return -1;
    if (pick_device(&device) != 0)
        return -1;
    if (context == NULL) {
        cl_context created = p_clCreateContext(NULL, 1, &device, NULL, NULL, &status);
        if (status != CL_SUCCESS)
            return dlc_gpu_fail("clCreateContext failed (%d)", status);
        queue = p_clCreateCommandQueue(created, device, 0, &status);
        if (status != CL_SUCCESS) {
            p_clReleaseContext(created);
            return dlc_gpu_fail("clCreateCommandQueue failed (%d)", status);
        }
        context = created;
    }
    return build(device, source);
}

int dlc_gpu_alloc(size_t nbytes, dlc_buffer *buffer) {
    cl_int status;
    cl_mem memory = p_clCreateBuffer(context, CL_MEM_READ_WRITE, nbytes ? nbytes : 1, NULL, &status);
    if (status != CL_SUCCESS)
        return dlc_gpu_fail("clCreateBuffer of %zu bytes failed (%d)", nbytes, status);
    *buffer = (dlc_buffer)memory;
    return 0;
}

void dlc_gpu_free(dlc_buffer buffer) { p_clReleaseMemObject((cl_mem)buffer); }

int dlc_gpu_write(dlc_buffer buffer, const void *host, size_t nbytes) {
    if (nbytes == 0)
        return 0;
    cl_int status = p_clEnqueueWriteBuffer(queue, (cl_mem)buffer, CL_TRUE, 0, nbytes, host, 0,
                                           NULL, NULL);
    return status == CL_SUCCESS ? 0 : dlc_gpu_fail("clEnqueueWriteBuffer failed (%d)", status);
}

int dlc_gpu_read(dlc_buffer buffer, void *host, size_t nbytes) {
    cl_int status = nbytes == 0 ? p_clFinish(queue)
                                : p_clEnqueueReadBuffer(queue, (cl_mem)buffer, CL_TRUE, 0,
                                                        nbytes, host, 0, NULL, NULL);
    return status == CL_SUCCESS ? 0 : dlc_gpu_fail("clEnqueueReadBuffer failed (%d)", status);
}

int dlc_gpu_launch(void **kernel, const char *name, const size_t grid[3], const size_t block[3],
                   int count, void *const *values, const size_t *sizes) {
    cl_int status;
    if (*kernel == NULL) {
        *kernel = p_clCreateKernel(program, name, &status);
        if (status != CL_SUCCESS)
            return dlc_gpu_fail("clCreateKernel(%s) failed (%d)", name, status);
    }
    for (int i = 0; i < count; i++) {
        status = p_clSetKernelArg((cl_kernel)*kernel, (cl_uint)i, sizes[i], values[i]);
        if (status != CL_SUCCESS)
            return dlc_gpu_fail("clSetKernelArg(%s, %d) failed (%d)", name, i, status);
    }
    size_t global[3];
    for (int d = 0; d < 3; d++)
        global[d] = grid[d] * block[d];
    status = p_clEnqueueNDRangeKernel(queue, (cl_kernel)*kernel, 3, NULL, global, block, 0, NULL,
                                      NULL);
    return status == CL_SUCCESS ? 0
                                : dlc_gpu_fail("clEnqueueNDRangeKernel(%s) failed (%d)", name,
                                               status);
}
