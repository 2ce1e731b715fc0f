// RUN: dlc-opt %s --split-input-file -p target-gpu-unroll | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'target-gpu-unroll{max_trip_count=2}' | filecheck %s --check-prefix=SMALL

// `unrolled` loops of kernels with constant bounds are replicated, outermost first (the copies of
// the loops inside are unrolled too); the induction variable of each copy is a constant.

// CHECK-LABEL: target_gpu.kernel @nested_unrolled
// CHECK-NOT:     loop.for
// CHECK-COUNT-6: loop.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : f32 -> memref<2x3xf32>
// CHECK-NOT:     loop.store
// SMALL-LABEL:   target_gpu.kernel @nested_unrolled
// SMALL-COUNT-2: loop.for %{{.*}} axis "j" kind unrolled {
target_gpu.module @kernels {
  target_gpu.kernel @nested_unrolled(%acc: memref<2x3xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %f = arith.constant 0.0 : f32
    loop.for %i = %c0 to %c2 step %c1 axis "i" kind unrolled {
      loop.for %j = %c0 to %c3 step %c1 axis "j" kind unrolled {
        loop.store %f, %acc[%i, %j] : f32 -> memref<2x3xf32>
      }
    }
    target_gpu.return
  }
}

// -----

// The copies use the constant induction variables, in the loop's order.
// CHECK-LABEL: target_gpu.kernel @constant_indices
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         loop.store %{{.*}}, %{{.*}}[%[[C0]]]
// CHECK-NEXT:    loop.store %{{.*}}, %{{.*}}[%[[C1]]]
target_gpu.module @kernels {
  target_gpu.kernel @constant_indices(%acc: memref<2xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %f = arith.constant 0.0 : f32
    loop.for %i = %c0 to %c2 step %c1 axis "i" kind unrolled {
      loop.store %f, %acc[%i] : f32 -> memref<2xf32>
    }
    target_gpu.return
  }
}

// -----

// Loops of host functions stay (host code is the CPU's).
// CHECK-LABEL: func.func @negative_host_function
// CHECK:         loop.for %{{.*}} axis "h" kind unrolled
func.func @negative_host_function(%acc: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %f = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c2 step %c1 axis "h" kind unrolled {
    loop.store %f, %acc[%i] : f32 -> memref<2xf32>
  }
  func.return
}

// -----

// Loops of more than max_trip_count (64) iterations, with dynamic bounds, or of another kind
// stay.
// CHECK-LABEL: target_gpu.kernel @negative_kept_loops
// CHECK:         loop.for %{{.*}} axis "long" kind unrolled
// CHECK:         loop.for %{{.*}} axis "dynamic" kind unrolled
// CHECK:         loop.for %{{.*}} axis "serial" {
target_gpu.module @kernels {
  target_gpu.kernel @negative_kept_loops(%acc: memref<128xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %f = arith.constant 0.0 : f32
    loop.for %i = %c0 to %c128 step %c1 axis "long" kind unrolled {
      loop.store %f, %acc[%i] : f32 -> memref<128xf32>
    }
    loop.for %i = %c0 to %n step %c1 axis "dynamic" kind unrolled {
      loop.store %f, %acc[%i] : f32 -> memref<128xf32>
    }
    loop.for %i = %c0 to %c2 step %c1 axis "serial" {
      loop.store %f, %acc[%i] : f32 -> memref<128xf32>
    }
    target_gpu.return
  }
}
