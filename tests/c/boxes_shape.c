/* Sizes the output of the YOLO-style detector with its head flattened
 * (benchmarks.model_zoo.yolo_style(flat_head=True)) from its library's C interface, exported
 * with the prefix "boxes" (tests/test_runtime_images.py):
 *
 *   boxes_shape N H W
 *
 * prints the shape boxes_output_shapes computes for an input x of N x 3 x H x W ("1x6x80":
 * the header's shape function multiplies the runtime height and width, a semi-affine
 * size). Shapes the model refuses: boxes_last_error() on stderr, exit 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "boxes.h"

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: boxes_shape N H W\n");
        return 1;
    }
    struct boxes_shapes shapes = {
        .input_x = {atoll(argv[1]), 3, atoll(argv[2]), atoll(argv[3])},
    };
    int code = boxes_output_shapes(&shapes);
    if (code != BOXES_OK) {
        fprintf(stderr, "boxes_shape: %s: %s\n", boxes_error_string(code), boxes_last_error());
        return 1;
    }
    printf("%lldx%lldx%lld\n", (long long)shapes.output_boxes[0],
           (long long)shapes.output_boxes[1], (long long)shapes.output_boxes[2]);
    return 0;
}
