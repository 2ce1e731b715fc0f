// RUN: dlc-opt %s --split-input-file -p target-gpu-vectorize | filecheck %s

// A `vectorized` loop of 2, 4, 8 or 16 lanes becomes vector loads, stores and arithmetic; the
// lane index goes (it is the loop's lower bound), scalars are broadcast.

// CHECK-LABEL: target_gpu.kernel @scale_rows
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xf32>, %[[OUT:.*]]: memref<8x4xf32>, %[[S:.*]]: f32)
// CHECK-NOT:     loop.for
// CHECK:         target_gpu.thread_id "x"
// CHECK-NEXT:    %[[LANE0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.block "scale"
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[A]][%[[ROW:.*]], %[[LANE0]]] : memref<8x4xf32> -> vector<4xf32>
// CHECK-NEXT:      %[[SPLAT:.*]] = vector.broadcast %[[S]] : f32 to vector<4xf32>
// CHECK-NEXT:      %[[W:.*]] = arith.mulf %[[V]], %[[SPLAT]] : vector<4xf32>
// CHECK-NEXT:      loop.store %[[W]], %[[OUT]][%[[ROW]], %[[LANE0]]] : vector<4xf32> -> memref<8x4xf32>
target_gpu.module @kernels {
  target_gpu.kernel @scale_rows(%a: memref<8x4xf32>, %out: memref<8x4xf32>, %s: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %row = target_gpu.thread_id "x"
    loop.for %l = %c0 to %c4 step %c1 axis "l" kind vectorized {
      loop.block "scale" reads(%a : memref<8x4xf32>) writes(%out : memref<8x4xf32>) {
        %v = loop.load %a[%row, %l] : memref<8x4xf32> -> f32
        %w = arith.mulf %v, %s : f32
        loop.store %w, %out[%row, %l] : f32 -> memref<8x4xf32>
      }
    }
    target_gpu.return
  }
}

// -----

// The lane index offset by addi (a tile's column) is still the lane; a value the same in every
// lane is stored to every lane by a broadcast.
// CHECK-LABEL: target_gpu.kernel @offset_lanes_uniform_value
// CHECK:         arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[BASE:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[K:.*]] = arith.addi %{{.*}}, %[[BASE]] : index
// CHECK-NEXT:    %[[SPLAT:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK-NEXT:    loop.store %[[SPLAT]], %{{.*}}[%[[K]]] : vector<8xf32> -> memref<16xf32>
target_gpu.module @kernels {
  target_gpu.kernel @offset_lanes_uniform_value(%out: memref<16xf32>) {
    %c4 = arith.constant 4 : index
    %c12 = arith.constant 12 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %f = arith.constant 1.0 : f32
    loop.for %l = %c4 to %c12 step %c1 axis "l" kind vectorized {
      %k = arith.addi %c2, %l : index
      loop.store %f, %out[%k] : f32 -> memref<16xf32>
    }
    target_gpu.return
  }
}

// -----

// 3 lanes (no such vector width), a lane index used other than as the last index, a sum of
// the lanes into one element: the loops stay (they run serially).
// CHECK-LABEL: target_gpu.kernel @negative_not_vectorizable
// CHECK:         loop.for %{{.*}} axis "three" kind vectorized
// CHECK:         loop.for %{{.*}} axis "row" kind vectorized
// CHECK:         loop.for %{{.*}} axis "sum" kind vectorized
// CHECK-NOT:     vector<
target_gpu.module @kernels {
  target_gpu.kernel @negative_not_vectorizable(%a: memref<4x4xf32>, %acc: memref<1xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %f = arith.constant 1.0 : f32
    loop.for %l = %c0 to %c3 step %c1 axis "three" kind vectorized {
      loop.store %f, %a[%c0, %l] : f32 -> memref<4x4xf32>
    }
    loop.for %l = %c0 to %c4 step %c1 axis "row" kind vectorized {
      loop.store %f, %a[%l, %c0] : f32 -> memref<4x4xf32>
    }
    loop.for %l = %c0 to %c4 step %c1 axis "sum" kind vectorized {
      %v = loop.load %a[%c0, %l] : memref<4x4xf32> -> f32
      %s = loop.load %acc[%c0] : memref<1xf32> -> f32
      %t = arith.addf %s, %v : f32
      loop.store %t, %acc[%c0] : f32 -> memref<1xf32>
    }
    target_gpu.return
  }
}
