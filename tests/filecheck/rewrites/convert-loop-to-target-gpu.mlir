// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p convert-loop-to-target-gpu | filecheck %s

// Each top-level nest becomes a kernel in target_gpu.module @kernels and a launch in its place;
// negative cases check the diagnostic.

// A split loop bound to blockIdx.x x threadIdx.x: grid 4 x 256 threads; the thread loop's
// upper bound is a minui (the partial last tile), so its body is guarded.
// CHECK-LABEL: func.func @grid_stride_guarded
// CHECK-SAME:    (%[[A:.*]]: memref<1000xf32>, %[[OUT:.*]]: memref<1000xf32>)
// CHECK-NOT:     loop.for
// CHECK:         arith.constant 1000 : index
// CHECK-NEXT:    %[[GRID:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT:    target_gpu.launch @kernels::@grid_stride_guarded_neg grid(%[[GRID]], %[[ONE]], %[[ONE]]) block(%[[BLOCK]], %[[ONE]], %[[ONE]]) args(%[[A]], %[[OUT]] : memref<1000xf32>, memref<1000xf32>)
// CHECK-NEXT:    func.return
// CHECK:       target_gpu.module @kernels {
// CHECK-NEXT:    target_gpu.kernel @grid_stride_guarded_neg(%[[KA:.*]]: memref<1000xf32>, %[[KOUT:.*]]: memref<1000xf32>) {
// CHECK:           %[[BID:.*]] = target_gpu.block_id "x"
// CHECK-NEXT:      %[[TID:.*]] = target_gpu.thread_id "x"
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[BID]], %{{.*}} : index
// CHECK-NEXT:      %[[REM:.*]] = arith.subi %{{.*}}, %[[BASE]] : index
// CHECK-NEXT:      %[[UB:.*]] = arith.minui %{{.*}}, %[[REM]] : index
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[TID]], %[[UB]] : index
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK-NEXT:        loop.block "neg"
// CHECK-NEXT:          %{{.*}} = loop.load %[[KA]][%[[I]]]
// CHECK:               loop.store %{{.*}}, %[[KOUT]][%[[I]]]
// CHECK:         target_gpu.return
func.func @grid_stride_guarded(%a: memref<1000xf32>, %out: memref<1000xf32>) attributes {dlc.num_outputs = 1 : i64} {
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
      loop.block "neg" reads(%a : memref<1000xf32>) writes(%out : memref<1000xf32>) spatial ["i.0", "i.1"] {
        %x = loop.load %a[%i] : memref<1000xf32> -> f32
        %y = arith.negf %x : f32
        loop.store %y, %out[%i] : f32 -> memref<1000xf32>
      }
    }
  }
  func.return
}

// -----

// Exact trip counts need no guard; a serial loop around the bound loops stays in the kernel,
// and a scalar the nest uses becomes a kernel argument.
// CHECK-LABEL: func.func @exact_serial_outside
// CHECK-SAME:    (%[[A:.*]]: memref<4x8x16xf32>, %[[S:.*]]: f32, %[[OUT:.*]]: memref<4x8x16xf32>)
// CHECK:         arith.constant 16 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[SIXTEEN:.*]] = arith.constant 16 : index
// CHECK-NEXT:    target_gpu.launch @kernels::@exact_serial_outside_scale grid(%[[ONE]], %[[EIGHT]], %[[ONE]]) block(%[[SIXTEEN]], %[[ONE]], %[[ONE]]) args(%[[A]], %[[OUT]], %[[S]] : memref<4x8x16xf32>, memref<4x8x16xf32>, f32)
// CHECK:         target_gpu.kernel @exact_serial_outside_scale(%[[KA:.*]]: memref<4x8x16xf32>, %[[KOUT:.*]]: memref<4x8x16xf32>, %[[KS:.*]]: f32) {
// CHECK:           %[[BY:.*]] = target_gpu.block_id "y"
// CHECK-NEXT:      %[[TX:.*]] = target_gpu.thread_id "x"
// CHECK-NEXT:      loop.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "n" {
// CHECK-NEXT:        loop.block "scale"
// CHECK-NEXT:          %[[V:.*]] = loop.load %[[KA]][%[[N]], %[[BY]], %[[TX]]]
// CHECK-NEXT:          %{{.*}} = arith.mulf %[[V]], %[[KS]] : f32
// CHECK-NOT:     scf.if
// CHECK:         target_gpu.return
func.func @exact_serial_outside(%a: memref<4x8x16xf32>, %s: f32, %out: memref<4x8x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %n = %c0 to %c4 step %c1 axis "n" {
    loop.for %y = %c0 to %c8 step %c1 axis "y" kind bound thread "blockIdx.y" {
      loop.for %x = %c0 to %c16 step %c1 axis "x" kind bound thread "threadIdx.x" {
        loop.block "scale" reads(%a : memref<4x8x16xf32>) writes(%out : memref<4x8x16xf32>) spatial ["n", "y", "x"] {
          %v = loop.load %a[%n, %y, %x] : memref<4x8x16xf32> -> f32
          %w = arith.mulf %v, %s : f32
          loop.store %w, %out[%n, %y, %x] : f32 -> memref<4x8x16xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A shared buffer allocated before the nest moves into the kernel; the block-level store of
// the result runs on thread 0; barriers separate the statements that communicate through it.
// CHECK-LABEL: func.func @shared_tree
// CHECK-NOT:     loop.alloc
// CHECK:         target_gpu.launch @kernels::@shared_tree_final
// CHECK:         target_gpu.kernel @shared_tree_final
// CHECK:           %[[TID:.*]] = target_gpu.thread_id "x"
// CHECK-NEXT:      %[[RED:.*]] = target_gpu.shared_alloc : memref<2xf32, 3 : i64>
// CHECK-NEXT:      %[[P:.*]] = loop.alloc local : memref<1xf32>
// CHECK:           loop.for %{{.*}} = %[[TID]] to %{{.*}} step %{{.*}} axis "r" {
// CHECK:           loop.block "partial_store"
// CHECK:             loop.store %{{.*}}, %[[RED]][%[[TID]]] : f32 -> memref<2xf32, 3 : i64>
// CHECK:           target_gpu.barrier{{$}}
// CHECK-NEXT:      %[[FIRST:.*]] = arith.cmpi ult, %[[TID]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[FIRST]] {
// CHECK-NEXT:        loop.block "final"
// CHECK-NOT:     loop.dealloc
func.func @shared_tree(%x: memref<8x64xf32>, %out: memref<8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %red = loop.alloc shared : memref<2xf32>
  loop.for %row = %c0 to %c8 step %c1 axis "row" kind bound thread "blockIdx.x" {
    loop.for %t = %c0 to %c2 step %c1 axis "t" kind bound thread "threadIdx.x" {
      %p = loop.alloc local : memref<1xf32>
      loop.block "partial_init" reads() writes(%p : memref<1xf32>) {
        %z = arith.constant 0.0 : f32
        loop.store %z, %p[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r = %t to %c64 step %c2 axis "r" {
        loop.block "partial" reads(%x : memref<8x64xf32>) writes(%p : memref<1xf32>) reduction ["r"] {
          %v = loop.load %x[%row, %r] : memref<8x64xf32> -> f32
          %acc = loop.load %p[%c0] : memref<1xf32> -> f32
          %s = arith.addf %acc, %v : f32
          loop.store %s, %p[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "partial_store" reads(%p : memref<1xf32>) writes(%red : memref<2xf32>) {
        %v = loop.load %p[%c0] : memref<1xf32> -> f32
        loop.store %v, %red[%t] : f32 -> memref<2xf32>
      }
    }
    loop.block "final" reads(%red : memref<2xf32>) writes(%out : memref<8xf32>) {
      %a = loop.load %red[%c0] : memref<2xf32> -> f32
      %b = loop.load %red[%c1] : memref<2xf32> -> f32
      %s = arith.addf %a, %b : f32
      loop.store %s, %out[%row] : f32 -> memref<8xf32>
    }
  }
  loop.dealloc %red : memref<2xf32>
  func.return
}

// -----

// A local buffer outside the thread loops, indexed by the thread coordinate in its first
// dimension, keeps one thread's slice (registers); an unrolled loop is replicated and a
// vectorized loop becomes vector accesses.
// CHECK-LABEL: func.func @registers_unrolled_vectorized
// CHECK:         target_gpu.kernel @registers_unrolled_vectorized_store
// CHECK:           %[[TID:.*]] = target_gpu.thread_id "x"
// CHECK-NEXT:      %[[ACC:.*]] = loop.alloc local : memref<8xf32>
// CHECK:           loop.block "load"
// CHECK:             %[[V0:.*]] = loop.load %{{.*}}[%[[TID]], %[[K0:.*]]] : memref<32x8xf32> -> vector<4xf32>
// CHECK-NEXT:        loop.store %[[V0]], %[[ACC]][%[[K0]]] : vector<4xf32> -> memref<8xf32>
// CHECK:           loop.block "load"
// CHECK:             %[[V1:.*]] = loop.load %{{.*}}[%[[TID]], %[[K1:.*]]] : memref<32x8xf32> -> vector<4xf32>
// CHECK-NEXT:        loop.store %[[V1]], %[[ACC]][%[[K1]]] : vector<4xf32> -> memref<8xf32>
// CHECK-NOT:       target_gpu.barrier
// CHECK:           loop.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "k" {
// CHECK:             %{{.*}} = loop.load %[[ACC]][%[[K]]] : memref<8xf32> -> f32
func.func @registers_unrolled_vectorized(%a: memref<32x8xf32>, %out: memref<32x8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  loop.for %b = %c0 to %c1 step %c1 axis "b" kind bound thread "blockIdx.x" {
    %acc = loop.alloc local : memref<32x8xf32>
    loop.for %t = %c0 to %c32 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.for %u = %c0 to %c2 step %c1 axis "u" kind unrolled {
        loop.for %l = %c0 to %c4 step %c1 axis "l" kind vectorized {
          loop.block "load" reads(%a : memref<32x8xf32>) writes(%acc : memref<32x8xf32>) {
            %k0 = arith.muli %u, %c4 : index
            %k = arith.addi %k0, %l : index
            %v = loop.load %a[%t, %k] : memref<32x8xf32> -> f32
            loop.store %v, %acc[%t, %k] : f32 -> memref<32x8xf32>
          }
        }
      }
    }
    loop.for %t = %c0 to %c32 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.for %k = %c0 to %c8 step %c1 axis "k" {
        loop.block "store" reads(%acc : memref<32x8xf32>) writes(%out : memref<32x8xf32>) {
          %v = loop.load %acc[%t, %k] : memref<32x8xf32> -> f32
          loop.store %v, %out[%t, %k] : f32 -> memref<32x8xf32>
        }
      }
    }
  }
  func.return
}

// -----

// CHECK: 'loop.for' op expected a loop bound to a GPU block or thread axis in the nest of loop "i" in @negative_no_binding (schedule it for the GPU, e.g. with loop-gpu-default-schedule), found none
func.func @negative_no_binding(%a: memref<16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.block "zero" reads() writes(%a : memref<16xf32>) spatial ["i"] {
      %z = arith.constant 0.0 : f32
      loop.store %z, %a[%i] : f32 -> memref<16xf32>
    }
  }
  func.return
}

// -----

// CHECK: 'loop.for' op expected at most 1024 threads per block on sm_80 in @negative_too_many_threads, found 2048 (2048x1x1)
func.func @negative_too_many_threads(%a: memref<2048xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  loop.for %i = %c0 to %c2048 step %c1 axis "i" kind bound thread "threadIdx.x" {
    %z = arith.constant 0.0 : f32
    loop.store %z, %a[%i] : f32 -> memref<2048xf32>
  }
  func.return
}

// -----

// CHECK: 'target_gpu.shared_alloc' op expected at most 49152 bytes of shared memory per block on sm_80 in @negative_shared_too_large, found 65536
func.func @negative_shared_too_large(%a: memref<64xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %big = loop.alloc shared : memref<128x128xf32>
  loop.for %i = %c0 to %c64 step %c1 axis "i" kind bound thread "threadIdx.x" {
    %v = loop.load %big[%c0, %i] : memref<128x128xf32> -> f32
    loop.store %v, %a[%i] : f32 -> memref<64xf32>
  }
  func.return
}

// -----

// CHECK: 'loop.for' op expected one loop bound to threadIdx.x on each path in @negative_nested_same_axis, found axis "j" inside axis "i"
func.func @negative_nested_same_axis(%a: memref<8x8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind bound thread "threadIdx.x" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" kind bound thread "threadIdx.x" {
      %z = arith.constant 0.0 : f32
      loop.store %z, %a[%i, %j] : f32 -> memref<8x8xf32>
    }
  }
  func.return
}

// -----

// CHECK: 'loop.for' op expected a constant upper bound (or a minui/minsi of a constant) for axis "i" bound to threadIdx.x, found one that is not
func.func @negative_dynamic_bound(%a: memref<64xf32>, %n: index) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %n step %c1 axis "i" kind bound thread "threadIdx.x" {
    %z = arith.constant 0.0 : f32
    loop.store %z, %a[%i] : f32 -> memref<64xf32>
  }
  func.return
}
