// RUN: dlc-opt %s -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512"}' | filecheck %s
// RUN: dlc-opt %s -p 'convert-loop-to-llvm{target="llvm -mcpu=znver3"}' | filecheck %s --check-prefix=AVX2
// RUN: dlc-opt %s -p 'convert-loop-to-llvm{target="llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"}' | filecheck %s --check-prefix=ARM

// arith.fptosi of vectorized f32 lanes to i32: on x86, `cvttps2dq` (INT_MIN for NaN and every
// lane out of range) fixed to the saturating conversion's values: lanes >= 2^31 take INT_MAX,
// NaN lanes 0. LLVM's x86 backend scalarizes the vector `llvm.fptosi.sat` (a conversion and
// two compares a lane). AVX-512 converts 16 lanes (its mask form: all lanes, the current
// rounding), AVX 8 and SSE2 4; a scalar, and AArch64 (whose `fcvtzs` saturates), keep
// `llvm.fptosi.sat`.

// CHECK-LABEL: llvm.func @truncate_lanes
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:         %[[T:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.cvttps2dq.512"(%[[X]], %{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<16xi32>, i16, i32) -> vector<16xi32>
// CHECK-NEXT:    %[[LIMIT:.*]] = llvm.mlir.constant(dense<2.14748365e+09> : vector<16xf32>)
// CHECK-NEXT:    %[[ABOVE:.*]] = llvm.fcmp "oge" %[[X]], %[[LIMIT]]
// CHECK-NEXT:    %[[MAX:.*]] = llvm.mlir.constant(dense<2147483647> : vector<16xi32>)
// CHECK-NEXT:    %[[HIGH:.*]] = llvm.select %[[ABOVE]], %[[MAX]], %[[T]]
// CHECK-NEXT:    %[[NAN:.*]] = llvm.fcmp "uno" %[[X]], %[[X]]
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(dense<0> : vector<16xi32>)
// CHECK-NEXT:    %[[R:.*]] = llvm.select %[[NAN]], %[[ZERO]], %[[HIGH]]
// CHECK:         llvm.store %[[R]]
// CHECK:         llvm.call_intrinsic "llvm.x86.avx.cvtt.ps2dq.256"(%{{.*}}) : (vector<8xf32>) -> vector<8xi32>
// CHECK:         llvm.call_intrinsic "llvm.x86.sse2.cvttps2dq"(%{{.*}}) : (vector<4xf32>) -> vector<4xi32>
// CHECK:         llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"
// CHECK-NOT:     llvm.fptosi.sat.v

// AVX2 (256-bit vectors): the 16 lanes in two halves of 8.
// AVX2-LABEL:  llvm.func @truncate_lanes
// AVX2-COUNT-3: llvm.call_intrinsic "llvm.x86.avx.cvtt.ps2dq.256"
// AVX2:         llvm.call_intrinsic "llvm.x86.sse2.cvttps2dq"
// AVX2-NOT:     llvm.fptosi.sat.v

// ARM-LABEL:  llvm.func @truncate_lanes
// ARM-NOT:      llvm.x86
// ARM-COUNT-7:  llvm.call_intrinsic "llvm.fptosi.sat.v4i32.v4f32"
// ARM-NOT:      llvm.x86

func.func @truncate_lanes(%x: memref<16xf32>, %y: memref<8xf32>, %z: memref<4xf32>, %s: memref<1xf32>, %a: memref<16xi32>, %b: memref<8xi32>, %c: memref<4xi32>, %d: memref<1xi32>) attributes {dlc.num_outputs = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" kind vectorized {
    loop.block "x" reads(%x : memref<16xf32>) writes(%a : memref<16xi32>) spatial ["i"] {
      %v = loop.load %x[%i] : memref<16xf32> -> f32
      %t = arith.fptosi %v : f32 to i32
      loop.store %t, %a[%i] : i32 -> memref<16xi32>
    }
  }
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind vectorized {
    loop.block "y" reads(%y : memref<8xf32>) writes(%b : memref<8xi32>) spatial ["i"] {
      %v = loop.load %y[%i] : memref<8xf32> -> f32
      %t = arith.fptosi %v : f32 to i32
      loop.store %t, %b[%i] : i32 -> memref<8xi32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind vectorized {
    loop.block "z" reads(%z : memref<4xf32>) writes(%c : memref<4xi32>) spatial ["i"] {
      %v = loop.load %z[%i] : memref<4xf32> -> f32
      %t = arith.fptosi %v : f32 to i32
      loop.store %t, %c[%i] : i32 -> memref<4xi32>
    }
  }
  loop.block "s" reads(%s : memref<1xf32>) writes(%d : memref<1xi32>) {
    %v = loop.load %s[%c0] : memref<1xf32> -> f32
    %t = arith.fptosi %v : f32 to i32
    loop.store %t, %d[%c0] : i32 -> memref<1xi32>
  }
  func.return
}
