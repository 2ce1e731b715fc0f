// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'loop-interpret-transforms{target="llvm -mcpu=cascadelake"}' | filecheck %s
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'loop-interpret-transforms{target="llvm -mcpu=sapphirerapids"}' | filecheck %s --check-prefix=SPR
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'loop-interpret-transforms{target="llvm -mcpu=cascadelake" gpu_target="cuda -arch=sm_80"}' | filecheck %s --check-prefix=GPU

// The docstring example: a 16x4 u8 x s8 dot block (B packed 16 blocks of 4 in its last
// dimension) becomes one vpdpbusd; the loops go, the loads read vectors at their first iteration.
// CHECK-LABEL: func.func @vnni_dot
// CHECK:       %[[C0:.*]] = arith.constant 0 : index
// CHECK:       loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.block "dot" reads(%{{.*}}) writes(%{{.*}}) spatial ["i"] {
// CHECK-NEXT:      %[[L:.*]] = arith.muli %[[C0]], %{{.*}} : index
// CHECK-NEXT:      %[[L0:.*]] = arith.addi %[[L]], %[[C0]] : index
// CHECK-NEXT:      %[[ACC:.*]] = loop.load %[[C:.*]][%[[I]], %[[C0]]] : memref<3x16xi32> -> vector<16xi32>
// CHECK-NEXT:      %[[A:.*]] = loop.load %{{.*}}[%[[I]], %[[C0]]] : memref<3x4xi8> -> vector<4xi8>
// CHECK-NEXT:      %[[B:.*]] = loop.load %{{.*}}[%[[L0]]] : memref<64xi8> -> vector<64xi8>
// CHECK-NEXT:      %[[S:.*]] = loop.intrinsic "x86.avx512.vpdpbusd" %[[ACC]], %[[A]], %[[B]] : (vector<16xi32>, vector<4xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK-NEXT:      loop.store %[[S]], %[[C]][%[[I]], %[[C0]]] : vector<16xi32> -> memref<3x16xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @vnni_dot(%A: memref<3x4xi8>, %B: memref<64xi8>, %C: memref<3x16xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c3 step %c1 axis "i" {
    loop.for %j = %c0 to %c16 step %c1 axis "j" {
      loop.for %k = %c0 to %c4 step %c1 axis "k" {
        loop.block "dot" reads(%A, %B : memref<3x4xi8>, memref<64xi8>) writes(%C : memref<3x16xi32>) spatial ["i", "j"] reduction ["k"] {
          %l = arith.muli %j, %c4 : index
          %l2 = arith.addi %l, %k : index
          %a = loop.load %A[%i, %k] : memref<3x4xi8> -> i8
          %ae = arith.extui %a : i8 to i32
          %b = loop.load %B[%l2] : memref<64xi8> -> i8
          %be = arith.extsi %b : i8 to i32
          %p = arith.muli %ae, %be : i32
          %c = loop.load %C[%i, %j] : memref<3x16xi32> -> i32
          %s = arith.addi %c, %p : i32
          loop.store %s, %C[%i, %j] : i32 -> memref<3x16xi32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "dot" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %t = transform.loop.tensorize %j, "x86.avx512.vpdpbusd" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// A GEMM tiled into the intrinsic's shape: j split at 16, k at 4, the j and k inner loops
// innermost, B packed as [N/16][K/4][64] (TVM's [N/16][K/4][16][4]), loops in k-outer order
// inside (the match takes the loops in any order).
// CHECK-LABEL: func.func @gemm_tiled
// CHECK:       loop.for %{{.*}} axis "j.0" {
// CHECK-NEXT:    loop.for %{{.*}} axis "k.0" {
// CHECK:           loop.block "matmul" {{.*}} spatial ["i", "j.0"] reduction ["k.0"] {
// CHECK:             loop.intrinsic "x86.avx512.vpdpbusd"
// CHECK-NOT:     loop.for
func.func @gemm_tiled(%A: memref<2x8xi8>, %B: memref<2x2x64xi8>, %C: memref<2x32xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j0 = %c0 to %c2 step %c1 axis "j.0" {
      loop.for %k0 = %c0 to %c2 step %c1 axis "k.0" {
        loop.for %k1 = %c0 to %c4 step %c1 axis "k.1" {
          loop.for %j1 = %c0 to %c16 step %c1 axis "j.1" {
            loop.block "matmul" reads(%A, %B : memref<2x8xi8>, memref<2x2x64xi8>) writes(%C : memref<2x32xi32>) spatial ["i", "j.0", "j.1"] reduction ["k.0", "k.1"] {
              %k4 = arith.muli %k0, %c4 : index
              %k = arith.addi %k4, %k1 : index
              %j16 = arith.muli %j0, %c16 : index
              %j = arith.addi %j16, %j1 : index
              %l4 = arith.muli %j1, %c4 : index
              %l = arith.addi %l4, %k1 : index
              %a = loop.load %A[%i, %k] : memref<2x8xi8> -> i8
              %ae = arith.extui %a : i8 to i32
              %b = loop.load %B[%j0, %k0, %l] : memref<2x2x64xi8> -> i8
              %be = arith.extsi %b : i8 to i32
              %p = arith.muli %be, %ae : i32
              %c = loop.load %C[%i, %j] : memref<2x32xi32> -> i32
              %s = arith.addi %p, %c : i32
              loop.store %s, %C[%i, %j] : i32 -> memref<2x32xi32>
            }
          }
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %k1 = transform.loop.match_loop %b axis "k.1" : (!transform.any_op) -> !transform.any_op
  %t = transform.loop.tensorize %k1, "x86.avx512.vpdpbusd" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// B read as [K][N] (not packed): operand b moves 64 elements per step of k, not 1.
// CHECK: 'transform.loop.tensorize' op failed on block "matmul": cannot tensorize with "x86.avx512.vpdpbusd": expected operand 'b' (the load of memref<4x64xi8>) to move 4 elements per step of axis j, found 1
func.func @negative_unpacked_b(%A: memref<1x4xi8>, %B: memref<4x64xi8>, %C: memref<1x64xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %j = %c0 to %c16 step %c1 axis "j" {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "matmul" reads(%A, %B : memref<1x4xi8>, memref<4x64xi8>) writes(%C : memref<1x64xi32>) spatial ["j"] reduction ["k"] {
        %a = loop.load %A[%c0, %k] : memref<1x4xi8> -> i8
        %ae = arith.extui %a : i8 to i32
        %b = loop.load %B[%k, %j] : memref<4x64xi8> -> i8
        %be = arith.extsi %b : i8 to i32
        %p = arith.muli %ae, %be : i32
        %c = loop.load %C[%c0, %j] : memref<1x64xi32> -> i32
        %s = arith.addi %c, %p : i32
        loop.store %s, %C[%c0, %j] : i32 -> memref<1x64xi32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %b axis "j" : (!transform.any_op) -> !transform.any_op
  %t = transform.loop.tensorize %j, "x86.avx512.vpdpbusd" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// Signed activations (extsi): vpdpbusd multiplies unsigned bytes by signed ones.
// CHECK: 'transform.loop.tensorize' op failed on block "dot": cannot tensorize with "x86.avx512.vpdpbusd": expected operand 'a' (the load of memref<4xi8>) of element type u8, found s8
func.func @negative_signed_a(%A: memref<4xi8>, %B: memref<64xi8>, %C: memref<16xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %j = %c0 to %c16 step %c1 axis "j" {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "dot" reads(%A, %B : memref<4xi8>, memref<64xi8>) writes(%C : memref<16xi32>) spatial ["j"] reduction ["k"] {
        %l = arith.muli %j, %c4 : index
        %l2 = arith.addi %l, %k : index
        %a = loop.load %A[%k] : memref<4xi8> -> i8
        %ae = arith.extsi %a : i8 to i32
        %b = loop.load %B[%l2] : memref<64xi8> -> i8
        %be = arith.extsi %b : i8 to i32
        %p = arith.muli %ae, %be : i32
        %c = loop.load %C[%j] : memref<16xi32> -> i32
        %s = arith.addi %c, %p : i32
        loop.store %s, %C[%j] : i32 -> memref<16xi32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "dot" in %root : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %b axis "j" : (!transform.any_op) -> !transform.any_op
  %t = transform.loop.tensorize %j, "x86.avx512.vpdpbusd" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// Extents that are not the intrinsic's (8 lanes, not 16).
// CHECK: 'transform.loop.tensorize' op failed on loop "j" (%j): cannot tensorize with "x86.avx512.vpdpbusd": expected loops of extents j 16, k 4, found "j" 8, "k" 4
func.func @negative_extent(%A: memref<4xi8>, %B: memref<32xi8>, %C: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %j = %c0 to %c8 step %c1 axis "j" {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "dot" reads(%A, %B : memref<4xi8>, memref<32xi8>) writes(%C : memref<8xi32>) spatial ["j"] reduction ["k"] {
        %l = arith.muli %j, %c4 : index
        %l2 = arith.addi %l, %k : index
        %a = loop.load %A[%k] : memref<4xi8> -> i8
        %ae = arith.extui %a : i8 to i32
        %b = loop.load %B[%l2] : memref<32xi8> -> i8
        %be = arith.extsi %b : i8 to i32
        %p = arith.muli %ae, %be : i32
        %c = loop.load %C[%j] : memref<8xi32> -> i32
        %s = arith.addi %c, %p : i32
        loop.store %s, %C[%j] : i32 -> memref<8xi32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "dot" in %root : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %b axis "j" : (!transform.any_op) -> !transform.any_op
  %t = transform.loop.tensorize %j, "x86.avx512.vpdpbusd" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// A block that computes more than the dot (a ReLU after the sum).
// CHECK: 'transform.loop.tensorize' op failed on block "dot": cannot tensorize with "x86.avx512.vpdpbusd": expected block "dot" to compute acc = acc + ext(a) * ext(b) (i32 += u8 * s8), found a stored value that is not an 'arith.addi'
func.func @negative_not_a_dot(%A: memref<4xi8>, %B: memref<64xi8>, %C: memref<16xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0 : i32
  loop.for %j = %c0 to %c16 step %c1 axis "j" {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "dot" reads(%A, %B : memref<4xi8>, memref<64xi8>) writes(%C : memref<16xi32>) spatial ["j"] reduction ["k"] {
        %l = arith.muli %j, %c4 : index
        %l2 = arith.addi %l, %k : index
        %a = loop.load %A[%k] : memref<4xi8> -> i8
        %ae = arith.extui %a : i8 to i32
        %b = loop.load %B[%l2] : memref<64xi8> -> i8
        %be = arith.extsi %b : i8 to i32
        %p = arith.muli %ae, %be : i32
        %c = loop.load %C[%j] : memref<16xi32> -> i32
        %s = arith.addi %c, %p : i32
        %r = arith.maxsi %s, %z : i32
        loop.store %r, %C[%j] : i32 -> memref<16xi32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "dot" in %root : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %b axis "j" : (!transform.any_op) -> !transform.any_op
  %t = transform.loop.tensorize %j, "x86.avx512.vpdpbusd" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// cascadelake has VNNI but not BF16: vdpbf16ps is refused before the nest is looked at.
// CHECK: 'transform.loop.tensorize' op failed on loop "j" (%j): cannot tensorize with "x86.avx512.vdpbf16ps": expected a target with avx512bf16, found one without avx512bf16
func.func @negative_missing_feature(%A: memref<2xbf16>, %B: memref<32xbf16>, %C: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  loop.for %j = %c0 to %c16 step %c1 axis "j" {
    loop.for %k = %c0 to %c2 step %c1 axis "k" {
      loop.block "dot" reads(%A, %B : memref<2xbf16>, memref<32xbf16>) writes(%C : memref<16xf32>) spatial ["j"] reduction ["k"] {
        %l = arith.muli %j, %c2 : index
        %l2 = arith.addi %l, %k : index
        %a = loop.load %A[%k] : memref<2xbf16> -> bf16
        %ae = arith.extf %a : bf16 to f32
        %b = loop.load %B[%l2] : memref<32xbf16> -> bf16
        %be = arith.extf %b : bf16 to f32
        %p = arith.mulf %ae, %be : f32
        %c = loop.load %C[%j] : memref<16xf32> -> f32
        %s = arith.addf %c, %p : f32
        loop.store %s, %C[%j] : f32 -> memref<16xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "dot" in %root : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %b axis "j" : (!transform.any_op) -> !transform.any_op
  %t = transform.loop.tensorize %j, "x86.avx512.vdpbf16ps" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// A 16x8x16 f16 nest (A row-major, B stored as Bt[j][k] in a 32-wide buffer: a leading
// dimension) fits PTX mma.sync m16n8k16. Without a GPU target it is refused; with sm_80 the
// nest becomes a loop over the warp's lanes (threadIdx.x): each lane loads its fragments
// (PTX ISA layout: group = lane / 4, thread = lane % 4; A's a0..a7 at rows group, group + 8 and
// columns 2 thread (+1, +8, +9); B's b0..b3 at column group; C's c0..c3 at rows group,
// group + 8 and columns 2 thread (+1)), calls the intrinsic and stores its C fragment back.
// CHECK: 'transform.loop.tensorize' op failed on loop "i" (%i): cannot tensorize with "ptx.mma.m16n8k16.f16": expected a target with sm_80, found one without sm_80
// GPU-LABEL: func.func @mma_warp_fragments
// GPU:         loop.for %[[LANE:.*]] = %{{.*}} to %c32 step %{{.*}} axis "mma.lane" kind bound thread "threadIdx.x" {
// GPU-NEXT:      %[[G:.*]] = arith.divui %[[LANE]], %c4 : index
// GPU-NEXT:      %[[T:.*]] = arith.remui %[[LANE]], %c4 : index
// GPU-NEXT:      loop.block "mma" reads(%A, %Bt : memref<16x16xf16>, memref<8x32xf16>) writes(%C : memref<16x8xf32>) {
// GPU-NEXT:        %[[T2:.*]] = arith.muli %[[T]], %c2 : index
// GPU-NEXT:        %[[C0:.*]] = loop.load %C[%[[G]], %[[T2]]] : memref<16x8xf32> -> f32
// GPU-NEXT:        %[[V0:.*]] = vector.broadcast %[[C0]] : f32 to vector<4xf32>
// GPU-NEXT:        %[[T21:.*]] = arith.addi %[[T2]], %c1 : index
// GPU-NEXT:        %[[C1:.*]] = loop.load %C[%[[G]], %[[T21]]]
// GPU-NEXT:        %[[V1:.*]] = vector.insert %[[C1]], %[[V0]] [1] : f32 into vector<4xf32>
// GPU-NEXT:        %[[G8:.*]] = arith.addi %[[G]], %c8 : index
// GPU-NEXT:        %[[C2:.*]] = loop.load %C[%[[G8]], %[[T2]]]
// GPU-NEXT:        %[[V2:.*]] = vector.insert %[[C2]], %[[V1]] [2]
// GPU-NEXT:        %[[C3:.*]] = loop.load %C[%[[G8]], %[[T21]]]
// GPU-NEXT:        %[[ACC:.*]] = vector.insert %[[C3]], %[[V2]] [3]
// GPU-NEXT:        loop.load %A[%[[G]], %[[T2]]] : memref<16x16xf16> -> f16
// GPU:             loop.load %A[%[[G8]], %[[T21]]] : memref<16x16xf16> -> f16
// GPU:             %[[T28:.*]] = arith.addi %[[T2]], %c8 : index
// GPU-NEXT:        loop.load %A[%[[G]], %[[T28]]]
// GPU:             %[[T29:.*]] = arith.addi %[[T2]], %c9 : index
// GPU:             loop.load %A[%[[G8]], %[[T29]]]
// GPU-NEXT:        %[[A:.*]] = vector.insert %{{.*}}, %{{.*}} [7] : f16 into vector<8xf16>
// GPU-NEXT:        loop.load %Bt[%[[G]], %[[T2]]] : memref<8x32xf16> -> f16
// GPU:             loop.load %Bt[%[[G]], %[[T21]]]
// GPU:             loop.load %Bt[%[[G]], %[[T28]]]
// GPU:             loop.load %Bt[%[[G]], %[[T29]]]
// GPU-NEXT:        %[[B:.*]] = vector.insert %{{.*}}, %{{.*}} [3] : f16 into vector<4xf16>
// GPU-NEXT:        %[[D:.*]] = loop.intrinsic "ptx.mma.m16n8k16.f16" %[[ACC]], %[[A]], %[[B]] : (vector<4xf32>, vector<8xf16>, vector<4xf16>) -> vector<4xf32>
// GPU-NEXT:        %[[D0:.*]] = vector.extract %[[D]][0] : f32 from vector<4xf32>
// GPU-NEXT:        loop.store %[[D0]], %C[%[[G]], %[[T2]]]
// GPU:             %[[D3:.*]] = vector.extract %[[D]][3]
// GPU-NEXT:        loop.store %[[D3]], %C[%[[G8]], %[[T21]]]
// GPU-NEXT:      }
// GPU-NEXT:    }
// GPU-NEXT:    func.return
func.func @mma_warp_fragments(%A: memref<16x16xf16>, %Bt: memref<8x32xf16>, %C: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.for %k = %c0 to %c16 step %c1 axis "k" {
        loop.block "mma" reads(%A, %Bt : memref<16x16xf16>, memref<8x32xf16>) writes(%C : memref<16x8xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %k] : memref<16x16xf16> -> f16
          %ae = arith.extf %a : f16 to f32
          %b = loop.load %Bt[%j, %k] : memref<8x32xf16> -> f16
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %c = loop.load %C[%i, %j] : memref<16x8xf32> -> f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<16x8xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "mma" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %t = transform.loop.tensorize %i, "ptx.mma.m16n8k16.f16" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// With `matrix_loads`, a factor in shared memory is loaded by ldmatrix: A (16x16, k contiguous)
// by one x4 whose lanes 8q..8q+7 give rows lane % 8 + 8 (q % 2) at column 8 (q / 2); Bt in
// global memory keeps its scalar loads, as does the accumulator.
// GPU-LABEL: func.func @mma_matrix_loads
// GPU:         %[[AS:.*]] = loop.alloc shared : memref<16x16xf16>
// GPU:         loop.for %[[LANE:.*]] = %{{.*}} to %c32 step %{{.*}} axis "mma.lane" kind bound thread "threadIdx.x" {
// GPU:           loop.block "mma" reads(%[[AS]], %Bt : memref<16x16xf16>, memref<8x16xf16>) writes(%C : memref<16x8xf32>) {
// GPU:             %[[ACC:.*]] = vector.insert %{{.*}}, %{{.*}} [3] : f32 into vector<4xf32>
// GPU-NEXT:        %[[L32:.*]] = arith.remui %[[LANE]], %c32 : index
// GPU-NEXT:        %[[Q:.*]] = arith.divui %[[L32]], %c8 : index
// GPU-NEXT:        %[[R:.*]] = arith.remui %[[LANE]], %c8 : index
// GPU-NEXT:        %[[Q2:.*]] = arith.remui %[[Q]], %c2 : index
// GPU-NEXT:        %[[R8:.*]] = arith.muli %[[Q2]], %c8 : index
// GPU-NEXT:        %[[ROW:.*]] = arith.addi %[[R]], %[[R8]] : index
// GPU-NEXT:        %[[QH:.*]] = arith.divui %[[Q]], %c2 : index
// GPU-NEXT:        %[[QH2:.*]] = arith.remui %[[QH]], %c2 : index
// GPU-NEXT:        %[[COL:.*]] = arith.muli %[[QH2]], %c8 : index
// GPU-NEXT:        %[[A:.*]] = loop.matrix_load "ptx.ldmatrix.x4" %[[AS]][%[[ROW]], %[[COL]]] : memref<16x16xf16> -> vector<8xf16>
// GPU-NEXT:        loop.load %Bt[%{{.*}}, %{{.*}}] : memref<8x16xf16> -> f16
// GPU:             %[[B:.*]] = vector.insert %{{.*}}, %{{.*}} [3] : f16 into vector<4xf16>
// GPU-NEXT:        loop.intrinsic "ptx.mma.m16n8k16.f16" %[[ACC]], %[[A]], %[[B]]
func.func @mma_matrix_loads(%Bt: memref<8x16xf16>, %C: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %A = loop.alloc shared : memref<16x16xf16>
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.for %k = %c0 to %c16 step %c1 axis "k" {
        loop.block "mma" reads(%A, %Bt : memref<16x16xf16>, memref<8x16xf16>) writes(%C : memref<16x8xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %k] : memref<16x16xf16> -> f16
          %ae = arith.extf %a : f16 to f32
          %b = loop.load %Bt[%j, %k] : memref<8x16xf16> -> f16
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %c = loop.load %C[%i, %j] : memref<16x8xf32> -> f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<16x8xf32>
        }
      }
    }
  }
  loop.dealloc %A : memref<16x16xf16>
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "mma" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %t = transform.loop.tensorize %i, "ptx.mma.m16n8k16.f16" matrix_loads : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// The default schedule of an int8 GEMM on a VNNI target (transform.loop.apply_rules runs the
// `vnni-int8-gemm` rule, rewrites/schedule_rules/vnni.py): B packed into [N/(16 NP)][K/4][NP][64]
// panels, row and column sums and the 6x16 register tile each a tensorized vpdpbusd, the
// zero points applied in the epilogue.
// CHECK-LABEL: func.func @int8_gemm_default
// CHECK:       %[[BP:.*]] = loop.alloc global : memref<1x2x1x64xi8>
// CHECK:       loop.block "matmul.pack_b" reads(%{{.*}} : memref<8x16xi8>) writes(%[[BP]] : memref<1x2x1x64xi8>)
// CHECK:       loop.block "matmul.colsum"
// CHECK:         loop.intrinsic "x86.avx512.vpdpbusd"
// CHECK:       loop.block "matmul.rowsum"
// CHECK:         loop.intrinsic "x86.avx512.vpdpbusd"
// CHECK:       %[[TILE:.*]] = loop.alloc local : memref<6x16xi32>
// CHECK:       loop.for %{{.*}} axis "k4" {
// CHECK-NEXT:    loop.for %{{.*}} axis "r" kind unrolled {
// CHECK-NEXT:      loop.for %{{.*}} axis "p" kind unrolled {
// CHECK-NEXT:        loop.block "matmul" reads(%{{.*}}, %[[BP]] : memref<6x8xi8>, memref<1x2x1x64xi8>) writes(%[[TILE]] : memref<6x16xi32>) {
// CHECK:               %[[ACC:.*]] = loop.load %[[TILE]]{{.*}} -> vector<16xi32>
// CHECK-NEXT:          %[[A:.*]] = loop.load {{.*}} : memref<6x8xi8> -> vector<4xi8>
// CHECK-NEXT:          %[[B:.*]] = loop.load %[[BP]]{{.*}} -> vector<64xi8>
// CHECK-NEXT:          %[[S:.*]] = loop.intrinsic "x86.avx512.vpdpbusd" %[[ACC]], %[[A]], %[[B]]
// CHECK-NEXT:          loop.store %[[S]], %[[TILE]]
// CHECK:       loop.block "matmul.write"
// CHECK:         loop.store %{{.*}}, %{{.*}} : i32 -> memref<6x16xi32>
func.func @int8_gemm_default(%a: memref<6x8xi8>, %b: memref<8x16xi8>, %az: memref<i8>, %bz: memref<i8>, %out: memref<6x16xi32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c6 = arith.constant 6 : index
  loop.for %i0 = %c0 to %c6 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c16 step %c1 axis "i1" {
      loop.block "matmul_init" reads() writes(%out : memref<6x16xi32>) spatial ["i0", "i1"] {
        %init = arith.constant 0 : i32
        loop.store %init, %out[%i0, %i1] : i32 -> memref<6x16xi32>
      }
      loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %az, %b, %bz : memref<6x8xi8>, memref<i8>, memref<8x16xi8>, memref<i8>) writes(%out : memref<6x16xi32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<6x8xi8> -> i8
          %1 = arith.extui %0 : i8 to i32
          %2 = loop.load %az[] : memref<i8> -> i8
          %3 = arith.extui %2 : i8 to i32
          %4 = arith.subi %1, %3 : i32
          %5 = loop.load %b[%r0, %i1] : memref<8x16xi8> -> i8
          %6 = arith.extsi %5 : i8 to i32
          %7 = loop.load %bz[] : memref<i8> -> i8
          %8 = arith.extsi %7 : i8 to i32
          %9 = arith.subi %6, %8 : i32
          %10 = arith.muli %4, %9 : i32
          %acc = loop.load %out[%i0, %i1] : memref<6x16xi32> -> i32
          %11 = arith.addi %acc, %10 : i32
          loop.store %11, %out[%i0, %i1] : i32 -> memref<6x16xi32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i0" : (!transform.any_op) -> !transform.any_op
  transform.loop.apply_rules %i [1, 8, 24, 0, 0] : !transform.any_op
  transform.yield
}

// -----

// The default schedule of a bf16 GEMM (graph.matmul under precision="bf16": f32 sums of
// extended bf16 products, rounded in an epilogue) on an AVX-512 BF16 target (the
// `avx512bf16-gemm` rule, rewrites/schedule_rules/bf16.py): B packed into
// [N/(16 NP)][K/2][NP][32] bf16 panels, A's odd K padded to even, the 6x16 f32 register tile a
// tensorized vdpbf16ps, the round epilogue reading the tile. cascadelake lacks avx512bf16: the
// generic reduction rule keeps the scalar products.
// SPR-LABEL: func.func @bf16_gemm_default
// SPR:       %[[BP:.*]] = loop.alloc global : memref<1x4x1x32xbf16>
// SPR:       loop.block "matmul.pack_b" reads(%{{.*}} : memref<7x16xbf16>) writes(%[[BP]] : memref<1x4x1x32xbf16>)
// SPR:       %[[AP:.*]] = loop.alloc global : memref<6x8xbf16>
// SPR:       loop.block "matmul.pack_a" reads(%{{.*}} : memref<6x7xbf16>) writes(%[[AP]] : memref<6x8xbf16>)
// SPR:       %[[TILE:.*]] = loop.alloc local : memref<6x16xf32>
// SPR:       loop.for %{{.*}} axis "k2" {
// SPR-NEXT:    loop.for %{{.*}} axis "r" kind unrolled {
// SPR-NEXT:      loop.for %{{.*}} axis "p" kind unrolled {
// SPR-NEXT:        loop.block "matmul" reads(%[[AP]], %[[BP]] : memref<6x8xbf16>, memref<1x4x1x32xbf16>) writes(%[[TILE]] : memref<6x16xf32>) {
// SPR:               %[[ACC:.*]] = loop.load %[[TILE]]{{.*}} -> vector<16xf32>
// SPR-NEXT:          %[[A:.*]] = loop.load %[[AP]]{{.*}} : memref<6x8xbf16> -> vector<2xbf16>
// SPR-NEXT:          %[[B:.*]] = loop.load %[[BP]]{{.*}} -> vector<32xbf16>
// SPR-NEXT:          %[[S:.*]] = loop.intrinsic "x86.avx512.vdpbf16ps" %[[ACC]], %[[A]], %[[B]]
// SPR-NEXT:          loop.store %[[S]], %[[TILE]]
// SPR:       loop.block "matmul.write" reads(%[[TILE]] : memref<6x16xf32>) writes(%{{.*}} : memref<6x16xbf16>)
// SPR:         arith.truncf %{{.*}} : f32 to bf16
// CHECK-LABEL: func.func @bf16_gemm_default
// CHECK-NOT:   loop.intrinsic
// CHECK:       func.return
func.func @bf16_gemm_default(%a: memref<6x7xbf16>, %b: memref<7x16xbf16>, %out: memref<6x16xbf16>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c6 = arith.constant 6 : index
  loop.for %i0 = %c0 to %c6 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c16 step %c1 axis "i1" {
      %acc = loop.alloc local : memref<1xf32>
      loop.block "matmul_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r0 = %c0 to %c7 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %b : memref<6x7xbf16>, memref<7x16xbf16>) writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<6x7xbf16> -> bf16
          %1 = loop.load %b[%r0, %i1] : memref<7x16xbf16> -> bf16
          %2 = arith.extf %0 : bf16 to f32
          %3 = arith.extf %1 : bf16 to f32
          %4 = arith.mulf %2, %3 : f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %5 = arith.addf %acc_1, %4 : f32
          loop.store %5, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "round" reads(%acc : memref<1xf32>) writes(%out : memref<6x16xbf16>) spatial ["i0", "i1"] {
        %6 = loop.load %acc[%c0] : memref<1xf32> -> f32
        %7 = arith.truncf %6 : f32 to bf16
        loop.store %7, %out[%i0, %i1] : bf16 -> memref<6x16xbf16>
      }
      loop.dealloc %acc : memref<1xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i0" : (!transform.any_op) -> !transform.any_op
  transform.loop.apply_rules %i [1, 8, 24, 0, 0] : !transform.any_op
  transform.yield
}
