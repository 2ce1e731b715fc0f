// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p convert-loop-to-target-gpu | filecheck %s

// Each top-level nest becomes a kernel in target_gpu.module @kernels and a launch in its place;
// the kernel holds the nest as it was, bound loops included (target-gpu-map-bound-loops maps
// them). Negative cases check the diagnostics.

// The launch size along an axis is the largest trip count bound to it: 4 blocks of 256 threads
// (the thread loop's minui bound is at most 256); the constants the nest uses are cloned in.
// CHECK-LABEL: func.func @launch_sizes_from_bound_loops
// CHECK-SAME:    (%[[A:.*]]: memref<1000xf32>, %[[OUT:.*]]: memref<1000xf32>)
// CHECK-NOT:     loop.for
// CHECK:         arith.constant 1000 : index
// CHECK-NEXT:    %[[GRID:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT:    target_gpu.launch @kernels::@launch_sizes_from_bound_loops_neg grid(%[[GRID]], %[[ONE]], %[[ONE]]) block(%[[BLOCK]], %[[ONE]], %[[ONE]]) args(%[[A]], %[[OUT]] : memref<1000xf32>, memref<1000xf32>)
// CHECK-NEXT:    func.return
// CHECK:       target_gpu.module @kernels {
// CHECK-NEXT:    target_gpu.kernel @launch_sizes_from_bound_loops_neg(%[[KA:.*]]: memref<1000xf32>, %[[KOUT:.*]]: memref<1000xf32>) {
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[C256:.*]] = arith.constant 256 : index
// CHECK-NEXT:      %[[C1000:.*]] = arith.constant 1000 : index
// CHECK-NEXT:      loop.for %{{.*}} = %[[C0]] to %[[C4]] step %[[C1]] axis "i.0" kind bound thread "blockIdx.x" {
// CHECK:             loop.for %{{.*}} = %[[C0]] to %{{.*}} step %[[C1]] axis "i.1" kind bound thread "threadIdx.x" {
// CHECK:               loop.load %[[KA]]
// CHECK:               loop.store %{{.*}}, %[[KOUT]]
// CHECK:           target_gpu.return
func.func @launch_sizes_from_bound_loops(%a: memref<1000xf32>, %out: memref<1000xf32>) attributes {dlc.num_outputs = 1 : i64} {
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

// A scalar the nest uses becomes a kernel argument, after the buffers.
// CHECK-LABEL: func.func @scalar_argument
// CHECK-SAME:    (%[[A:.*]]: memref<16xf32>, %[[S:.*]]: f32)
// CHECK:         target_gpu.launch @kernels::@scalar_argument_scale grid({{.*}}) block({{.*}}) args(%[[A]], %[[S]] : memref<16xf32>, f32)
// CHECK:         target_gpu.kernel @scalar_argument_scale(%[[KA:.*]]: memref<16xf32>, %[[KS:.*]]: f32) {
// CHECK:             %{{.*}} = arith.mulf %{{.*}}, %[[KS]] : f32
func.func @scalar_argument(%a: memref<16xf32>, %s: f32) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %x = %c0 to %c16 step %c1 axis "x" kind bound thread "threadIdx.x" {
    loop.block "scale" reads(%a : memref<16xf32>) writes(%a : memref<16xf32>) spatial ["x"] {
      %v = loop.load %a[%x] : memref<16xf32> -> f32
      %w = arith.mulf %v, %s : f32
      loop.store %w, %a[%x] : f32 -> memref<16xf32>
    }
  }
  func.return
}

// -----

// Buffers the nest allocates, or that the host allocates for it, move into the kernel: shared
// ones as target_gpu.shared_alloc (memory space 3) at the entry, local ones as they are; their
// deallocations go.
// CHECK-LABEL: func.func @buffers_move_in
// CHECK-NOT:     loop.alloc
// CHECK:         target_gpu.launch @kernels::@buffers_move_in_use
// CHECK-NOT:     loop.dealloc
// CHECK:         target_gpu.kernel @buffers_move_in_use
// CHECK:           %[[HOST:.*]] = target_gpu.shared_alloc : memref<8xf32, 3 : i64>
// CHECK-NEXT:      %[[ACC:.*]] = loop.alloc local : memref<8xf32>
// CHECK-NEXT:      %[[NESTED:.*]] = target_gpu.shared_alloc : memref<8xf32, 3 : i64>
// CHECK-NEXT:      loop.for
// CHECK-NOT:         loop.alloc
// CHECK:             loop.store %{{.*}}, %[[NESTED]]
// CHECK:             loop.store %{{.*}}, %[[HOST]]
// CHECK:             loop.store %{{.*}}, %[[ACC]]
// CHECK-NOT:     loop.dealloc
func.func @buffers_move_in(%a: memref<8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %host = loop.alloc shared : memref<8xf32>
  %acc = loop.alloc local : memref<8xf32>
  loop.for %t = %c0 to %c8 step %c1 axis "t" kind bound thread "threadIdx.x" {
    %nested = loop.alloc shared : memref<8xf32>
    loop.block "use" reads(%a : memref<8xf32>) writes(%nested, %host, %acc : memref<8xf32>, memref<8xf32>, memref<8xf32>) {
      %v = loop.load %a[%t] : memref<8xf32> -> f32
      loop.store %v, %nested[%t] : f32 -> memref<8xf32>
      loop.store %v, %host[%t] : f32 -> memref<8xf32>
      loop.store %v, %acc[%t] : f32 -> memref<8xf32>
    }
    loop.dealloc %nested : memref<8xf32>
  }
  loop.dealloc %acc : memref<8xf32>
  loop.dealloc %host : memref<8xf32>
  func.return
}

// -----

// Two nests, two kernels with distinct names; what the host does between them stays.
// CHECK-LABEL: func.func @two_nests
// CHECK:         target_gpu.launch @kernels::@two_nests_copy
// CHECK:         func.call @other()
// CHECK:         target_gpu.launch @kernels::@two_nests_copy_1
// CHECK:       target_gpu.kernel @two_nests_copy(
// CHECK:       target_gpu.kernel @two_nests_copy_1(
func.func private @other()
func.func @two_nests(%a: memref<4xf32>, %b: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind bound thread "threadIdx.x" {
    loop.block "copy" reads(%a : memref<4xf32>) writes(%b : memref<4xf32>) {
      %v = loop.load %a[%i] : memref<4xf32> -> f32
      loop.store %v, %b[%i] : f32 -> memref<4xf32>
    }
  }
  func.call @other() : () -> ()
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind bound thread "blockIdx.x" {
    loop.block "copy" reads(%b : memref<4xf32>) writes(%a : memref<4xf32>) {
      %v = loop.load %b[%i] : memref<4xf32> -> f32
      loop.store %v, %a[%i] : f32 -> memref<4xf32>
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

// CHECK: 'loop.for' op expected at most 64 along threadIdx.z on sm_80 in @negative_block_dimension, found 128
func.func @negative_block_dimension(%a: memref<128xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  loop.for %i = %c0 to %c128 step %c1 axis "i" kind bound thread "threadIdx.z" {
    %z = arith.constant 0.0 : f32
    loop.store %z, %a[%i] : f32 -> memref<128xf32>
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

// -----

// CHECK: 'loop.for' op expected constant lower bound and positive constant step for axis "i" bound to threadIdx.x, found bounds that are not
func.func @negative_dynamic_step(%a: memref<64xf32>, %s: index) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c64 step %s axis "i" kind bound thread "threadIdx.x" {
    %z = arith.constant 0.0 : f32
    loop.store %z, %a[%i] : f32 -> memref<64xf32>
  }
  func.return
}

// -----

// CHECK: 'func.call' op expected no calls inside the kernel nest in @negative_call, found one
func.func private @helper()
func.func @negative_call() attributes {dlc.num_outputs = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind bound thread "threadIdx.x" {
    func.call @helper() : () -> ()
  }
  func.return
}

// -----

// CHECK: 'loop.alloc' op expected global buffers to be allocated outside the kernel nest of loop "i" in @negative_global_alloc, found one inside
func.func @negative_global_alloc() attributes {dlc.num_outputs = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind bound thread "threadIdx.x" {
    %g = loop.alloc global : memref<4xf32>
  }
  func.return
}

// -----

// CHECK: 'loop.alloc' op expected a shared buffer to be used by one kernel nest in @negative_shared_between_nests, found it also used by 'loop.load' outside it
func.func @negative_shared_between_nests(%a: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = loop.alloc shared : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind bound thread "threadIdx.x" {
    %z = arith.constant 0.0 : f32
    loop.store %z, %s[%i] : f32 -> memref<4xf32>
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind bound thread "threadIdx.x" {
    %v = loop.load %s[%i] : memref<4xf32> -> f32
    loop.store %v, %a[%i] : f32 -> memref<4xf32>
  }
  func.return
}

// -----

// CHECK: 'loop.for' op expected the values a kernel nest uses from outside to be memrefs or scalars in @negative_vector_argument, found vector<4xf32>
func.func @negative_vector_argument(%a: memref<16xf32>, %v: vector<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind bound thread "threadIdx.x" {
    loop.store %v, %a[%i] : vector<4xf32> -> memref<16xf32>
  }
  func.return
}

// -----

// CHECK: 'graph.relu' op expected loop-level IR (lower it to the loop dialect first), found an op of dialect graph
func.func @negative_graph_level(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
