// RUN: dlc-opt %s -p test-break-loop | filecheck %s
// RUN: not dlc-opt %s --check-semantics -p loop-default-schedule,test-break-loop,cse 2>&1 | filecheck %s --check-prefix=CAUGHT

// A deliberately wrong pass: the first loop's bounds are swapped, so it runs no more. At the loop
// level, --check-semantics (the loop interpreter) names it.

// CHECK-LABEL: @bounds_swapped
// CHECK:       %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:  %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:  %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:  loop.for %{{.*}} = %[[FOUR]] to %[[ZERO]] step %[[ONE]] axis "i0"
// CAUGHT:      dlc-opt: error: --check-semantics: pass 'test-break-loop' changed the results of @bounds_swapped: output #0: max abs error inf, max rel error inf (4 of 4 elements beyond
func.func @bounds_swapped(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.block "relu" reads(%x : memref<4xf32>) writes(%out : memref<4xf32>) spatial ["i0"] {
      %0 = loop.load %x[%i0] : memref<4xf32> -> f32
      %1 = arith.constant 0.000000e+00 : f32
      %2 = arith.maximumf %0, %1 : f32
      loop.store %2, %out[%i0] : f32 -> memref<4xf32>
    }
  }
  func.return
}
