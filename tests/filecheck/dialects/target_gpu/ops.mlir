// RUN: dlc-opt %s | filecheck %s
// RUN: %roundtrip | filecheck %s

// CHECK-LABEL: target_gpu.module @kernels
target_gpu.module @kernels {
  target_gpu.kernel @fill(%out: memref<64xf32>, %v: f32) {
    %t = target_gpu.thread_id "x"
    loop.store %v, %out[%t] : f32 -> memref<64xf32>
    target_gpu.return
  }
}
// CHECK-NEXT: target_gpu.kernel @fill(%[[OUT:.*]]: memref<64xf32>, %[[V:.*]]: f32) {
// CHECK-NEXT:   %[[T:.*]] = target_gpu.thread_id "x"
// CHECK-NEXT:   loop.store %[[V]], %[[OUT]][%[[T]]] : f32 -> memref<64xf32>
// CHECK-NEXT:   target_gpu.return
// CHECK-NEXT: }

// A tiled copy through shared memory: every coordinate op, the barrier and shared_alloc.
// CHECK-LABEL: target_gpu.module @m
target_gpu.module @m attributes {note = "kept"} {
  target_gpu.kernel @k(%x: memref<8xf32>) {
    target_gpu.return
  }
  target_gpu.kernel @e() {
    target_gpu.return
  }
  target_gpu.kernel @tiled_copy(%in: memref<64x64xf32>, %out: memref<64x64xf32>, %size: index) attributes {note = "kept"} {
    %tile = target_gpu.shared_alloc : memref<32x32xf32, 3>
    %tx = target_gpu.thread_id "x"
    %ty = target_gpu.thread_id "y"
    %bx = target_gpu.block_id "x"
    %b = target_gpu.block_id "y"
    %dx = target_gpu.block_dim "x"
    %n = target_gpu.block_dim "z"
    %g = target_gpu.grid_dim "x"
    %row0 = arith.muli %b, %dx : index
    %row = arith.addi %row0, %ty : index
    %col0 = arith.muli %bx, %dx : index
    %col = arith.addi %col0, %tx : index
    %v = loop.load %in[%row, %col] : memref<64x64xf32> -> f32
    loop.store %v, %tile[%ty, %tx] : f32 -> memref<32x32xf32, 3>
    target_gpu.barrier
    %w = loop.load %tile[%ty, %tx] : memref<32x32xf32, 3> -> f32
    loop.store %w, %out[%row, %col] : f32 -> memref<64x64xf32>
    target_gpu.return
  }
}
// CHECK-SAME: attributes {note = "kept"} {
// CHECK:      target_gpu.kernel @tiled_copy(%{{.*}}: memref<64x64xf32>, %{{.*}}: memref<64x64xf32>, %{{.*}}: index) attributes {note = "kept"} {
// CHECK-NEXT:   %[[TILE:.*]] = target_gpu.shared_alloc : memref<32x32xf32, 3 : i64>
// CHECK-NEXT:   %{{.*}} = target_gpu.thread_id "x"
// CHECK-NEXT:   %{{.*}} = target_gpu.thread_id "y"
// CHECK-NEXT:   %{{.*}} = target_gpu.block_id "x"
// CHECK-NEXT:   %{{.*}} = target_gpu.block_id "y"
// CHECK-NEXT:   %{{.*}} = target_gpu.block_dim "x"
// CHECK-NEXT:   %{{.*}} = target_gpu.block_dim "z"
// CHECK-NEXT:   %{{.*}} = target_gpu.grid_dim "x"
// CHECK:        loop.store %{{.*}}, %[[TILE]][%{{.*}}, %{{.*}}] : f32 -> memref<32x32xf32, 3 : i64>
// CHECK-NEXT:   target_gpu.barrier
// CHECK-NEXT:   %{{.*}} = loop.load %[[TILE]][%{{.*}}, %{{.*}}] : memref<32x32xf32, 3 : i64> -> f32

// CHECK-LABEL: func.func @host
func.func @host(%x: memref<8xf32>, %buf: memref<64xf32>, %v: f32) attributes {dlc.num_outputs = 1 : i64} {
  %o = arith.constant 1 : index
  %g = arith.constant 2 : index
  %b = arith.constant 4 : index
  %s = arith.constant 1024 : index
  %c64 = arith.constant 64 : index
  target_gpu.launch @m::@k grid(%g, %o, %o) block(%b, %o, %o) args(%x : memref<8xf32>)
  target_gpu.launch @m::@e grid(%g, %o, %o) block(%b, %o, %o) args() dynamic_shared_memory %s
  target_gpu.launch @kernels::@fill grid(%o, %o, %o) block(%c64, %o, %o) args(%buf, %v : memref<64xf32>, f32) {note = "kept"}
  func.return
}
// CHECK-NEXT: %[[O:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[G:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[B:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[S:.*]] = arith.constant 1024 : index
// CHECK-NEXT: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT: target_gpu.launch @m::@k grid(%[[G]], %[[O]], %[[O]]) block(%[[B]], %[[O]], %[[O]]) args(%{{.*}} : memref<8xf32>)
// CHECK-NEXT: target_gpu.launch @m::@e grid(%[[G]], %[[O]], %[[O]]) block(%[[B]], %[[O]], %[[O]]) args() dynamic_shared_memory %[[S]]
// CHECK-NEXT: target_gpu.launch @kernels::@fill grid(%[[O]], %[[O]], %[[O]]) block(%[[C64]], %[[O]], %[[O]]) args(%{{.*}}, %{{.*}} : memref<64xf32>, f32) {note = "kept"}

// Kernels may also sit directly in the top-level module, launched as @name.
// CHECK-LABEL: target_gpu.kernel @top
target_gpu.kernel @top() {
  target_gpu.return
}
func.func @launch_top() {
  %o = arith.constant 1 : index
  target_gpu.launch @top grid(%o, %o, %o) block(%o, %o, %o) args()
  func.return
}
// CHECK: target_gpu.launch @top grid(%{{.*}}, %{{.*}}, %{{.*}}) block(%{{.*}}, %{{.*}}, %{{.*}}) args()
