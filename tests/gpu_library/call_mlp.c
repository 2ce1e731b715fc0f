/* A C program that calls a GPU library's entry function (tests/test_gpu_artifacts.py): @mlp of
 * TWO_LAYERS, x (8x16) and w1 (16x32) float32 read from stdin, the output (8x4) written to
 * stdout. argv[1], if given and not empty, is the driver library to open. */
#include <stdio.h>

int mlp(const void *x, const void *w1, void *out);
const char *dlc_last_error(void);
int dlc_set_driver_library(const char *path);

int main(int argc, char **argv) {
    static float x[8 * 16], w1[16 * 32], out[8 * 4];
    if (fread(x, sizeof x, 1, stdin) != 1 || fread(w1, sizeof w1, 1, stdin) != 1)
        return 2;
    if (argc > 1 && argv[1][0] != '\0' && dlc_set_driver_library(argv[1]) != 0) {
        fprintf(stderr, "dlc_set_driver_library: %s\n", dlc_last_error());
        return 3;
    }
    if (mlp(x, w1, out) != 0) {
        fprintf(stderr, "mlp failed: %s\n", dlc_last_error());
        return 1;
    }
    fwrite(out, sizeof out, 1, stdout);
    return 0;
}
