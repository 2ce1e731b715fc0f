// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=znver4 -num-cores=2"}' | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=znver4 -num-cores=2" threads=1}' | filecheck %s --check-prefix=SERIAL

// A GEMM over a runtime number of rows (%x_d0, passed beside the pointers): a row uses each
// weight element about once, so the rows go in static blocks of 8, then the rows left (1 to 7)
// as one nest of exactly that many (the loop whose step is their number runs once, the others
// not at all); each part takes views of its rows (loop.rows) under a nest of static shape that
// the GEMM rule register-tiles as it would a GEMM of that many rows; the weight is packed
// before the loops (once per call, or at compile time for a constant). An 8-row block is too
// little work for a parallel region of its own: the loop over the blocks runs on the threads.
// CHECK-LABEL: func.func @gemm
// CHECK:         %[[LEFT8:.*]] = arith.remui %[[N:.*]], %[[C8:.*]] : index
// CHECK-NEXT:    %[[WHOLE8:.*]] = arith.subi %[[N]], %[[LEFT8]] : index
// CHECK-NEXT:    %[[REST:.*]] = arith.subi %[[N]], %[[WHOLE8]] : index
// CHECK-NEXT:    %[[IS7:.*]] = arith.cmpi eq, %[[REST]], %[[C7:c7]] : index
// CHECK-NEXT:    %[[EXTENT7:.*]] = arith.select %[[IS7]], %[[C7]], %{{.*}} : index
// CHECK-NEXT:    %[[END7:.*]] = arith.addi %[[WHOLE8]], %[[EXTENT7]] : index
// CHECK:         %[[IS1:.*]] = arith.cmpi eq, %[[REST]], %[[C1:c1]] : index
// CHECK-NEXT:    %[[EXTENT1:.*]] = arith.select %[[IS1]], %[[C1]], %{{.*}} : index
// CHECK-NEXT:    %[[END1:.*]] = arith.addi %[[WHOLE8]], %[[EXTENT1]] : index
// CHECK:         loop.block "matmul.pack"
// CHECK:         loop.for %[[B:.*]] = %{{.*}} to %[[WHOLE8]] step %[[C8]] axis "i.rows" kind parallel {
// CHECK-NEXT:      %[[OUT8:.*]] = loop.rows %{{.*}}[%[[B]]] : memref<?x32xf32> -> memref<8x32xf32>
// CHECK-NEXT:      %[[X8:.*]] = loop.rows %{{.*}}[%[[B]]] : memref<?x16xf32> -> memref<8x16xf32>
// CHECK-NEXT:      %{{.*}} = loop.alloc local : memref<8x32xf32>
// CHECK-NOT:       kind parallel
// CHECK:           loop.block "matmul" reads(%[[X8]], %{{.*}} : memref<8x16xf32>, memref<1x16x32xf32>)
// CHECK:           loop.block "matmul.write" {{.*}} writes(%[[OUT8]] : memref<8x32xf32>)
// CHECK:         loop.for %[[R7:.*]] = %[[WHOLE8]] to %[[END7]] step %[[C7]] axis "i.rest7" {
// CHECK-NEXT:      loop.rows %{{.*}}[%[[R7]]] : memref<?x32xf32> -> memref<7x32xf32>
// CHECK:         loop.for %[[R1:.*]] = %[[WHOLE8]] to %[[END1]] step %[[C1]] axis "i.rest1" {
// CHECK-NEXT:      loop.rows %{{.*}}[%[[R1]]] : memref<?x32xf32> -> memref<1x32xf32>
// SERIAL-LABEL: func.func @gemm
// SERIAL-NOT:   kind parallel
// SERIAL:       func.return
func.func @gemm(%x: memref<?x16xf32>, %w: memref<16x32xf32>, %out: memref<?x32xf32>, %x_d0: index, %out_d0: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  loop.for %i = %c0 to %x_d0 step %c1 axis "i" {
    loop.for %j = %c0 to %c32 step %c1 axis "j" {
      loop.block "matmul_init" reads() writes(%out : memref<?x32xf32>) spatial ["i", "j"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %out[%i, %j] : f32 -> memref<?x32xf32>
      }
      loop.for %k = %c0 to %c16 step %c1 axis "k" {
        loop.block "matmul" reads(%x, %w : memref<?x16xf32>, memref<16x32xf32>) writes(%out : memref<?x32xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %x[%i, %k] : memref<?x16xf32> -> f32
          %b = loop.load %w[%k, %j] : memref<16x32xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %acc = loop.load %out[%i, %j] : memref<?x32xf32> -> f32
          %s = arith.addf %acc, %p : f32
          loop.store %s, %out[%i, %j] : f32 -> memref<?x32xf32>
        }
      }
    }
  }
  func.return
}

// -----

// An elementwise op on a runtime number of 64x64 planes (a batch of images) reads nothing beside
// its rows: no block would reuse anything, so it runs plane by plane, each plane a static nest
// with vectorized rows; a plane (4096 iterations) is too little for a parallel region of its
// own, so the planes run on the threads.
// CHECK-LABEL: func.func @scale
// CHECK:         loop.for %[[R:.*]] = %{{.*}} to %[[N:.*]] step %{{.*}} axis "i.rows" kind parallel {
// CHECK-NEXT:      %[[OUT:.*]] = loop.rows %{{.*}}[%[[R]]] : memref<?x64x64xf32> -> memref<1x64x64xf32>
// CHECK-NEXT:      %[[X:.*]] = loop.rows %{{.*}}[%[[R]]] : memref<?x64x64xf32> -> memref<1x64x64xf32>
// CHECK-NEXT:      loop.for %{{.*}} axis "i" {
// CHECK-NEXT:        loop.for %{{.*}} axis "j" {
// CHECK-NEXT:          loop.for %{{.*}} axis "k" kind vectorized {
// CHECK-NEXT:            loop.block "scale" reads(%[[X]] : memref<1x64x64xf32>) writes(%[[OUT]] : memref<1x64x64xf32>)
// CHECK-NOT:     axis "i.rest
func.func @scale(%x: memref<?x64x64xf32>, %out: memref<?x64x64xf32>, %x_d0: index, %out_d0: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %x_d0 step %c1 axis "i" {
    loop.for %j = %c0 to %c64 step %c1 axis "j" {
      loop.for %k = %c0 to %c64 step %c1 axis "k" {
        loop.block "scale" reads(%x : memref<?x64x64xf32>) writes(%out : memref<?x64x64xf32>) spatial ["i", "j", "k"] {
          %a = loop.load %x[%i, %j, %k] : memref<?x64x64xf32> -> f32
          %two = arith.constant 2.000000e+00 : f32
          %p = arith.mulf %a, %two : f32
          loop.store %p, %out[%i, %j, %k] : f32 -> memref<?x64x64xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A nest that reads its rows in reverse (the row index computed from the induction variable) is
// not row by row: no blocks of rows; the rule of runtime extents runs its loop in parallel.
// CHECK-LABEL: func.func @reverse
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i" kind parallel {
// CHECK-NEXT:      %{{.*}} = arith.subi
// CHECK-NOT:     loop.rows
func.func @reverse(%x: memref<?xf32>, %out: memref<?xf32>, %x_d0: index, %out_d0: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %x_d0 step %c1 axis "i" {
    %last = arith.subi %x_d0, %c1 : index
    %r = arith.subi %last, %i : index
    loop.block "reverse" reads(%x : memref<?xf32>) writes(%out : memref<?xf32>) spatial ["i"] {
      %v = loop.load %x[%r] : memref<?xf32> -> f32
      loop.store %v, %out[%i] : f32 -> memref<?xf32>
    }
  }
  func.return
}

// -----

// A 1x1 conv over a runtime batch of 1x1 planes (a squeeze-excite block under a dynamic
// batch) reads its weight through a view made in each block of rows
// (`memref.collapse_shape`): the view moves out of the loops over the rows with the packing
// nests that read it, so that the weight is packed once (at compile time, by
// loop-fold-constant-nests) rather than on every call, in parallel loops of their own.
// CHECK-LABEL: func.func @rows_packing_a_viewed_weight
// CHECK:         %[[VIEW:.*]] = memref.collapse_shape %w
// CHECK-NEXT:    %[[PACKED:.*]] = loop.alloc global : memref<5x576x32xf32>
// CHECK:         loop.block "conv2d.pack" reads(%[[VIEW]] : memref<576x144xf32>) writes(%[[PACKED]]
// CHECK:         loop.for %{{.*}} axis "i0.rows"
// CHECK-NOT:     loop.alloc global
// CHECK:         loop.dealloc %[[PACKED]]
func.func @rows_packing_a_viewed_weight(%x: memref<?x1x1x576xf32>, %w: memref<1x1x576x144xf32>, %out: memref<?x1x1x144xf32> {dlc.dim_sizes = affine_map<()[s0] -> (s0)>}, %x_d0: index, %out_d0: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c96 = arith.constant 576 : index
  %c24 = arith.constant 144 : index
  %0 = arith.constant 0 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c1 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c1 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c24 step %c1 axis "i3" {
          loop.block "conv2d_init" reads() writes(%out : memref<?x1x1x144xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x1x1x144xf32>
          }
          loop.for %r0 = %c0 to %c96 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<?x1x1x576xf32>, memref<1x1x576x144xf32>) writes(%out : memref<?x1x1x144xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %1 = arith.addi %i1, %r1 : index
                  %2 = arith.addi %i2, %r2 : index
                  %3 = loop.load %x[%i0, %1, %2, %r0] : memref<?x1x1x576xf32> -> f32
                  %4 = loop.load %w[%r1, %r2, %r0, %i3] : memref<1x1x576x144xf32> -> f32
                  %5 = arith.mulf %3, %4 : f32
                  %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<?x1x1x144xf32> -> f32
                  %6 = arith.addf %acc, %5 : f32
                  loop.store %6, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x1x1x144xf32>
                }
              }
            }
          }
        }
      }
    }
  }
  func.return
}
