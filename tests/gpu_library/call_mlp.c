/* A C program that calls a GPU library through its C interface (tests/test_gpu_artifacts.py):
 * TWO_LAYERS exported with the prefix `mlp` and its header mlp.h; x (8x16) and w1 (16x32)
 * float32 read from stdin, the output (8x4) written to stdout. argv[1], if given and not
 * empty, is the driver library to open. A failed mlp_run exits with its return code. */
#include <stdio.h>

#include "mlp.h"

int main(int argc, char **argv) {
    static float x[MLP_INPUT_X_SIZE], w1[MLP_INPUT_W1_SIZE], out[MLP_OUTPUT_MLP_OUT0_SIZE];
    if (fread(x, sizeof x, 1, stdin) != 1 || fread(w1, sizeof w1, 1, stdin) != 1)
        return 100;
    if (argc > 1 && argv[1][0] != '\0' && mlp_set_driver_library(argv[1]) != MLP_OK) {
        fprintf(stderr, "mlp_set_driver_library: %s\n", mlp_last_error());
        return 101;
    }
    const struct mlp_inputs inputs = {x, w1};
    struct mlp_outputs outputs = {out};
    struct mlp_outputs no_output = {NULL};
    if (mlp_run(NULL, &outputs) != MLP_ERROR_NULL_ARGUMENT ||
        mlp_run(&inputs, &no_output) != MLP_ERROR_NULL_ARGUMENT) {
        fprintf(stderr, "a NULL argument was not refused\n");
        return 102;
    }
    int code = mlp_run(&inputs, &outputs);
    if (code != MLP_OK) {
        fprintf(stderr, "mlp_run returned %d (%s): %s\n", code, mlp_error_string(code),
                mlp_last_error());
        return code;
    }
    fwrite(out, sizeof out, 1, stdout);
    return 0;
}
