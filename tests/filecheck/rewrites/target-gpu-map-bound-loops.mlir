// RUN: dlc-opt %s --split-input-file -p target-gpu-map-bound-loops | filecheck %s

// Each bound loop becomes lb + id * step of its thread or block coordinate, guarded where the
// launch has more threads (or blocks) along its axis than the loop has iterations.

// A loop of 4 blocks around a thread loop whose upper bound is a minui (a split's partial last
// tile): the thread loop is guarded by its bound.
// CHECK-LABEL: target_gpu.kernel @partial_tile_guarded
// CHECK-SAME:    (%[[A:.*]]: memref<1000xf32>, %[[OUT:.*]]: memref<1000xf32>)
// CHECK:         %[[BID:.*]] = target_gpu.block_id "x"
// CHECK-NEXT:    %[[TID:.*]] = target_gpu.thread_id "x"
// CHECK-NEXT:    %[[BASE:.*]] = arith.muli %[[BID]], %{{.*}} : index
// CHECK-NEXT:    %[[REM:.*]] = arith.subi %{{.*}}, %[[BASE]] : index
// CHECK-NEXT:    %[[UB:.*]] = arith.minui %{{.*}}, %[[REM]] : index
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi ult, %[[TID]], %[[UB]] : index
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK-NEXT:      %{{.*}} = loop.load %[[A]][%[[I]]]
// CHECK:           loop.store %{{.*}}, %[[OUT]][%[[I]]]
// CHECK-NOT:     loop.for
target_gpu.module @kernels {
  target_gpu.kernel @partial_tile_guarded(%a: memref<1000xf32>, %out: memref<1000xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    %c1000 = arith.constant 1000 : index
    loop.for %b = %c0 to %c4 step %c1 axis "i.0" kind bound thread "blockIdx.x" {
      %base = arith.muli %b, %c256 : index
      %rem = arith.subi %c1000, %base : index
      %ub = arith.minui %c256, %rem : index
      loop.for %t = %c0 to %ub step %c1 axis "i.1" kind bound thread "threadIdx.x" {
        %i = arith.addi %base, %t : index
        %x = loop.load %a[%i] : memref<1000xf32> -> f32
        %y = arith.negf %x : f32
        loop.store %y, %out[%i] : f32 -> memref<1000xf32>
      }
    }
    target_gpu.return
  }
}

// -----

// Exact trip counts need no guard; a serial loop around the bound loops stays.
// CHECK-LABEL: target_gpu.kernel @exact_no_guard
// CHECK:         %[[BY:.*]] = target_gpu.block_id "y"
// CHECK-NEXT:    %[[TX:.*]] = target_gpu.thread_id "x"
// CHECK-NEXT:    loop.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "n" {
// CHECK-NEXT:      %[[V:.*]] = loop.load %{{.*}}[%[[N]], %[[BY]], %[[TX]]]
// CHECK-NOT:     scf.if
// CHECK:         target_gpu.return
target_gpu.module @kernels {
  target_gpu.kernel @exact_no_guard(%a: memref<4x8x16xf32>, %out: memref<4x8x16xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    loop.for %n = %c0 to %c4 step %c1 axis "n" {
      loop.for %y = %c0 to %c8 step %c1 axis "y" kind bound thread "blockIdx.y" {
        loop.for %x = %c0 to %c16 step %c1 axis "x" kind bound thread "threadIdx.x" {
          %v = loop.load %a[%n, %y, %x] : memref<4x8x16xf32> -> f32
          loop.store %v, %out[%n, %y, %x] : f32 -> memref<4x8x16xf32>
        }
      }
    }
    target_gpu.return
  }
}

// -----

// A loop from 2 step 2: iv = tid * 2 + 2; the launch has 8 threads (the other loop), so this
// loop of 4 iterations is guarded.
// CHECK-LABEL: target_gpu.kernel @step_offset_shorter_loop
// CHECK:         %[[TID:.*]] = target_gpu.thread_id "x"
// CHECK-NEXT:    %[[SCALED:.*]] = arith.muli %[[TID]], %[[C2:.*]] : index
// CHECK-NEXT:    %[[IV:.*]] = arith.addi %[[SCALED]], %[[C2]] : index
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi ult, %[[IV]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK-NEXT:      loop.store %{{.*}}, %{{.*}}[%[[IV]]]
// CHECK:         loop.store %{{.*}}, %{{.*}}[%[[TID]]]
target_gpu.module @kernels {
  target_gpu.kernel @step_offset_shorter_loop(%out: memref<10xf32>, %other: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c10 = arith.constant 10 : index
    %f = arith.constant 1.0 : f32
    loop.for %i = %c2 to %c10 step %c2 axis "i" kind bound thread "threadIdx.x" {
      loop.store %f, %out[%i] : f32 -> memref<10xf32>
    }
    loop.for %j = %c0 to %c8 step %c1 axis "j" kind bound thread "threadIdx.x" {
      loop.store %f, %other[%j] : f32 -> memref<8xf32>
    }
    target_gpu.return
  }
}

// -----

// A store outside every thread loop runs once per block in the loop IR: on the GPU only the
// thread at 0 of each dimension with more than one thread runs it.
// CHECK-LABEL: target_gpu.kernel @block_level_store_on_thread_zero
// CHECK:         %[[TY:.*]] = target_gpu.thread_id "y"
// CHECK-NEXT:    %[[TX:.*]] = target_gpu.thread_id "x"
// CHECK:         %[[ON_Y:.*]] = arith.cmpi ult, %[[TY]], %[[ONE:.*]] : index
// CHECK-NEXT:    scf.if %[[ON_Y]] {
// CHECK-NEXT:      %[[ON_X:.*]] = arith.cmpi ult, %[[TX]], %[[ONE]] : index
// CHECK-NEXT:      scf.if %[[ON_X]] {
// CHECK-NEXT:        loop.store %{{.*}}, %[[SUM:.*]][%{{.*}}] : f32 -> memref<1xf32>
target_gpu.module @kernels {
  target_gpu.kernel @block_level_store_on_thread_zero(%out: memref<4x8xf32>, %sum: memref<1xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %f = arith.constant 1.0 : f32
    loop.for %y = %c0 to %c4 step %c1 axis "y" kind bound thread "threadIdx.y" {
      loop.for %x = %c0 to %c8 step %c1 axis "x" kind bound thread "threadIdx.x" {
        loop.store %f, %out[%y, %x] : f32 -> memref<4x8xf32>
      }
    }
    loop.store %f, %sum[%c0] : f32 -> memref<1xf32>
    target_gpu.return
  }
}

// -----

// With one thread per block, a block-level store is the thread's own: no guard.
// CHECK-LABEL: target_gpu.kernel @negative_one_thread_per_block
// CHECK:         %[[BX:.*]] = target_gpu.block_id "x"
// CHECK-NEXT:    loop.store %{{.*}}, %{{.*}}[%[[BX]]]
// CHECK-NEXT:    target_gpu.return
target_gpu.module @kernels {
  target_gpu.kernel @negative_one_thread_per_block(%out: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %f = arith.constant 1.0 : f32
    loop.for %b = %c0 to %c16 step %c1 axis "b" kind bound thread "blockIdx.x" {
      loop.store %f, %out[%b] : f32 -> memref<16xf32>
    }
    target_gpu.return
  }
}
