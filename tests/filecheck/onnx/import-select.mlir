// RUN: python3 %S/Inputs/make_model.py maxpool_indices %t.pool.onnx
// RUN: dlc-translate --import-onnx %t.pool.onnx | filecheck %s --check-prefix=POOL
// RUN: python3 %S/Inputs/make_model.py loop_window %t.window.onnx
// RUN: dlc-translate --import-onnx %t.window.onnx | filecheck %s --check-prefix=WINDOW

// MaxPool's Indices: one strided slice per tap compared with the max, from the last tap to the
// first (the first match wins), each tap's flat spatial index a constant; then the plane
// offsets (n * C + c) * H * W.
// POOL-LABEL: func.func @main
// POOL-SAME:    -> (tensor<1x2x2x2xf32> {onnx.name = "y"}, tensor<1x2x2x2xi64> {onnx.name = "i"})
// POOL:         %y = graph.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
// POOL-NOT:     graph.pad
// POOL:         %[[LAST:.*]] = graph.constant dense<{{\[\[\[\[}}5, 7], [13, 15]]]]> : tensor<1x1x2x2xi64>
// POOL:         %[[TAP3:.*]] = graph.constant dense<{{\[\[\[\[}}4, 6], [12, 14]]]]>
// POOL-NEXT:    %[[S3:.*]] = graph.slice %x {starts = array<i64: 0, 0, 1, 0>, sizes = array<i64: 1, 2, 2, 2>, steps = array<i64: 1, 1, 2, 2>}
// POOL-NEXT:    %[[EQ3:.*]] = graph.compare %[[S3]], %y {predicate = "eq"}
// POOL-NEXT:    %[[W3:.*]] = graph.where %[[EQ3]], %[[TAP3]], %[[LAST]]
// POOL:         %[[FIRST:.*]] = graph.constant dense<{{\[\[\[\[}}0, 2], [8, 10]]]]>
// POOL:         %[[W1:.*]] = graph.where %{{.*}}, %[[FIRST]], %{{.*}}
// POOL-NEXT:    %[[PLANES:.*]] = graph.constant dense<{{\[\[\[\[}}0]], {{\[\[}}16]]]]> : tensor<1x2x1x1xi64>
// POOL-NEXT:    %i = graph.add %[[W1]], %[[PLANES]]
// POOL-NEXT:    func.return %y, %i

// A Slice in a loop body whose starts and ends are the iteration number plus constants (2 and
// 4): a window of static size 2, gathered at the runtime start (negative from the end, clamped
// to [0, 8 - 2]) plus [0, 1].
// WINDOW-LABEL: func.func @main
// WINDOW:         graph.loop
// WINDOW:         %[[START:.*]] = graph.gather %starts, %{{.*}} : (tensor<1xi64>, tensor<i64>) -> tensor<i64>
// WINDOW:         %[[NEG:.*]] = graph.compare %[[START]], %{{.*}} {predicate = "lt"}
// WINDOW:         %[[WRAPPED:.*]] = graph.add %[[START]], %{{.*}}
// WINDOW-NEXT:    %[[SEL:.*]] = graph.where %[[NEG]], %[[WRAPPED]], %[[START]]
// WINDOW-NEXT:    %[[CLAMPED:.*]] = graph.clip %[[SEL]] {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<i64>
// WINDOW-NEXT:    %[[STEPS:.*]] = graph.constant dense<[0, 1]> : tensor<2xi64>
// WINDOW-NEXT:    %[[AT:.*]] = graph.add %[[CLAMPED]], %[[STEPS]] : (tensor<i64>, tensor<2xi64>) -> tensor<2xi64>
// WINDOW-NEXT:    %window = graph.gather %x, %[[AT]] {axis = 1 : i64} : (tensor<3x8xf32>, tensor<2xi64>) -> tensor<3x2xf32>
// WINDOW-NOT:     graph.slice
