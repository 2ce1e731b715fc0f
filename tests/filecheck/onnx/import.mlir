// RUN: python3 %S/Inputs/make_model.py conv_block %t.onnx
// RUN: dlc-translate --import-onnx %t.onnx | filecheck %s
// RUN: dlc-translate --import-onnx %t.onnx | dlc-opt --elide-elementsattrs-if-larger=0 | filecheck %s
// RUN: dlc-translate --import-onnx %t.onnx --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: python3 %S/Inputs/make_model.py shape_chain %t.shape.onnx
// RUN: dlc-translate --import-onnx %t.shape.onnx | filecheck %s --check-prefix=FOLD
// RUN: python3 %S/Inputs/make_model.py conv_block_dynamic %t.dynamic.onnx
// RUN: dlc-translate --import-onnx %t.dynamic.onnx --input-shape x=2x3x8x8 -o %t.mlir
// RUN: filecheck %s --check-prefix=SHAPE --input-file %t.mlir

// ONNX -> graph dialect: Conv, Relu, MaxPool, Flatten, Gemm (transB) and Softmax become graph
// ops of one function @main; initializers become constants; the output parses back.

// CHECK-LABEL: func.func @main(%x: tensor<1x3x8x8xf32> {onnx.name = "x"}) -> (tensor<1x10xf32> {onnx.name = "y"})
// CHECK:      %[[W:.*]] = graph.constant dense<{{.*}}> : tensor<4x3x3x3xf32>
// CHECK:      %[[B:.*]] = graph.constant dense<{{.*}}> : tensor<4xf32>
// CHECK-NEXT: %[[CONV:.*]] = graph.conv2d %x, %[[W]], %[[B]] {padding = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT: %[[RELU:.*]] = graph.relu %[[CONV]] : tensor<1x4x8x8xf32>
// CHECK-NEXT: %[[POOL:.*]] = graph.max_pool2d %[[RELU]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
// CHECK-NEXT: %[[FLAT:.*]] = graph.flatten %[[POOL]] : (tensor<1x4x4x4xf32>) -> tensor<1x64xf32>
// Gemm with transB is transpose, matmul and add.
// CHECK:      %[[FCW:.*]] = graph.constant {{.*}} : tensor<10x64xf32>
// CHECK-NEXT: %[[WT:.*]] = graph.transpose %[[FCW]] {perm = array<i64: 1, 0>}
// CHECK-NEXT: %[[MM:.*]] = graph.matmul %[[FLAT]], %[[WT]]
// CHECK:      %[[FC:.*]] = graph.add %[[MM]], %{{.*}} : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
// CHECK-NEXT: %[[Y:.*]] = graph.softmax %[[FC]] {axis = 1 : i64} : tensor<1x10xf32>
// CHECK-NEXT: func.return %[[Y]] : tensor<1x10xf32>

// ONNX node names are the ops' locations.
// LOC: graph.conv2d {{.*}} loc("conv1")
// LOC: graph.relu {{.*}} loc("relu1")
// LOC: graph.softmax {{.*}} loc("softmax1")

// Shape -> Gather -> Unsqueeze -> Concat is computed at import time: only the reshape is left.
// FOLD-LABEL: func.func @main
// FOLD-NEXT:  %y = graph.reshape %x {shape = array<i64: 2, 12>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// FOLD-NEXT:  func.return %y

// --input-shape fixes a dynamic batch dimension.
// SHAPE: func.func @main(%x: tensor<2x3x8x8xf32> {onnx.name = "x"}) -> (tensor<2x10xf32> {onnx.name = "y"})
