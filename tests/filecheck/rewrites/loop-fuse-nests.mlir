// RUN: dlc-opt %s -p loop-fuse-nests --split-input-file | filecheck %s

// A row max, then a row-wise use of it (softmax's first two stages): both parallel over the
// rows, the max indexed by the row: one parallel loop runs both stages per row; the buffer
// allocated between them moves above it, the dealloc below it.
// CHECK-LABEL: func.func @row_stages_fused
// CHECK:         %[[M:.*]] = loop.alloc global : memref<4xf32>
// CHECK-NEXT:    %[[E:.*]] = loop.alloc global : memref<4x8xf32>
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 axis "i" kind parallel {
// CHECK:           loop.block "max"
// CHECK:           loop.block "sub" reads(%x, %[[M]] : memref<4x8xf32>, memref<4xf32>) writes(%[[E]] : memref<4x8xf32>)
// CHECK-NEXT:        loop.load %x[%[[I]], %{{.*}}]
// CHECK-NEXT:        loop.load %[[M]][%[[I]]]
// CHECK-NOT:     loop.for {{.*}} kind parallel
// CHECK:           loop.block "copy"
// CHECK-NEXT:        loop.load %[[E]][%[[I]], %{{.*}}]
// CHECK:         loop.dealloc %[[M]]
// CHECK-NEXT:    loop.dealloc %[[E]]
// CHECK-NEXT:    func.return
func.func @row_stages_fused(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %m = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "max" reads(%x, %m : memref<4x8xf32>, memref<4xf32>) writes(%m : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %v = loop.load %x[%i, %k] : memref<4x8xf32> -> f32
        %a = loop.load %m[%i] : memref<4xf32> -> f32
        %r = arith.maximumf %a, %v : f32
        loop.store %r, %m[%i] : f32 -> memref<4xf32>
      }
    }
  }
  %e = loop.alloc global : memref<4x8xf32>
  %c4_1 = arith.constant 4 : index
  loop.for %i2 = %c0 to %c4_1 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c8 step %c1 axis "j" kind vectorized {
      loop.block "sub" reads(%x, %m : memref<4x8xf32>, memref<4xf32>) writes(%e : memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i2, %j] : memref<4x8xf32> -> f32
        %a = loop.load %m[%i2] : memref<4xf32> -> f32
        %r = arith.subf %v, %a : f32
        loop.store %r, %e[%i2, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.dealloc %m : memref<4xf32>
  loop.for %i3 = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c8 step %c1 axis "j" kind vectorized {
      loop.block "copy" reads(%e : memref<4x8xf32>) writes(%out : memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %e[%i3, %j] : memref<4x8xf32> -> f32
        loop.store %v, %out[%i3, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.dealloc %e : memref<4x8xf32>
  func.return
}

// -----

// The second loop reads the first one's result transposed (row i needs column i, which every
// iteration of the first loop writes): not fused. Loops over different ranges, and a serial
// loop, are not fused either.
// CHECK-LABEL: func.func @negative_cross_iteration_reads
// CHECK-COUNT-2: loop.for {{.*}} axis "i" kind parallel
// CHECK:         loop.for {{.*}} to %c2 step %c1 axis "i" kind parallel
// CHECK:         loop.for {{.*}} axis "i" {
func.func @negative_cross_iteration_reads(%x: memref<4x4xf32>, %t: memref<4x4xf32>, %out: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "neg" reads(%x : memref<4x4xf32>) writes(%t : memref<4x4xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<4x4xf32> -> f32
        %n = arith.negf %v : f32
        loop.store %n, %t[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "transpose" reads(%t : memref<4x4xf32>) writes(%out : memref<4x4xf32>) spatial ["i", "j"] {
        %v = loop.load %t[%j, %i] : memref<4x4xf32> -> f32
        loop.store %v, %out[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  loop.for %i = %c0 to %c2 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "half" reads(%out : memref<4x4xf32>) writes(%out : memref<4x4xf32>) spatial ["i", "j"] {
        %v = loop.load %out[%i, %j] : memref<4x4xf32> -> f32
        %n = arith.negf %v : f32
        loop.store %n, %out[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "serial" reads(%out : memref<4x4xf32>) writes(%out : memref<4x4xf32>) spatial ["i", "j"] {
        %v = loop.load %out[%i, %j] : memref<4x4xf32> -> f32
        %n = arith.negf %v : f32
        loop.store %n, %out[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  func.return
}

// -----

// The first loop writes the output argument, the second reads the input argument transposed:
// a caller may pass one buffer as both, so the arguments count as one buffer and the loops stay
// apart.
// CHECK-LABEL: func.func @negative_arguments_may_alias
// CHECK-COUNT-2: loop.for {{.*}} axis "i" kind parallel
func.func @negative_arguments_may_alias(%x: memref<4x4xf32>, %out: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "zero" reads() writes(%out : memref<4x4xf32>) spatial ["i", "j"] {
        %z = arith.constant 0.0 : f32
        loop.store %z, %out[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "transpose" reads(%x : memref<4x4xf32>) writes(%y : memref<4x4xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%j, %i] : memref<4x4xf32> -> f32
        loop.store %v, %y[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  func.return
}

// -----

// Nests under a unit batch loop (a kernel over 1xHxN): the serial batch loops fuse, then the
// parallel row loops inside them.
// CHECK-LABEL: func.func @nested_fusion
// CHECK:         loop.for %[[B:.*]] = %c0 to %c1 step %c1 axis "b" {
// CHECK-NEXT:      loop.for %[[I:.*]] = %c0 to %c4 step %c1 axis "i" kind parallel {
// CHECK:             loop.block "neg"
// CHECK:             loop.block "abs"
// CHECK-NEXT:          loop.load %t[%[[B]], %[[I]], %{{.*}}]
// CHECK-NOT:     loop.for {{.*}} axis "b"
func.func @nested_fusion(%x: memref<1x4x8xf32>, %out: memref<1x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %t = loop.alloc global : memref<1x4x8xf32>
  loop.for %b = %c0 to %c1 step %c1 axis "b" {
    loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
      loop.for %j = %c0 to %c8 step %c1 axis "j" kind vectorized {
        loop.block "neg" reads(%x : memref<1x4x8xf32>) writes(%t : memref<1x4x8xf32>) spatial ["b", "i", "j"] {
          %v = loop.load %x[%b, %i, %j] : memref<1x4x8xf32> -> f32
          %n = arith.negf %v : f32
          loop.store %n, %t[%b, %i, %j] : f32 -> memref<1x4x8xf32>
        }
      }
    }
  }
  loop.for %b = %c0 to %c1 step %c1 axis "b" {
    loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
      loop.for %j = %c0 to %c8 step %c1 axis "j" kind vectorized {
        loop.block "abs" reads(%t : memref<1x4x8xf32>) writes(%out : memref<1x4x8xf32>) spatial ["b", "i", "j"] {
          %v = loop.load %t[%b, %i, %j] : memref<1x4x8xf32> -> f32
          %n = math.absf %v : f32
          loop.store %n, %out[%b, %i, %j] : f32 -> memref<1x4x8xf32>
        }
      }
    }
  }
  loop.dealloc %t : memref<1x4x8xf32>
  func.return
}

// -----

// A row sum, then a row scaled by it and by a per-column weight (a layer norm's scale): the
// weight is a function argument read at the column only, but neither loop stores to an
// argument the other one reads, so the argument class orders nothing and the loops fuse.
// CHECK-LABEL: func.func @read_only_argument_at_column
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 axis "i" kind parallel {
// CHECK:           loop.block "sum"
// CHECK:           loop.block "scale"
// CHECK-NEXT:        loop.load %x[%[[I]], %{{.*}}]
// CHECK-NEXT:        loop.load %t[%[[I]]]
// CHECK-NEXT:        loop.load %g[%{{.*}}]
// CHECK-NOT:     loop.for {{.*}} axis "i"
func.func @read_only_argument_at_column(%x: memref<4x8xf32>, %g: memref<8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %t = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %r = %c0 to %c8 step %c1 axis "r" {
      loop.block "sum" reads(%x : memref<4x8xf32>) writes(%t : memref<4xf32>) spatial ["i"] reduction ["r"] {
        %v = loop.load %x[%i, %r] : memref<4x8xf32> -> f32
        %acc = loop.load %t[%i] : memref<4xf32> -> f32
        %s = arith.addf %acc, %v : f32
        loop.store %s, %t[%i] : f32 -> memref<4xf32>
      }
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c8 step %c1 axis "j" kind vectorized {
      loop.block "scale" reads(%x, %t, %g : memref<4x8xf32>, memref<4xf32>, memref<8xf32>) writes(%out : memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<4x8xf32> -> f32
        %s = loop.load %t[%i] : memref<4xf32> -> f32
        %w = loop.load %g[%j] : memref<8xf32> -> f32
        %p = arith.mulf %v, %s : f32
        %q = arith.mulf %p, %w : f32
        loop.store %q, %out[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.dealloc %t : memref<4xf32>
  func.return
}

// -----

// The first loop stores to an argument (the output) and the second reads another argument at
// the column only: the two may be one buffer, so iteration i of the second could read what a
// later iteration of the first writes; the loops stay apart.
// CHECK-LABEL: func.func @negative_stored_argument_read_at_column
// CHECK-COUNT-2: loop.for {{.*}} axis "i" kind parallel
func.func @negative_stored_argument_read_at_column(%x: memref<4x8xf32>, %g: memref<8xf32>, %out: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "copy" reads(%x : memref<4x8xf32>) writes(%out : memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<4x8xf32> -> f32
        loop.store %v, %out[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "scale" reads(%x, %g : memref<4x8xf32>, memref<8xf32>) writes(%y : memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<4x8xf32> -> f32
        %w = loop.load %g[%j] : memref<8xf32> -> f32
        %p = arith.mulf %v, %w : f32
        loop.store %p, %y[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  func.return
}
