// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=znver3" threads=1}' | filecheck %s

// Loads indexed last by an entry of a table read contiguously along the innermost axis (what
// resize's tap tables make, laid out [tap, output]): the row is still vectorized (the index,
// computed from a load, counts as no lane index; the code generator gathers those loads lane
// by lane).

// Nearest resize x2 (an elementwise nest): the row loop i3 is vectorized.

// CHECK-LABEL: func.func @nearest
// CHECK:         loop.for %[[I2:.*]] = %{{.*}} axis "i2" {
// CHECK-NEXT:      loop.for %[[I3:.*]] = %{{.*}} axis "i3" kind vectorized {
// CHECK:             %[[T:.*]] = loop.load %taps3[%[[I3]]] : memref<10xi64> -> i64
// CHECK-NEXT:        %[[C:.*]] = arith.index_cast %[[T]] : i64 to index
// CHECK-NEXT:        %{{.*}} = loop.load %x[%{{.*}}, %{{.*}}, %{{.*}}, %[[C]]]
func.func @nearest(%x: memref<1x2x3x5xf32>, %taps2: memref<6xi64>, %taps3: memref<10xi64>, %out: memref<1x2x6x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c2 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c6 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c10 step %c1 axis "i3" {
          loop.block "resize" reads(%taps2, %taps3, %x : memref<6xi64>, memref<10xi64>, memref<1x2x3x5xf32>) writes(%out : memref<1x2x6x10xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = loop.load %taps2[%i2] : memref<6xi64> -> i64
            %1 = arith.index_cast %0 : i64 to index
            %2 = loop.load %taps3[%i3] : memref<10xi64> -> i64
            %3 = arith.index_cast %2 : i64 to index
            %4 = loop.load %x[%i0, %i1, %1, %3] : memref<1x2x3x5xf32> -> f32
            loop.store %4, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x2x6x10xf32>
          }
        }
      }
    }
  }
  func.return
}

// -----

// Nearest resize x2 whose taps are `o floordiv 2` (resize's compute divides the output index
// instead of reading a table): the division of the lane index by a constant, used only as the
// last index of a load, still lets the row loop be vectorized (the code generator reads each
// element once and repeats it). The same division as a store index does not.

// CHECK-LABEL: func.func @nearest_divided
// CHECK:         loop.for %[[I3:.*]] = %{{.*}} axis "i3" kind vectorized {
// CHECK:           %[[D:.*]] = arith.divui %[[I3]], %c2 : index
// CHECK-NEXT:      loop.load %x[%{{.*}}, %{{.*}}, %{{.*}}, %[[D]]]
// CHECK-LABEL: func.func @negative_divided_store_index
// CHECK:         loop.for %{{.*}} = %{{.*}} axis "i3" {
func.func @nearest_divided(%x: memref<1x2x3x5xf32>, %out: memref<1x2x6x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c2 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c6 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c10 step %c1 axis "i3" {
          loop.block "resize" reads(%x : memref<1x2x3x5xf32>) writes(%out : memref<1x2x6x10xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.divui %i2, %c2 : index
            %1 = arith.divui %i3, %c2 : index
            %2 = loop.load %x[%i0, %i1, %0, %1] : memref<1x2x3x5xf32> -> f32
            loop.store %2, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x2x6x10xf32>
          }
        }
      }
    }
  }
  func.return
}
func.func @negative_divided_store_index(%x: memref<1x2x6x10xf32>, %out: memref<1x2x6x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c2 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c6 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c10 step %c1 axis "i3" {
          loop.block "copy" reads(%x : memref<1x2x6x10xf32>) writes(%out : memref<1x2x6x5xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.divui %i3, %c2 : index
            %1 = loop.load %x[%i0, %i1, %i2, %i3] : memref<1x2x6x10xf32> -> f32
            loop.store %1, %out[%i0, %i1, %i2, %0] : f32 -> memref<1x2x6x5xf32>
          }
        }
      }
    }
  }
  func.return
}

// -----

// An index read from a table at 2 * i3 (not contiguously along the row): the row stays serial.

// CHECK-LABEL: func.func @strided_table
// CHECK:         loop.for %{{.*}} axis "i3" {
// CHECK-NOT:     vectorized
func.func @strided_table(%x: memref<16xf32>, %table: memref<32xi64>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %i3 = %c0 to %c16 step %c1 axis "i3" {
    loop.block "gather" reads(%table, %x : memref<32xi64>, memref<16xf32>) writes(%out : memref<16xf32>) spatial ["i3"] {
      %0 = arith.muli %i3, %c2 : index
      %1 = loop.load %table[%0] : memref<32xi64> -> i64
      %2 = arith.index_cast %1 : i64 to index
      %3 = loop.load %x[%2] : memref<16xf32> -> f32
      loop.store %3, %out[%i3] : f32 -> memref<16xf32>
    }
  }
  func.return
}

// -----

// A sum over 2x2 taps of tables (bilinear resize x2 in one compute): the register-tile kernel, rows unrolled and
// columns vectorized inside the tap loops; the taps' weights and source columns read as
// vectors along the row, the input gathered at them.

// CHECK-LABEL: func.func @bilinear
// CHECK:         %[[TILE:.*]] = loop.alloc local : memref<6x10xf32>
// CHECK:         loop.for %{{.*}} axis "r0" {
// CHECK-NEXT:      loop.for %[[R1:.*]] = %{{.*}} axis "r1" kind unrolled {
// CHECK-NEXT:        loop.for %{{.*}} axis "i2.i" kind unrolled {
// CHECK-NEXT:          loop.for %[[I3:.*]] = %{{.*}} axis "i3.i" kind vectorized {
// CHECK:                 %[[T:.*]] = loop.load %taps3[%[[R1]], %[[I3]]] : memref<2x10xi64> -> i64
// CHECK-NEXT:            %[[C:.*]] = arith.index_cast %[[T]] : i64 to index
// CHECK:                 loop.load %x[%{{.*}}, %{{.*}}, %{{.*}}, %[[C]]]
// CHECK:                 loop.store %{{.*}}, %[[TILE]]
func.func @bilinear(%x: memref<1x2x3x5xf32>, %taps2: memref<2x6xi64>, %weights2: memref<2x6xf32>, %taps3: memref<2x10xi64>, %weights3: memref<2x10xf32>, %out: memref<1x2x6x10xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c6 = arith.constant 6 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c2 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c6 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c10 step %c1 axis "i3" {
          loop.block "resize_init" reads() writes(%out : memref<1x2x6x10xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x2x6x10xf32>
          }
          loop.for %r0 = %c0 to %c2 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c2 step %c1 axis "r1" {
              loop.block "resize" reads(%taps2, %weights2, %taps3, %weights3, %x : memref<2x6xi64>, memref<2x6xf32>, memref<2x10xi64>, memref<2x10xf32>, memref<1x2x3x5xf32>) writes(%out : memref<1x2x6x10xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1"] {
                %0 = loop.load %taps2[%r0, %i2] : memref<2x6xi64> -> i64
                %1 = arith.index_cast %0 : i64 to index
                %2 = loop.load %weights2[%r0, %i2] : memref<2x6xf32> -> f32
                %3 = loop.load %taps3[%r1, %i3] : memref<2x10xi64> -> i64
                %4 = arith.index_cast %3 : i64 to index
                %5 = loop.load %weights3[%r1, %i3] : memref<2x10xf32> -> f32
                %6 = arith.mulf %2, %5 : f32
                %7 = loop.load %x[%i0, %i1, %1, %4] : memref<1x2x3x5xf32> -> f32
                %8 = arith.mulf %7, %6 : f32
                %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x2x6x10xf32> -> f32
                %9 = arith.addf %acc, %8 : f32
                loop.store %9, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x2x6x10xf32>
              }
            }
          }
        }
      }
    }
  }
  func.return
}
