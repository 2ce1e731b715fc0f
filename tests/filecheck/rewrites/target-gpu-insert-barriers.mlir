// RUN: dlc-opt %s --split-input-file -p target-gpu-insert-barriers | filecheck %s

// Barriers go between the block-level statements of a kernel (thread loops, statements run
// once per block) that communicate through shared or global memory.

// A shared tile copied then read in a serial loop: a barrier before the read (read after
// write) and one before the next iteration's copy (write after read).
// CHECK-LABEL: target_gpu.kernel @staged_tile
// CHECK:         %[[TILE:.*]] = target_gpu.shared_alloc
// CHECK:         loop.for %{{.*}} axis "k" {
// CHECK-NEXT:      target_gpu.barrier{{$}}
// CHECK-NEXT:      loop.for {{.*}} kind bound thread "threadIdx.x" {
// CHECK-NEXT:        loop.block "copy"
// CHECK:           target_gpu.barrier{{$}}
// CHECK-NEXT:      loop.for {{.*}} kind bound thread "threadIdx.x" {
// CHECK-NEXT:        loop.block "use"
// CHECK-NOT:     target_gpu.barrier
// CHECK:         target_gpu.return
target_gpu.module @kernels {
  target_gpu.kernel @staged_tile(%a: memref<4x64xf32>, %out: memref<4x64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %tile = target_gpu.shared_alloc : memref<64xf32, 3>
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.for %t = %c0 to %c64 step %c1 axis "t" kind bound thread "threadIdx.x" {
        loop.block "copy" reads(%a : memref<4x64xf32>) writes(%tile : memref<64xf32, 3>) {
          %v = loop.load %a[%k, %t] : memref<4x64xf32> -> f32
          loop.store %v, %tile[%t] : f32 -> memref<64xf32, 3>
        }
      }
      loop.for %t = %c0 to %c64 step %c1 axis "t" kind bound thread "threadIdx.x" {
        loop.block "use" reads(%tile : memref<64xf32, 3>) writes(%out : memref<4x64xf32>) {
          %r = arith.subi %c64, %t : index
          %s = arith.subi %r, %c1 : index
          %v = loop.load %tile[%s] : memref<64xf32, 3> -> f32
          loop.store %v, %out[%k, %t] : f32 -> memref<4x64xf32>
        }
      }
    }
    target_gpu.return
  }
}

// -----

// A global buffer written once per block, then read by every thread: the barrier also orders
// global memory.
// CHECK-LABEL: target_gpu.kernel @global_fence
// CHECK:         loop.store %{{.*}}, %[[FLAG:.*]][%{{.*}}] : f32 -> memref<1xf32>
// CHECK-NEXT:    target_gpu.barrier {dlc.global_fence}
// CHECK-NEXT:    loop.for {{.*}} kind bound thread "threadIdx.x" {
// CHECK-NEXT:      loop.load %[[FLAG]]
target_gpu.module @kernels {
  target_gpu.kernel @global_fence(%flag: memref<1xf32>, %out: memref<32xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %one = arith.constant 1.0 : f32
    loop.store %one, %flag[%c0] : f32 -> memref<1xf32>
    loop.for %t = %c0 to %c32 step %c1 axis "t" kind bound thread "threadIdx.x" {
      %v = loop.load %flag[%c0] : memref<1xf32> -> f32
      loop.store %v, %out[%t] : f32 -> memref<32xf32>
    }
    target_gpu.return
  }
}

// -----

// One thread per block: nothing to order.
// CHECK-LABEL: target_gpu.kernel @negative_one_thread
// CHECK-NOT:     target_gpu.barrier
target_gpu.module @kernels {
  target_gpu.kernel @negative_one_thread(%out: memref<1xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tile = target_gpu.shared_alloc : memref<1xf32, 3>
    %one = arith.constant 1.0 : f32
    loop.for %t = %c0 to %c1 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.store %one, %tile[%t] : f32 -> memref<1xf32, 3>
    }
    loop.for %t = %c0 to %c1 step %c1 axis "t" kind bound thread "threadIdx.x" {
      %v = loop.load %tile[%t] : memref<1xf32, 3> -> f32
      loop.store %v, %out[%t] : f32 -> memref<1xf32>
    }
    target_gpu.return
  }
}

// -----

// One statement reading and writing a global buffer in a serial loop: each thread keeps to its
// own elements from one iteration to the next.
// CHECK-LABEL: target_gpu.kernel @negative_own_global_elements
// CHECK-NOT:     target_gpu.barrier
target_gpu.module @kernels {
  target_gpu.kernel @negative_own_global_elements(%out: memref<32xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %one = arith.constant 1.0 : f32
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.for %t = %c0 to %c32 step %c1 axis "t" kind bound thread "threadIdx.x" {
        %v = loop.load %out[%t] : memref<32xf32> -> f32
        %w = arith.addf %v, %one : f32
        loop.store %w, %out[%t] : f32 -> memref<32xf32>
      }
    }
    target_gpu.return
  }
}
