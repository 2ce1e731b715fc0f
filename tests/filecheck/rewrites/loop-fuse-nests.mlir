// RUN: dlc-opt %s -p loop-fuse-nests --split-input-file | filecheck %s
// RUN: dlc-opt %s -p 'loop-fuse-nests{max_private_bytes=16}' --split-input-file | filecheck %s --check-prefix=SMALL

// A row max, then a row-wise use of it (softmax's first two stages): both parallel over the
// rows, the max indexed by the row: one parallel loop runs both stages per row. The buffers
// between the stages, each row touched only by its own iteration, become one row allocated
// in the loop (private to the thread), indexed at 0 where the row was.
// CHECK-LABEL: func.func @row_stages_fused
// CHECK-NOT:     loop.alloc global
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 axis "i" kind parallel {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:       %[[E:.*]] = loop.alloc local : memref<1x8xf32>
// CHECK-DAG:       %[[M:.*]] = loop.alloc local : memref<1xf32>
// CHECK:           loop.block "max"
// CHECK:             loop.store %{{.*}}, %[[M]][%[[ZERO]]]
// CHECK:           loop.block "sub" reads(%x, %[[M]] : memref<4x8xf32>, memref<1xf32>) writes(%[[E]] : memref<1x8xf32>)
// CHECK-NEXT:        loop.load %x[%[[I]], %{{.*}}]
// CHECK-NEXT:        loop.load %[[M]][%[[ZERO]]]
// CHECK-NOT:     loop.for {{.*}} kind parallel
// CHECK:           loop.block "copy"
// CHECK-NEXT:        loop.load %[[E]][%[[ZERO]], %{{.*}}]
// CHECK:           loop.dealloc %[[M]]
// CHECK-NEXT:      loop.dealloc %[[E]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// With max_private_bytes=16 the row of 8 floats (32 bytes) stays whole, the max (4) shrinks.
// SMALL-LABEL: func.func @row_stages_fused
// SMALL:         loop.alloc global : memref<4x8xf32>
// SMALL:         loop.for
// SMALL:           loop.alloc local : memref<1xf32>
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
// parallel row loops inside them; the buffer between them shrinks to one row of the two loops.
// CHECK-LABEL: func.func @nested_fusion
// CHECK:         loop.for %[[B:.*]] = %c0 to %c1 step %c1 axis "b" {
// CHECK-NEXT:      loop.for %[[I:.*]] = %c0 to %c4 step %c1 axis "i" kind parallel {
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[T:.*]] = loop.alloc local : memref<1x1x8xf32>
// CHECK:             loop.block "neg"
// CHECK:             loop.block "abs"
// CHECK-NEXT:          loop.load %[[T]][%[[ZERO]], %[[ZERO]], %{{.*}}]
// CHECK:             loop.dealloc %[[T]]
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

// A conv's padded input: the pad nest writes the padded plane of each channel, the conv reads
// its channel's plane at the channel position and the weight (also an argument, which may
// alias the output) at the channel in another position. Only accesses of the two loops to a
// buffer one of them writes must share a position: the weight's read, beside the output's
// write in the same loop, constrains nothing. The loops fuse and the padded buffer becomes one
// channel's plane.
// CHECK-LABEL: func.func @pad_into_channel_loop
// CHECK:         loop.for %[[C:.*]] = %c0 to %c4 step %c1 axis "c" kind parallel {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[P:.*]] = loop.alloc local : memref<1x10xf32>
// CHECK:             loop.store %{{.*}}, %[[P]][%[[ZERO]], %{{.*}}]
// CHECK-NOT:     loop.for {{.*}} axis "c"
// CHECK:             loop.load %[[P]][%[[ZERO]], %{{.*}}]
// CHECK-NEXT:        loop.load %w[%[[C]], %{{.*}}]
// CHECK:           loop.dealloc %[[P]]
func.func @pad_into_channel_loop(%x: memref<4x8xf32>, %w: memref<4x3xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %p = loop.alloc global : memref<4x10xf32>
  loop.for %c = %c0 to %c4 step %c1 axis "c" kind parallel {
    loop.for %j = %c0 to %c10 step %c1 axis "j" {
      loop.block "pad.fill" reads() writes(%p : memref<4x10xf32>) spatial ["c", "j"] {
        %z = arith.constant 0.0 : f32
        loop.store %z, %p[%c, %j] : f32 -> memref<4x10xf32>
      }
    }
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "pad" reads(%x : memref<4x8xf32>) writes(%p : memref<4x10xf32>) spatial ["c", "j"] {
        %v = loop.load %x[%c, %j] : memref<4x8xf32> -> f32
        %j1 = arith.addi %j, %c1 : index
        loop.store %v, %p[%c, %j1] : f32 -> memref<4x10xf32>
      }
    }
  }
  loop.for %c = %c0 to %c4 step %c1 axis "c" kind parallel {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.for %k = %c0 to %c3 step %c1 axis "k" {
        loop.block "conv" reads(%p, %w, %out : memref<4x10xf32>, memref<4x3xf32>, memref<4x8xf32>) writes(%out : memref<4x8xf32>) spatial ["c", "j"] reduction ["k"] {
          %jk = arith.addi %j, %k : index
          %v = loop.load %p[%c, %jk] : memref<4x10xf32> -> f32
          %f = loop.load %w[%c, %k] : memref<4x3xf32> -> f32
          %a = loop.load %out[%c, %j] : memref<4x8xf32> -> f32
          %m = arith.mulf %v, %f : f32
          %r = arith.addf %a, %m : f32
          loop.store %r, %out[%c, %j] : f32 -> memref<4x8xf32>
        }
      }
    }
  }
  loop.dealloc %p : memref<4x10xf32>
  func.return
}

// -----

// Buffers that stay whole: one written across iterations (row i + 1 of the loop's own
// buffer), and one read by another loop transposed (the loops do not fuse).
// CHECK-LABEL: func.func @negative_not_private
// CHECK:         %[[S:.*]] = loop.alloc global : memref<5x8xf32>
// CHECK-NEXT:    %[[U:.*]] = loop.alloc global : memref<4x8xf32>
// CHECK-NOT:     loop.alloc local
func.func @negative_not_private(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %s = loop.alloc global : memref<5x8xf32>
  %u = loop.alloc global : memref<4x8xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "shift" reads(%x, %s : memref<4x8xf32>, memref<5x8xf32>) writes(%s, %u : memref<5x8xf32>, memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<4x8xf32> -> f32
        %i1 = arith.addi %i, %c1 : index
        loop.store %v, %s[%i1, %j] : f32 -> memref<5x8xf32>
        %w = loop.load %s[%i, %j] : memref<5x8xf32> -> f32
        loop.store %w, %u[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "copy" reads(%u : memref<4x8xf32>) writes(%out : memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %u[%j, %i] : memref<4x8xf32> -> f32
        loop.store %v, %out[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.dealloc %s : memref<5x8xf32>
  loop.dealloc %u : memref<4x8xf32>
  func.return
}

// -----

// A row sum, then a row scaled by it and by a per-column weight (a layer norm's scale): the
// weight is a function argument read at the column only, but neither loop stores to an
// argument the other one reads, so the argument class orders nothing and the loops fuse (and
// the row sums, each row's its own, become one private element per row).
// CHECK-LABEL: func.func @read_only_argument_at_column
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 axis "i" kind parallel {
// CHECK:           %[[T:.*]] = loop.alloc local : memref<1xf32>
// CHECK:           loop.block "sum"
// CHECK:           loop.block "scale"
// CHECK-NEXT:        loop.load %x[%[[I]], %{{.*}}]
// CHECK-NEXT:        loop.load %[[T]][%{{.*}}] : memref<1xf32>
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

// -----

// The first nest writes %e through a collapsed view (rows merged by a schedule rule), the
// second reads %e itself, each iteration a column that every iteration of the first writes:
// the view is %e, so the two do not fuse.
// CHECK-LABEL: func.func @negative_write_through_view
// CHECK:         loop.block "fill"
// CHECK:       }
// CHECK:         loop.for %{{.*}} axis "i" kind parallel {
// CHECK:           loop.block "transpose"
func.func @negative_write_through_view(%x: memref<4x8xf32>, %out: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %e = loop.alloc global : memref<4x2x4xf32>
  %ev = memref.collapse_shape %e [[0 : i64], [1 : i64, 2 : i64]] : memref<4x2x4xf32> into memref<4x8xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "fill" reads(%x : memref<4x8xf32>) writes(%ev : memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<4x8xf32> -> f32
        loop.store %v, %ev[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.for %i2 = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "transpose" reads(%e : memref<4x2x4xf32>) writes(%out : memref<4x4xf32>) spatial ["i", "k"] {
        %v = loop.load %e[%k, %c0, %i2] : memref<4x2x4xf32> -> f32
        loop.store %v, %out[%i2, %k] : f32 -> memref<4x4xf32>
      }
    }
  }
  loop.dealloc %e : memref<4x2x4xf32>
  func.return
}

// -----

// The same with the second nest reading row i of %e: the view keeps the leading axis, so
// iteration i of both touches only row i, and they fuse.
// CHECK-LABEL: func.func @write_through_view_same_row
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 axis "i" kind parallel {
// CHECK:           loop.block "fill"
// CHECK:           loop.block "rows"
// CHECK-NOT:     kind parallel
func.func @write_through_view_same_row(%x: memref<4x8xf32>, %out: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %e = loop.alloc global : memref<4x2x4xf32>
  %ev = memref.collapse_shape %e [[0 : i64], [1 : i64, 2 : i64]] : memref<4x2x4xf32> into memref<4x8xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "fill" reads(%x : memref<4x8xf32>) writes(%ev : memref<4x8xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<4x8xf32> -> f32
        loop.store %v, %ev[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.for %i2 = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "rows" reads(%e : memref<4x2x4xf32>) writes(%out : memref<4x4xf32>) spatial ["i", "k"] {
        %v = loop.load %e[%i2, %c1, %k] : memref<4x2x4xf32> -> f32
        loop.store %v, %out[%i2, %k] : f32 -> memref<4x4xf32>
      }
    }
  }
  loop.dealloc %e : memref<4x2x4xf32>
  func.return
}

// -----

// A prefetch is a hint, not an access: a nest that prefetches (a reduction kernel, ahead of
// its loads) fuses like one that does not, the prefetch kept where it was.
// CHECK-LABEL: func.func @prefetching_nest_fused
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 axis "i" kind parallel {
// CHECK:           loop.prefetch %x[%[[I]], %{{.*}}]
// CHECK:           loop.block "sum"
// CHECK-NOT:     loop.for {{.*}} kind parallel
// CHECK:           loop.block "scale"
func.func @prefetching_nest_fused(%x: memref<4x64xf32>, %out: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %s = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %k = %c0 to %c64 step %c1 axis "k" {
      %ahead = arith.addi %k, %c16 : index
      loop.block "sum.prefetch" reads(%x : memref<4x64xf32>) writes() {
        loop.prefetch %x[%i, %ahead] : memref<4x64xf32>
      }
      loop.block "sum" reads(%x, %s : memref<4x64xf32>, memref<4xf32>) writes(%s : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %v = loop.load %x[%i, %k] : memref<4x64xf32> -> f32
        %a = loop.load %s[%i] : memref<4xf32> -> f32
        %r = arith.addf %a, %v : f32
        loop.store %r, %s[%i] : f32 -> memref<4xf32>
      }
    }
  }
  loop.for %i2 = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c64 step %c1 axis "j" kind vectorized {
      loop.block "scale" reads(%x, %s : memref<4x64xf32>, memref<4xf32>) writes(%out : memref<4x64xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i2, %j] : memref<4x64xf32> -> f32
        %a = loop.load %s[%i2] : memref<4xf32> -> f32
        %r = arith.mulf %v, %a : f32
        loop.store %r, %out[%i2, %j] : f32 -> memref<4x64xf32>
      }
    }
  }
  loop.dealloc %s : memref<4xf32>
  func.return
}

// -----

// Stages over a batch of runtime size (a Winograd conv's pad, transform and products over
// runtime images): a buffer between them sized at run time, whose sizes are known before the
// first nest, is allocated above it, so the batch loops fuse: one image's stages run back to
// back. The stages' parallel loops, now in one iteration of the batch, fuse too, and the
// buffer, each element touched by its own iteration only, becomes one element per iteration.
// CHECK-LABEL: func.func @runtime_batch_stages
// CHECK:         loop.for %[[B:.*]] = %c0 to %n step %c1 axis "b" {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c8 step %c1 axis "c" kind parallel {
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[T:.*]] = loop.alloc local : memref<1x1xf32>
// CHECK:             loop.block "copy"
// CHECK:             loop.block "double"
// CHECK:               loop.store %{{.*}}, %[[T]][%[[ZERO]], %[[ZERO]]]
// CHECK:             loop.block "square"
// CHECK:             loop.dealloc %[[T]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @runtime_batch_stages(%x: memref<?x8xf32>, %out: memref<?x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %b = %c0 to %n step %c1 axis "b" {
    loop.for %c = %c0 to %c8 step %c1 axis "c" kind parallel {
      loop.block "copy" reads(%x : memref<?x8xf32>) writes(%out : memref<?x8xf32>) spatial ["b", "c"] {
        %v = loop.load %x[%b, %c] : memref<?x8xf32> -> f32
        loop.store %v, %out[%b, %c] : f32 -> memref<?x8xf32>
      }
    }
  }
  %t = loop.alloc global sizes(%n) : memref<?x8xf32>
  loop.for %b = %c0 to %n step %c1 axis "b" {
    loop.for %c = %c0 to %c8 step %c1 axis "c" kind parallel {
      loop.block "double" reads(%out : memref<?x8xf32>) writes(%t : memref<?x8xf32>) spatial ["b", "c"] {
        %v = loop.load %out[%b, %c] : memref<?x8xf32> -> f32
        %w = arith.addf %v, %v : f32
        loop.store %w, %t[%b, %c] : f32 -> memref<?x8xf32>
      }
    }
  }
  loop.for %b = %c0 to %n step %c1 axis "b" {
    loop.for %c = %c0 to %c8 step %c1 axis "c" kind parallel {
      loop.block "square" reads(%t : memref<?x8xf32>) writes(%out : memref<?x8xf32>) spatial ["b", "c"] {
        %v = loop.load %t[%b, %c] : memref<?x8xf32> -> f32
        %w = arith.mulf %v, %v : f32
        loop.store %w, %out[%b, %c] : f32 -> memref<?x8xf32>
      }
    }
  }
  loop.dealloc %t : memref<?x8xf32>
  func.return
}
