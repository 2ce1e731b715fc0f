/* Runs an entry function of a dlc shared library on raw input files: the test harness of the
 * cross-compilation tests (tests/test_cross_compile.py), built for the host with cc and for
 * AArch64 with aarch64-linux-gnu-gcc (run under qemu-aarch64).
 *
 *   run_entry LIBRARY ENTRY INPUT.bin... -- OUTPUT.bin:BYTES...
 *
 * The entry's ABI is dlc's destination-passing one: void ENTRY(void *input0, ...,
 * void *output0, ...), one pointer per buffer (row-major, the dtypes of the library's
 * dlc_metadata), inputs then outputs; the callee allocates nothing the caller sees. Inputs
 * are read whole; outputs of BYTES bytes are zeroed, 64-byte aligned, and written back whole.
 * A library with a C interface exports only `<prefix>_*` and `dlc_prefix`: the entry is then
 * found as `dlc.load` finds it, through `<prefix>_dlc_symbol(ENTRY)`.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUFFERS 8

typedef void (*entry_fn)();
typedef const void *(*symbol_fn)(const char *);

/* ENTRY by name: exported, or (a library with a C interface) through <prefix>_dlc_symbol. */
static entry_fn find_entry(void *library, const char *name) {
    void *entry = dlsym(library, name);
    const char *prefix = (const char *)dlsym(library, "dlc_prefix");
    if (entry == NULL && prefix != NULL) {
        char lookup[256];
        snprintf(lookup, sizeof lookup, "%s_dlc_symbol", prefix);
        symbol_fn symbol = (symbol_fn)dlsym(library, lookup);
        if (symbol != NULL) entry = (void *)symbol(name);
    }
    return (entry_fn)entry;
}

static void *aligned_buffer(size_t bytes) {
    size_t rounded = (bytes + 63) / 64 * 64;
    void *data = aligned_alloc(64, rounded ? rounded : 64);
    if (data == NULL) {
        fprintf(stderr, "run_entry: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    memset(data, 0, rounded ? rounded : 64);
    return data;
}

static void *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (file == NULL || fseek(file, 0, SEEK_END) != 0) {
        fprintf(stderr, "run_entry: cannot read %s\n", path);
        exit(1);
    }
    long size = ftell(file);
    rewind(file);
    void *data = aligned_buffer((size_t)size);
    if (fread(data, 1, (size_t)size, file) != (size_t)size) {
        fprintf(stderr, "run_entry: short read of %s\n", path);
        exit(1);
    }
    fclose(file);
    return data;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: run_entry LIBRARY ENTRY INPUT.bin... -- OUTPUT.bin:BYTES...\n");
        return 1;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "run_entry: %s\n", dlerror());
        return 1;
    }
    entry_fn entry = find_entry(library, argv[2]);
    if (entry == NULL) {
        fprintf(stderr, "run_entry: no entry %s in %s\n", argv[2], argv[1]);
        return 1;
    }
    void *buffers[MAX_BUFFERS];
    const char *outputs[MAX_BUFFERS];
    size_t output_bytes[MAX_BUFFERS];
    int count = 0, first_output = -1;
    for (int i = 3; i < argc; ++i) {
        if (strcmp(argv[i], "--") == 0) {
            first_output = count;
            continue;
        }
        if (count == MAX_BUFFERS) {
            fprintf(stderr, "run_entry: more than %d buffers\n", MAX_BUFFERS);
            return 1;
        }
        if (first_output < 0) {
            buffers[count++] = read_file(argv[i]);
            continue;
        }
        char *colon = strrchr(argv[i], ':');
        if (colon == NULL) {
            fprintf(stderr, "run_entry: expected OUTPUT.bin:BYTES, found %s\n", argv[i]);
            return 1;
        }
        *colon = '\0';
        outputs[count] = argv[i];
        output_bytes[count] = strtoull(colon + 1, NULL, 10);
        buffers[count] = aligned_buffer(output_bytes[count]);
        ++count;
    }
    if (first_output < 0) {
        fprintf(stderr, "run_entry: expected -- before the outputs\n");
        return 1;
    }
    void **b = buffers;
    switch (count) {
    case 1: entry(b[0]); break;
    case 2: entry(b[0], b[1]); break;
    case 3: entry(b[0], b[1], b[2]); break;
    case 4: entry(b[0], b[1], b[2], b[3]); break;
    case 5: entry(b[0], b[1], b[2], b[3], b[4]); break;
    case 6: entry(b[0], b[1], b[2], b[3], b[4], b[5]); break;
    case 7: entry(b[0], b[1], b[2], b[3], b[4], b[5], b[6]); break;
    case 8: entry(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]); break;
    default: fprintf(stderr, "run_entry: no buffers\n"); return 1;
    }
    for (int i = first_output; i < count; ++i) {
        FILE *file = fopen(outputs[i], "wb");
        if (file == NULL || fwrite(buffers[i], 1, output_bytes[i], file) != output_bytes[i]) {
            fprintf(stderr, "run_entry: cannot write %s\n", outputs[i]);
            return 1;
        }
        fclose(file);
    }
    return 0;
}
