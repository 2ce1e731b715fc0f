// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: blocks over the tiles, threads within a tile.
// CHECK-LABEL: func.func @grid
// CHECK:       loop.for %{{.*}} axis "i.0" kind bound thread "blockIdx.x" {
// CHECK-NEXT:    loop.for %{{.*}} axis "i.1" kind bound thread "threadIdx.x" {
func.func @grid(%A: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  loop.for %i = %c0 to %c1024 step %c1 axis "i" {
    loop.block "scale" reads() writes(%A : memref<1024xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<1024xf32> -> f32
      %s = arith.addf %a, %a : f32
      loop.store %s, %A[%i] : f32 -> memref<1024xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %i0, %i1 = transform.loop.split %i [256] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.bind %i0 "blockIdx.x" : !transform.any_op
  transform.loop.bind %i1 "threadIdx.x" : !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.bind' op failed on loop "i" (%i): cannot bind: expected a thread axis among blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, found 'warp.x'
// CHECK:     <{axis = "i", kind = "serial"}>
func.func @negative_unknown_axis(%A: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "fill" reads() writes(%A : memref<4xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<4xf32> -> f32
      loop.store %a, %A[%i] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  transform.loop.bind %i "warp.x" : !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.bind' op failed on loop "j" (%j): cannot bind: expected no other loop bound to threadIdx.x, found loop "i"
// CHECK:     <{axis = "j", kind = "serial"}>
func.func @negative_axis_twice(%A: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "fill" reads() writes(%A : memref<4x4xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<4x4xf32> -> f32
        loop.store %a, %A[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.bind %i "threadIdx.x" : !transform.any_op
  transform.loop.bind %j "threadIdx.x" : !transform.any_op
  transform.yield
}
