/* Runs the YOLO-style detector (benchmarks.model_zoo.yolo_style) from its library over runtime
 * shapes, exported with the prefix "yolo" (tests/test_runtime_images.py):
 *
 *   run_shaped N H W INPUT.bin OUTPUT.bin
 *
 * reads x (N x 3 x H x W float32) from INPUT.bin, sizes the outputs with yolo_output_shapes,
 * runs yolo_run_shaped, prints each output's shape ("head4 1x6x8x8") and writes head4 then
 * head8 to OUTPUT.bin. Shapes the model refuses: yolo_last_error() on stderr, exit 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "yolo.h"

static float *read_floats(const char *path, size_t count) {
    float *data = malloc(count * sizeof *data + 1);
    FILE *file = fopen(path, "rb");
    if (data == NULL || file == NULL || fread(data, sizeof *data, count, file) != count) {
        fprintf(stderr, "run_shaped: cannot read %zu floats from %s\n", count, path);
        exit(1);
    }
    fclose(file);
    return data;
}

static size_t elements(const int64_t *shape, int rank) {
    size_t count = 1;
    for (int d = 0; d < rank; ++d) count *= (size_t)shape[d];
    return count;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: run_shaped N H W INPUT.bin OUTPUT.bin\n");
        return 1;
    }
    struct yolo_shapes shapes = {
        .input_x = {atoll(argv[1]), 3, atoll(argv[2]), atoll(argv[3])},
    };
    int code = yolo_output_shapes(&shapes);
    if (code != YOLO_OK) {
        fprintf(stderr, "run_shaped: %s: %s\n", yolo_error_string(code), yolo_last_error());
        return 1;
    }
    struct yolo_inputs inputs = {read_floats(argv[4], elements(shapes.input_x, 4))};
    size_t head4 = elements(shapes.output_head4, YOLO_OUTPUT_HEAD4_NDIM);
    size_t head8 = elements(shapes.output_head8, YOLO_OUTPUT_HEAD8_NDIM);
    float *results = malloc((head4 + head8) * sizeof *results + 1);
    struct yolo_outputs outputs = {results, results + head4};
    code = yolo_run_shaped(&shapes, &inputs, &outputs);
    if (code != YOLO_OK) {
        fprintf(stderr, "run_shaped: %s: %s\n", yolo_error_string(code), yolo_last_error());
        return 1;
    }
    const int64_t *dims[2] = {shapes.output_head4, shapes.output_head8};
    const char *names[2] = {"head4", "head8"};
    for (int i = 0; i < 2; ++i)
        printf("%s %lldx%lldx%lldx%lld\n", names[i], (long long)dims[i][0],
               (long long)dims[i][1], (long long)dims[i][2], (long long)dims[i][3]);
    FILE *file = fopen(argv[5], "wb");
    if (file == NULL || fwrite(results, sizeof *results, head4 + head8, file) != head4 + head8) {
        fprintf(stderr, "run_shaped: cannot write %s\n", argv[5]);
        return 1;
    }
    fclose(file);
    free(results);
    free((void *)inputs.x);
    return 0;
}
