// RUN: dlc-opt %s | filecheck %s
// RUN: dlc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: dlc-opt %s --elide-elementsattrs-if-larger=2 | filecheck %s --check-prefix=TWO
// RUN: dlc-opt %s --elide-elementsattrs-if-larger=0 | dlc-opt --elide-elementsattrs-if-larger=0 | filecheck %s --check-prefix=FULL
// RUN: dlc-opt %s | not dlc-opt 2>&1 | filecheck %s --check-prefix=REREAD

// Constants of more than 16 elements (the default of --elide-elementsattrs-if-larger) print as
// MLIR's `dense_resource<__elided__>`; smaller ones and splats print in full. Elided IR cannot be
// read back; with --elide-elementsattrs-if-larger=0 every constant prints and round-trips.

// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %large = graph.constant dense_resource<__elided__> : tensor<17xf32>
// CHECK-NEXT:    %small = graph.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi32>
// CHECK-NEXT:    %splat = graph.constant dense<1.000000e+00> : tensor<64x64xf32>
// CHECK-NEXT:    %arith = arith.constant dense_resource<__elided__> : tensor<2x9xi8>

// GENERIC: "graph.constant"() {value = dense_resource<__elided__> : tensor<17xf32>}
// GENERIC: "graph.constant"() {value = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi32>}

// TWO:      %large = graph.constant dense_resource<__elided__> : tensor<17xf32>
// TWO-NEXT: %small = graph.constant dense_resource<__elided__> : tensor<16xi32>
// TWO-NEXT: %splat = graph.constant dense<1.000000e+00> : tensor<64x64xf32>

// FULL:      %large = graph.constant dense<[0.000000e+00, 1.000000e+00, {{.*}}, 1.600000e+01]> : tensor<17xf32>
// FULL-NEXT: %small = graph.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi32>
// FULL-NEXT: %splat = graph.constant dense<1.000000e+00> : tensor<64x64xf32>
// FULL-NEXT: %arith = arith.constant dense<{{\[}}[1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 5, 6, 7, 8, 9]]> : tensor<2x9xi8>

// REREAD:      dlc-opt: error: stdin:3:29
// REREAD-NEXT:     %large = graph.constant dense_resource<__elided__> : tensor<17xf32>
// REREAD-NEXT:                             ^^^^^^^^^^^^^^^^^^^^^^^^^^
// REREAD-NEXT: 'graph.constant' op holds an elided constant (dense_resource<__elided__>): its data was not printed, so it cannot be read back; print the IR with --elide-elementsattrs-if-larger=0
// REREAD-NOT:  Traceback

func.func @constants() -> (tensor<17xf32>, tensor<16xi32>, tensor<64x64xf32>, tensor<2x9xi8>) {
  %large = graph.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]> : tensor<17xf32>
  %small = graph.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi32>
  %splat = graph.constant dense<1.0> : tensor<64x64xf32>
  %arith = arith.constant dense<[[1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 5, 6, 7, 8, 9]]> : tensor<2x9xi8>
  func.return %large, %small, %splat, %arith : tensor<17xf32>, tensor<16xi32>, tensor<64x64xf32>, tensor<2x9xi8>
}
