// RUN: dlc-opt %s --split-input-file -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512"}' | filecheck %s

// A split's partial tile (`0 to minui(16, n - t)`) vectorized with masks: one vector of 16
// lanes in a loop that runs once (or not at all), its lanes `l < ub` on (an `icmp slt` of the
// lane numbers, computed before the loop); the input row read by `llvm.masked.load` (a
// stride-2 read as two masked parts, each to the last running lane's element, then
// shuffled), the output written by `llvm.masked.store`. The tile's local accumulator is only
// ever touched lane by lane by loops of this one bound (`dlc.lane_private`): it is read and
// written whole, its lanes past the trip count left with garbage that no lane reads (no
// select on the accumulator's chain).
// CHECK-LABEL: llvm.func @masked_row
// CHECK:         %[[UB:.*]] = llvm.call_intrinsic "llvm.umin.i64"
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr
// CHECK:         %[[ACTIVE:.*]] = llvm.sub %[[UB]], %{{.*}} : i64
// CHECK-NEXT:    %[[COUNT:.*]] = llvm.trunc %[[ACTIVE]] : i64 to i32
// CHECK:         %[[MASK:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:         %[[A:.*]] = llvm.call_intrinsic "llvm.masked.load.v16f32.p0"(%{{[0-9]+}}, %{{[0-9]+}}, %[[MASK]], %{{[0-9]+}})
// CHECK:         %[[LOW:.*]] = llvm.call_intrinsic "llvm.masked.load.v16f32.p0"
// CHECK:         %[[HIGH:.*]] = llvm.call_intrinsic "llvm.masked.load.v16f32.p0"
// CHECK-NEXT:    llvm.shufflevector %[[LOW]], %[[HIGH]] [0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31] : vector<16xf32>
// CHECK:         llvm.fadd %[[A]], %{{.*}} : vector<16xf32>
// CHECK-NEXT:    %[[SUM:.*]] = llvm.fadd %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.getelementptr inbounds %{{.*}}[0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT:    llvm.store %[[SUM]], %[[SLOT]]
// CHECK:         llvm.call_intrinsic "llvm.masked.store.v16f32.p0"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf32>, !llvm.ptr, i32, vector<16xi1>) -> ()
// CHECK-NOT:     llvm.select
// CHECK-NOT:     llvm.store {{.*}}%out
func.func @masked_row(%x: memref<?xf32>, %out: memref<?xf32>, %x_d0: index, %n: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %t = %c0 to %n step %c16 axis "i.0" {
    %rem = arith.subi %n, %t : index
    %ub = arith.minui %c16, %rem : index
    %acc = loop.alloc local : memref<16xf32>
    loop.for %l = %c0 to %ub step %c1 axis "i.1" kind vectorized {
      loop.block "init" reads() writes(%acc : memref<16xf32>) spatial ["i.1"] {
        %zero = arith.constant 0.0 : f32
        loop.store %zero, %acc[%l] : f32 -> memref<16xf32>
      }
    }
    loop.for %l = %c0 to %ub step %c1 axis "i.1" kind vectorized {
      loop.block "sum" reads(%x, %acc : memref<?xf32>, memref<16xf32>) writes(%acc : memref<16xf32>) spatial ["i.1"] {
        %i = arith.addi %t, %l : index
        %two = arith.constant 2 : index
        %j = arith.muli %i, %two : index
        %a = loop.load %x[%i] : memref<?xf32> -> f32
        %b = loop.load %x[%j] : memref<?xf32> -> f32
        %s = loop.load %acc[%l] : memref<16xf32> -> f32
        %p = arith.addf %a, %b : f32
        %q = arith.addf %s, %p : f32
        loop.store %q, %acc[%l] : f32 -> memref<16xf32>
      }
    }
    loop.for %l = %c0 to %ub step %c1 axis "i.1" kind vectorized {
      loop.block "write" reads(%acc : memref<16xf32>) writes(%out : memref<?xf32>) spatial ["i.1"] {
        %i = arith.addi %t, %l : index
        %s = loop.load %acc[%l] : memref<16xf32> -> f32
        loop.store %s, %out[%i] : f32 -> memref<?xf32>
      }
    }
    loop.dealloc %acc : memref<16xf32>
  }
  func.return
}

// -----

// The same tile's accumulator also read at another lane (`acc[15 - l]`, by a serial loop): the
// lanes the masked loop does not run keep their values, its store blends (a `select` of the
// lanes that run with the old vector).
// CHECK-LABEL: llvm.func @blend_row
// CHECK:         %[[MASK:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:         %[[OLD:.*]] = llvm.load %{{.*}} {alignment = 64 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NEXT:    %[[NEW:.*]] = llvm.fmul %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:         llvm.select %[[MASK]], %[[NEW]], %{{.*}} : vector<16xi1>, vector<16xf32>
func.func @blend_row(%x: memref<?xf32>, %out: memref<?xf32>, %x_d0: index, %n: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  loop.for %t = %c0 to %n step %c16 axis "i.0" {
    %rem = arith.subi %n, %t : index
    %ub = arith.minui %c16, %rem : index
    %acc = loop.alloc local : memref<16xf32>
    loop.for %l = %c0 to %c16 step %c1 axis "i.1" kind vectorized {
      loop.block "fill" reads() writes(%acc : memref<16xf32>) spatial ["i.1"] {
        %one = arith.constant 1.0 : f32
        loop.store %one, %acc[%l] : f32 -> memref<16xf32>
      }
    }
    loop.for %l = %c0 to %ub step %c1 axis "i.1" kind vectorized {
      loop.block "scale" reads(%x, %acc : memref<?xf32>, memref<16xf32>) writes(%acc : memref<16xf32>) spatial ["i.1"] {
        %i = arith.addi %t, %l : index
        %a = loop.load %x[%i] : memref<?xf32> -> f32
        %s = loop.load %acc[%l] : memref<16xf32> -> f32
        %r = arith.mulf %s, %a : f32
        loop.store %r, %acc[%l] : f32 -> memref<16xf32>
      }
    }
    loop.for %l = %c0 to %ub step %c1 axis "i.1" {
      loop.block "mirror" reads(%acc : memref<16xf32>) writes(%out : memref<?xf32>) spatial ["i.1"] {
        %i = arith.addi %t, %l : index
        %m = arith.subi %c15, %l : index
        %s = loop.load %acc[%l] : memref<16xf32> -> f32
        %r = loop.load %acc[%m] : memref<16xf32> -> f32
        %v = arith.addf %s, %r : f32
        loop.store %v, %out[%i] : f32 -> memref<?xf32>
      }
    }
    loop.dealloc %acc : memref<16xf32>
  }
  func.return
}
