// RUN: dlc-opt %s | filecheck %s
// RUN: %roundtrip | filecheck %s

// CHECK-LABEL: func.func @loops
func.func @loops() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c64 step %c1 axis "i" {
    loop.for %j = %c0 to %c64 step %c8 axis "j" kind parallel {
    }
  }
  loop.for %bx = %c0 to %c64 step %c1 axis "i.outer" kind bound thread "blockIdx.x" {
  }
  loop.for %u = %c0 to %c4 step %c1 axis "k.in" kind unrolled annotations {f = 4 : i64} {
  }
  loop.for %v = %c0 to %c8 step %c1 axis "j.inner" kind vectorized attributes {note = "kept"} {
  }
  func.return
}
// CHECK:      loop.for %[[I:.*]] = %[[C0:.*]] to %[[C64:.*]] step %[[C1:.*]] axis "i" {
// CHECK-NEXT:   loop.for %{{.*}} = %[[C0]] to %[[C64]] step %[[C8:.*]] axis "j" kind parallel {
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: loop.for %{{.*}} = %[[C0]] to %[[C64]] step %[[C1]] axis "i.outer" kind bound thread "blockIdx.x" {
// CHECK-NEXT: }
// CHECK-NEXT: loop.for %{{.*}} = %[[C0]] to %{{.*}} step %[[C1]] axis "k.in" kind unrolled annotations {f = 4 : i64} {
// CHECK-NEXT: }
// CHECK-NEXT: loop.for %{{.*}} = %[[C0]] to %[[C8]] step %[[C1]] axis "j.inner" kind vectorized attributes {note = "kept"} {
// CHECK-NEXT: }

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: attributes {dlc.num_outputs = 1 : i64}
func.func @matmul(%A: memref<16x64xf32>, %B: memref<64x32xf32>, %C: memref<16x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.for %j = %c0 to %c32 step %c1 axis "j" {
      loop.for %k = %c0 to %c64 step %c1 axis "k" {
        loop.block "matmul" reads(%A, %B : memref<16x64xf32>, memref<64x32xf32>) writes(%C : memref<16x32xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %k] : memref<16x64xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<64x32xf32> -> f32
          %c = loop.load %C[%i, %j] : memref<16x32xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<16x32xf32>
        }
      }
    }
  }
  func.return
}
// CHECK:      loop.block "matmul" reads(%[[A:.*]], %[[B:.*]] : memref<16x64xf32>, memref<64x32xf32>) writes(%[[C:.*]] : memref<16x32xf32>) spatial ["i", "j"] reduction ["k"] {
// CHECK-NEXT:   %{{.*}} = loop.load %[[A]][%{{.*}}, %{{.*}}] : memref<16x64xf32> -> f32
// CHECK-NEXT:   %{{.*}} = loop.load %[[B]][%{{.*}}, %{{.*}}] : memref<64x32xf32> -> f32
// CHECK-NEXT:   %{{.*}} = loop.load %[[C]][%{{.*}}, %{{.*}}] : memref<16x32xf32> -> f32
// CHECK-NEXT:   %{{.*}} = arith.mulf
// CHECK-NEXT:   %[[S:.*]] = arith.addf
// CHECK-NEXT:   loop.store %[[S]], %[[C]][%{{.*}}, %{{.*}}] : f32 -> memref<16x32xf32>
// CHECK-NEXT: }

// CHECK-LABEL: func.func @scale
func.func @scale(%X: memref<64xf32>, %Y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c64 step %c1 axis "i" kind parallel {
    loop.block "scale" reads(%X : memref<64xf32>) writes(%Y : memref<64xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<64xf32> -> f32
      %y = arith.mulf %x, %x : f32
      loop.store %y, %Y[%i] : f32 -> memref<64xf32>
    }
  }
  func.return
}
// CHECK:      loop.for %[[I:.*]] = {{.*}} axis "i" kind parallel {
// CHECK-NEXT:   loop.block "scale" reads(%[[X:.*]] : memref<64xf32>) writes(%[[Y:.*]] : memref<64xf32>) spatial ["i"] {
// CHECK-NEXT:     %[[V:.*]] = loop.load %[[X]][%[[I]]] : memref<64xf32> -> f32
// CHECK-NEXT:     %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT:     loop.store %[[SQ]], %[[Y]][%[[I]]] : f32 -> memref<64xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// CHECK-LABEL: func.func @buffers
func.func @buffers(%A: memref<16x64xf32>, %C: memref<16x32xf32>, %s: f32, %w: vector<8xf32>) {
  %i = arith.constant 0 : index
  %j = arith.constant 8 : index
  %k = arith.constant 16 : index
  %acc = loop.alloc local : memref<4x8xf32>
  %tile = loop.alloc shared : memref<32x32xf32>
  %heap = loop.alloc global : memref<64xf32>
  %a = loop.load %A[%i, %k] : memref<16x64xf32> -> f32
  %v = loop.load %A[%i, %k] : memref<16x64xf32> -> vector<8xf32>
  loop.store %s, %C[%i, %j] : f32 -> memref<16x32xf32>
  loop.store %w, %C[%i, %j] : vector<8xf32> -> memref<16x32xf32>
  loop.block "init" reads() writes(%acc : memref<4x8xf32>) {
    loop.store %s, %acc[%i, %i] : f32 -> memref<4x8xf32>
  }
  loop.dealloc %acc : memref<4x8xf32>
  func.return
}
// CHECK:      %[[ACC:.*]] = loop.alloc local : memref<4x8xf32>
// CHECK-NEXT: %{{.*}} = loop.alloc shared : memref<32x32xf32>
// CHECK-NEXT: %{{.*}} = loop.alloc global : memref<64xf32>
// CHECK-NEXT: %{{.*}} = loop.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x64xf32> -> f32
// CHECK-NEXT: %{{.*}} = loop.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x64xf32> -> vector<8xf32>
// CHECK-NEXT: loop.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : f32 -> memref<16x32xf32>
// CHECK-NEXT: loop.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : vector<8xf32> -> memref<16x32xf32>
// CHECK-NEXT: loop.block "init" reads() writes(%[[ACC]] : memref<4x8xf32>) {
// CHECK-NEXT:   loop.store
// CHECK-NEXT: }
// CHECK-NEXT: loop.dealloc %[[ACC]] : memref<4x8xf32>

// Buffers of runtime rows: an allocation sized by an operand, a view of consecutive rows.
// CHECK-LABEL: func.func @runtime_rows
func.func @runtime_rows(%x: memref<?x8xf32>, %n: index, %first: index) {
  %rows = loop.alloc global sizes(%n) : memref<?x8xf32>
  %block = loop.rows %x[%first] : memref<?x8xf32> -> memref<8x8xf32>
  loop.dealloc %rows : memref<?x8xf32>
  func.return
}
// CHECK:      %[[ROWS:.*]] = loop.alloc global sizes(%{{.*}}) : memref<?x8xf32>
// CHECK-NEXT: %{{.*}} = loop.rows %{{.*}}[%{{.*}}] : memref<?x8xf32> -> memref<8x8xf32>
// CHECK-NEXT: loop.dealloc %[[ROWS]] : memref<?x8xf32>

// The terminator is implicit in the custom forms; it is written out in the generic form.
// CHECK-LABEL: func.func @generic_yield
func.func @generic_yield(%c0: index) {
  "loop.for"(%c0, %c0, %c0) <{axis = "i", kind = "serial"}> ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  func.return
}
// CHECK: loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "i" {
// CHECK-NEXT: }

// A tensor intrinsic of the library (target/intrinsics.py) on vector operands.
// CHECK-LABEL: func.func @intrinsic
func.func @intrinsic(%acc: vector<16xi32>, %a: vector<4xi8>, %b: vector<64xi8>) -> vector<16xi32> {
  %r = loop.intrinsic "x86.avx512.vpdpbusd" %acc, %a, %b
      : (vector<16xi32>, vector<4xi8>, vector<64xi8>) -> vector<16xi32>
  func.return %r : vector<16xi32>
}
// CHECK: %{{.*}} = loop.intrinsic "x86.avx512.vpdpbusd" %{{.*}}, %{{.*}}, %{{.*}} : (vector<16xi32>, vector<4xi8>, vector<64xi8>) -> vector<16xi32>

// A warp's matrix load (ldmatrix): the lane's row address in, its elements of four 8x8 matrices out.
// CHECK-LABEL: func.func @matrix_load
func.func @matrix_load(%S: memref<64x32xf16>, %r: index, %c: index) -> vector<8xf16> {
  %f = loop.matrix_load "ptx.ldmatrix.x4" %S[%r, %c] : memref<64x32xf16> -> vector<8xf16>
  func.return %f : vector<8xf16>
}
// CHECK: %{{.*}} = loop.matrix_load "ptx.ldmatrix.x4" %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x32xf16> -> vector<8xf16>

// Asynchronous copies (cp.async): start, close the group, wait for all but the newest group.
// CHECK-LABEL: func.func @async_copy
func.func @async_copy(%G: memref<64x64xf16>, %S: memref<32x40xf16>, %i: index, %k: index, %r: index, %c: index, %n: index) {
  loop.async_copy %G[%i, %k], %S[%r, %c], %n : memref<64x64xf16>, memref<32x40xf16>
  loop.async_commit
  loop.async_wait 1
  func.return
}
// CHECK:      loop.async_copy %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : memref<64x64xf16>, memref<32x40xf16>
// CHECK-NEXT: loop.async_commit
// CHECK-NEXT: loop.async_wait 1

// A prefetch (a hint, no semantics), and a block that only prefetches (it writes nothing).
// CHECK-LABEL: func.func @prefetch
func.func @prefetch(%A: memref<16x64xf32>, %i: index, %k: index) {
  loop.prefetch %A[%i, %k] : memref<16x64xf32>
  loop.block "p.prefetch" reads(%A : memref<16x64xf32>) writes() {
    loop.prefetch %A[%k, %i] : memref<16x64xf32>
  }
  func.return
}
// CHECK:      loop.prefetch %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x64xf32>
// CHECK-NEXT: loop.block "p.prefetch" reads(%{{.*}} : memref<16x64xf32>) writes() {
// CHECK-NEXT:   loop.prefetch %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x64xf32>
