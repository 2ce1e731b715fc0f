// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p target-gpu-compact-private-buffers | filecheck %s

// A local buffer allocated outside the threadIdx loops that every access indexes by a thread
// coordinate (in a dimension as long as the loop) keeps one thread's slice.

// CHECK-LABEL: target_gpu.kernel @slice_per_thread
// CHECK:         %[[ACC:.*]] = loop.alloc local : memref<8xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for %[[T:.*]] = {{.*}} kind bound thread "threadIdx.x" {
// CHECK-NEXT:      loop.for %[[K:.*]] = {{.*}} axis "k" {
// CHECK-NEXT:        loop.store %{{.*}}, %[[ACC]][%[[K]]] : f32 -> memref<8xf32>
// CHECK:         loop.for %[[T2:.*]] = {{.*}} kind bound thread "threadIdx.x" {
// CHECK-NEXT:      loop.for %[[K2:.*]] = {{.*}} axis "k" {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[ACC]][%[[K2]]] : memref<8xf32> -> f32
// CHECK-NEXT:        loop.store %[[V]], %{{.*}}[%[[T2]], %[[K2]]]
target_gpu.module @kernels {
  target_gpu.kernel @slice_per_thread(%out: memref<32x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %z = arith.constant 0.0 : f32
    %acc = loop.alloc local : memref<32x8xf32>
    loop.for %t = %c0 to %c32 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.for %k = %c0 to %c8 step %c1 axis "k" {
        loop.store %z, %acc[%t, %k] : f32 -> memref<32x8xf32>
      }
    }
    loop.for %t = %c0 to %c32 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.for %k = %c0 to %c8 step %c1 axis "k" {
        %v = loop.load %acc[%t, %k] : memref<32x8xf32> -> f32
        loop.store %v, %out[%t, %k] : f32 -> memref<32x8xf32>
      }
    }
    target_gpu.return
  }
}

// -----

// Every dimension indexed by a thread coordinate: one element, indexed by a zero.
// CHECK-LABEL: target_gpu.kernel @one_element
// CHECK:         %[[ACC:.*]] = loop.alloc local : memref<1xf32>
// CHECK:         kind bound thread "threadIdx.y"
// CHECK:         kind bound thread "threadIdx.x"
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      loop.store %{{.*}}, %[[ACC]][%[[Z]]] : f32 -> memref<1xf32>
target_gpu.module @kernels {
  target_gpu.kernel @one_element(%out: memref<4x2xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %f = arith.constant 1.0 : f32
    %acc = loop.alloc local : memref<4x2xf32>
    loop.for %y = %c0 to %c4 step %c1 axis "y" kind bound thread "threadIdx.y" {
      loop.for %x = %c0 to %c2 step %c1 axis "x" kind bound thread "threadIdx.x" {
        loop.store %f, %acc[%y, %x] : f32 -> memref<4x2xf32>
      }
    }
    loop.for %y = %c0 to %c4 step %c1 axis "y" kind bound thread "threadIdx.y" {
      loop.for %x = %c0 to %c2 step %c1 axis "x" kind bound thread "threadIdx.x" {
        %v = loop.load %acc[%y, %x] : memref<4x2xf32> -> f32
        loop.store %v, %out[%y, %x] : f32 -> memref<4x2xf32>
      }
    }
    target_gpu.return
  }
}

// -----

// The scratch of one thread loop (every access inside it) is each thread's own already.
// CHECK-LABEL: target_gpu.kernel @negative_scratch_of_one_thread_loop
// CHECK:         loop.alloc local : memref<16xf32>
target_gpu.module @kernels {
  target_gpu.kernel @negative_scratch_of_one_thread_loop(%out: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %f = arith.constant 1.0 : f32
    %scratch = loop.alloc local : memref<16xf32>
    loop.for %t = %c0 to %c16 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.store %f, %scratch[%c0] : f32 -> memref<16xf32>
      %v = loop.load %scratch[%c0] : memref<16xf32> -> f32
      loop.store %v, %out[%t] : f32 -> memref<16xf32>
    }
    target_gpu.return
  }
}

// -----

// A buffer allocated inside a thread loop is a thread's already.
// CHECK-LABEL: target_gpu.kernel @negative_inside_thread_loop
// CHECK:         loop.alloc local : memref<16xf32>
target_gpu.module @kernels {
  target_gpu.kernel @negative_inside_thread_loop(%out: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %f = arith.constant 1.0 : f32
    loop.for %t = %c0 to %c16 step %c1 axis "t" kind bound thread "threadIdx.x" {
      %p = loop.alloc local : memref<16xf32>
      loop.store %f, %p[%t] : f32 -> memref<16xf32>
      %v = loop.load %p[%t] : memref<16xf32> -> f32
      loop.store %v, %out[%t] : f32 -> memref<16xf32>
    }
    target_gpu.return
  }
}

// -----

// Two thread loops communicate through a local buffer without a thread's slice: thread 0 would
// read what thread 1 wrote, which local memory cannot do.
// CHECK: 'loop.alloc' op expected a local buffer allocated outside the threadIdx loops to be indexed by their induction variables in every access (one slice per thread) in kernel @negative_shared_through_local, found memref<16xf32> that is not
target_gpu.module @kernels {
  target_gpu.kernel @negative_shared_through_local(%out: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c15 = arith.constant 15 : index
    %c16 = arith.constant 16 : index
    %f = arith.constant 1.0 : f32
    %buffer = loop.alloc local : memref<16xf32>
    loop.for %t = %c0 to %c16 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.store %f, %buffer[%t] : f32 -> memref<16xf32>
    }
    loop.for %t = %c0 to %c16 step %c1 axis "t" kind bound thread "threadIdx.x" {
      %r = arith.subi %c15, %t : index
      %v = loop.load %buffer[%r] : memref<16xf32> -> f32
      loop.store %v, %out[%t] : f32 -> memref<16xf32>
    }
    target_gpu.return
  }
}
