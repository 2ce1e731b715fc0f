/* Runs the bundled small CNN (examples/small_cnn.onnx) through the C interface of its library.
 *
 *   make                        compiles the model (dlc compile), then this program, and runs it
 *   ./small_cnn_demo [INPUT.bin [OUTPUT.bin]]
 *
 * The input is INPUT.bin (SMALL_CNN_INPUT_IMAGE_SIZE float32 values, raw, row-major) or else a
 * fixed pattern. The program runs the model with small_cnn_run, then again on 2 threads in a
 * workspace it owns (small_cnn_run_with_workspace), checks that both agree, prints the class
 * scores and writes them (raw float32) to OUTPUT.bin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "small_cnn.h"

static int read_input(const char *path, float *image) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) {
    perror(path);
    return 0;
  }
  size_t count = fread(image, sizeof(float), SMALL_CNN_INPUT_IMAGE_SIZE, file);
  fclose(file);
  if (count != SMALL_CNN_INPUT_IMAGE_SIZE) {
    fprintf(stderr, "%s: expected %d float32 values, found %zu\n", path,
            SMALL_CNN_INPUT_IMAGE_SIZE, count);
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  static float image[SMALL_CNN_INPUT_IMAGE_SIZE];
  static float scores[SMALL_CNN_OUTPUT_PROBABILITIES_SIZE];
  static float again[SMALL_CNN_OUTPUT_PROBABILITIES_SIZE];

  if (argc > 1) {
    if (!read_input(argv[1], image)) return 1;
  } else {
    for (int i = 0; i < SMALL_CNN_INPUT_IMAGE_SIZE; ++i)
      image[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
  }

  struct small_cnn_inputs inputs = {.image = image};
  struct small_cnn_outputs outputs = {.probabilities = scores};
  int code = small_cnn_run(&inputs, &outputs);
  if (code != SMALL_CNN_OK) {
    fprintf(stderr, "small_cnn_run: %s\n", small_cnn_error_string(code));
    return 1;
  }

  /* The caller owns the memory: a workspace of the size and alignment the header states. */
  size_t bytes = (SMALL_CNN_WORKSPACE_BYTES + SMALL_CNN_WORKSPACE_ALIGNMENT - 1) /
                 SMALL_CNN_WORKSPACE_ALIGNMENT * SMALL_CNN_WORKSPACE_ALIGNMENT;
  void *workspace = bytes ? aligned_alloc(SMALL_CNN_WORKSPACE_ALIGNMENT, bytes) : NULL;
  if (bytes && workspace == NULL) {
    fprintf(stderr, "cannot allocate the workspace\n");
    return 1;
  }
  small_cnn_set_num_threads(2);
  struct small_cnn_outputs second = {.probabilities = again};
  code = small_cnn_run_with_workspace(&inputs, &second, workspace, bytes);
  free(workspace);
  if (code != SMALL_CNN_OK) {
    fprintf(stderr, "small_cnn_run_with_workspace: %s\n", small_cnn_error_string(code));
    return 1;
  }

  int best = 0;
  for (int i = 0; i < SMALL_CNN_OUTPUT_PROBABILITIES_SIZE; ++i) {
    if (fabsf(scores[i] - again[i]) > 1e-5f * (1.0f + fabsf(scores[i]))) {
      fprintf(stderr, "the two runs disagree at %d: %.9g vs %.9g\n", i, scores[i], again[i]);
      return 1;
    }
    if (scores[i] > scores[best]) best = i;
    printf("probabilities[%d] = %.9g\n", i, scores[i]);
  }
  printf("class %d\n", best);

  if (argc > 2) {
    FILE *file = fopen(argv[2], "wb");
    if (file == NULL ||
        fwrite(scores, sizeof(float), SMALL_CNN_OUTPUT_PROBABILITIES_SIZE, file) !=
            SMALL_CNN_OUTPUT_PROBABILITIES_SIZE) {
      perror(argv[2]);
      return 1;
    }
    fclose(file);
  }
  return 0;
}
