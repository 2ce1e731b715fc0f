// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512" parallel_schedule=guided adaptive_threads=true}' | filecheck %s
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'convert-loop-to-llvm{target="llvm -mcpu=znver3"}' | filecheck %s --check-prefix=ZNVER3
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'convert-loop-to-llvm{target="llvm -mcpu=znver3" vector_bits=512}' | filecheck %s --check-prefix=OVERRIDE
// RUN: not dlc-opt %s --split-input-file -p 'convert-loop-to-llvm{target="llvm -mcpu=znver3 -num-cores=two"}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512" check-bounds=true}' | filecheck %s --check-prefix=BOUNDS
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512"}' | filecheck %s --check-prefix=STATIC
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512" adaptive_threads=false}' | filecheck %s --check-prefix=FIXED
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512" parallel_runtime=dlc}' | filecheck %s --check-prefix=POOL
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'convert-loop-to-llvm{target="llvm -mcpu=cascadelake"}' | filecheck %s --check-prefix=VNNI

// BAD: dlc-opt: error: convert-loop-to-llvm: invalid target option: expected a non-negative integer for -num-cores, found 'two'

// Positive cases check the llvm ops each input op becomes (tests/test_llvm_lowering.py checks
// that no other op is left and runs the code); negative cases check the diagnostic.

// CHECK-LABEL: llvm.func @arith_scalar
// CHECK-SAME:    (%[[A:.*]]: i32, %[[B:.*]]: i32, %[[X:.*]]: f32, %[[I:.*]]: i64) -> f32
// CHECK-NEXT:    %[[S:.*]] = llvm.add %[[A]], %[[B]] : i32
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[Q:.*]] = llvm.sdiv %[[S]], %[[B]] : i32
// CHECK-NEXT:    %[[R:.*]] = llvm.srem %[[S]], %[[B]] : i32
// CHECK-NEXT:    %[[INEXACT:.*]] = llvm.icmp "ne" %[[R]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[SIGNS:.*]] = llvm.xor %[[R]], %[[B]] : i32
// CHECK-NEXT:    %[[DIFFER:.*]] = llvm.icmp "slt" %[[SIGNS]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[ROUND:.*]] = llvm.and %[[INEXACT]], %[[DIFFER]] : i1
// CHECK-NEXT:    %[[ONE:.*]] = llvm.zext %[[ROUND]] : i1 to i32
// CHECK-NEXT:    %[[FLOOR:.*]] = llvm.sub %[[Q]], %[[ONE]] : i32
// CHECK-NEXT:    %[[C:.*]] = llvm.icmp "slt" %[[FLOOR]], %[[A]] : i32
// CHECK-NEXT:    %[[W:.*]] = llvm.trunc %[[I]] : i64 to i32
// CHECK-NEXT:    %[[M:.*]] = llvm.call_intrinsic "llvm.smax.i32"(%[[W]], %[[A]]) : (i32, i32) -> i32
// CHECK-NEXT:    %[[Y:.*]] = llvm.sitofp %[[M]] : i32 to f32
// CHECK-NEXT:    %[[Z:.*]] = llvm.fmul %[[Y]], %[[X]] {fastmathFlags = #llvm.fastmath<fast>} : f32
// CHECK-NEXT:    %[[SEL:.*]] = llvm.select %[[C]], %[[Z]], %[[X]] : i1, f32
// CHECK-NEXT:    llvm.return %[[SEL]] : f32
func.func @arith_scalar(%a: i32, %b: i32, %x: f32, %i: index) -> f32 {
  %s = arith.addi %a, %b : i32
  %f = arith.floordivsi %s, %b : i32
  %c = arith.cmpi slt, %f, %a : i32
  %w = arith.index_cast %i : index to i32
  %m = arith.maxsi %w, %a : i32
  %y = arith.sitofp %m : i32 to f32
  %z = arith.mulf %y, %x fastmath<fast> : f32
  %r = arith.select %c, %z, %x : f32
  func.return %r : f32
}

// -----

// CHECK-LABEL: llvm.func @arith_vector
// CHECK-SAME:    (%[[X:.*]]: vector<16xf32>) -> vector<16xf32>
// CHECK-NEXT:    %[[HALF:.*]] = llvm.mlir.constant(dense<5.000000e-01> : vector<16xf32>) : vector<16xf32>
// CHECK-NEXT:    %[[S:.*]] = llvm.fadd %[[X]], %[[HALF]] : vector<16xf32>
// CHECK-NEXT:    %[[M:.*]] = llvm.call_intrinsic "llvm.maximum.v16f32"(%[[S]], %[[HALF]])
// CHECK-NEXT:    %[[E:.*]] = llvm.call_intrinsic "llvm.exp.v16f32"(%[[M]]) : (vector<16xf32>) -> vector<16xf32>
// CHECK-NEXT:    llvm.return %[[E]] : vector<16xf32>
func.func @arith_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %half = arith.constant dense<0.5> : vector<16xf32>
  %s = arith.addf %x, %half : vector<16xf32>
  %m = arith.maximumf %s, %half : vector<16xf32>
  %e = math.exp %m : vector<16xf32>
  func.return %e : vector<16xf32>
}

// -----

// maximumf/minimumf with nsz (a reduction's combiner): a NaN test, a blend and a compare and
// select that x86 has as one maxps (which returns its second operand when unordered):
// a > b' ? a : b' with b' = isnan(a) ? a : b, a NaN from either side kept; not llvm.maximum
// (which also orders +0 above -0: three more x86 instructions per vector).
// CHECK-LABEL: llvm.func @max_min_no_signed_zeros
// CHECK-SAME:    (%[[A:.*]]: vector<16xf32>, %[[B:.*]]: vector<16xf32>)
// CHECK-NOT:     llvm.maximum
// CHECK:         %[[NAN:.*]] = llvm.fcmp "uno" %[[A]], %[[A]]
// CHECK-NEXT:    %[[B1:.*]] = llvm.select %[[NAN]], %[[A]], %[[B]]
// CHECK-NEXT:    %[[GT:.*]] = llvm.fcmp "ogt" %[[A]], %[[B1]]
// CHECK-NEXT:    %[[M:.*]] = llvm.select %[[GT]], %[[A]], %[[B1]]
// CHECK-NEXT:    %[[NAN2:.*]] = llvm.fcmp "uno" %[[M]], %[[M]]
// CHECK-NEXT:    %[[B2:.*]] = llvm.select %[[NAN2]], %[[M]], %[[B]]
// CHECK-NEXT:    %[[LT:.*]] = llvm.fcmp "olt" %[[M]], %[[B2]]
// CHECK-NEXT:    %[[R:.*]] = llvm.select %[[LT]], %[[M]], %[[B2]]
// CHECK-NEXT:    %[[STRICT:.*]] = llvm.call_intrinsic "llvm.maximum.v16f32"(%[[R]], %[[B]])
// CHECK-NEXT:    llvm.return %[[STRICT]]
func.func @max_min_no_signed_zeros(%a: vector<16xf32>, %b: vector<16xf32>) -> vector<16xf32> {
  %m = arith.maximumf %a, %b fastmath<nsz> : vector<16xf32>
  %n = arith.minimumf %m, %b fastmath<nsz> : vector<16xf32>
  %s = arith.maximumf %n, %b : vector<16xf32>
  func.return %s : vector<16xf32>
}

// -----

// Intrinsics where LLVM has one, libm where it has not (declared once per module).

// CHECK-LABEL: llvm.func @math_scalar
// CHECK-SAME:    (%[[X:.*]]: f32) -> f32
// CHECK-NEXT:    %[[E:.*]] = llvm.call_intrinsic "llvm.exp.f32"(%[[X]]) : (f32) -> f32
// CHECK-NEXT:    %[[T:.*]] = llvm.call_intrinsic "llvm.tanh.f32"(%[[E]]) : (f32) -> f32
// CHECK-NEXT:    %[[R:.*]] = llvm.call @erff(%[[T]]) : (f32) -> f32
// CHECK-NEXT:    %[[F:.*]] = llvm.intr.fma(%[[R]], %[[X]], %[[E]]) : (f32, f32, f32) -> f32
// CHECK-NEXT:    llvm.return %[[F]] : f32
// CHECK:       llvm.func @erff(f32) -> f32
func.func @math_scalar(%x: f32) -> f32 {
  %e = math.exp %x : f32
  %t = math.tanh %e : f32
  %r = math.erf %t : f32
  %f = math.fma %r, %x, %e : f32
  func.return %f : f32
}

// -----

// f64 -> f16 goes through f32 rounded to odd (LLVM would call __truncdfhf2): the nearest f32,
// one step toward zero if it was rounded away, the last bit set if inexact, then f16.

// CHECK-LABEL: llvm.func @truncf_double_to_half
// CHECK-SAME:    (%[[X:.*]]: f64) -> f16
// CHECK-NEXT:    %[[T:.*]] = llvm.fptrunc %[[X]] : f64 to f32
// CHECK-NEXT:    %[[BACK:.*]] = llvm.fpext %[[T]] : f32 to f64
// CHECK-NEXT:    %[[XB:.*]] = llvm.bitcast %[[X]] : f64 to i64
// CHECK-NEXT:    %[[BB:.*]] = llvm.bitcast %[[BACK]] : f64 to i64
// CHECK-NEXT:    %[[INEXACT:.*]] = llvm.icmp "ne" %[[BB]], %[[XB]] : i64
// CHECK:         %[[AWAY:.*]] = llvm.icmp "ugt" %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[TB:.*]] = llvm.bitcast %[[T]] : f32 to i32
// CHECK:         %[[DOWN:.*]] = llvm.sub %[[TB]], %{{.*}} : i32
// CHECK:         %[[ODD:.*]] = llvm.or %[[DOWN]], %{{.*}} : i32
// CHECK-NEXT:    %[[F:.*]] = llvm.bitcast %[[ODD]] : i32 to f32
// CHECK-NEXT:    %[[H:.*]] = llvm.fptrunc %[[F]] : f32 to f16
// CHECK-NEXT:    llvm.return %[[H]] : f16
func.func @truncf_double_to_half(%x: f64) -> f16 {
  %h = arith.truncf %x : f64 to f16
  func.return %h : f16
}

// -----

// bf16 is its bits in an i16, computed in f32: extf shifts the bits up, each op's result is
// rounded to nearest even on the bits ((bits + 0x7FFF + lsb) >> 16, a NaN gets the quiet bit
// 0x400000 instead, chosen by llvm.select), constants are their bf16 bits (1.0 is 0x3F80 =
// 16256). A vectorized loop does the same on vectors.

// CHECK-LABEL: llvm.func @bf16_arith
// CHECK-SAME:    (%[[A:.*]]: i16, %[[B:.*]]: i16) -> i16
// CHECK-NEXT:    %[[AZ:.*]] = llvm.zext %[[A]] : i16 to i32
// CHECK-NEXT:    %[[C16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[AS:.*]] = llvm.shl %[[AZ]], %[[C16]] : i32
// CHECK-NEXT:    %[[AF:.*]] = llvm.bitcast %[[AS]] : i32 to f32
// CHECK:         %[[BF:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    %[[SUM:.*]] = llvm.fadd %[[AF]], %[[BF]] : f32
// CHECK-NEXT:    %[[BITS:.*]] = llvm.bitcast %[[SUM]] : f32 to i32
// CHECK-NEXT:    %[[S16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[HIGH:.*]] = llvm.lshr %[[BITS]], %[[S16]] : i32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[LSB:.*]] = llvm.and %[[HIGH]], %[[ONE]] : i32
// CHECK-NEXT:    %[[HALF:.*]] = llvm.mlir.constant(32767 : i32) : i32
// CHECK-NEXT:    %[[BIAS:.*]] = llvm.add %[[LSB]], %[[HALF]] : i32
// CHECK-NEXT:    %[[ROUNDED:.*]] = llvm.add %[[BITS]], %[[BIAS]] : i32
// CHECK-NEXT:    %[[QB:.*]] = llvm.mlir.constant(4194304 : i32) : i32
// CHECK-NEXT:    %[[QUIET:.*]] = llvm.or %[[BITS]], %[[QB]] : i32
// CHECK:         %[[NAN:.*]] = llvm.icmp "ugt" %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    %[[CHOSEN:.*]] = llvm.select %[[NAN]], %[[QUIET]], %[[ROUNDED]] : i1, i32
// CHECK-NEXT:    %[[SHIFTED:.*]] = llvm.lshr %[[CHOSEN]], %[[S16]] : i32
// CHECK-NEXT:    %[[S:.*]] = llvm.trunc %[[SHIFTED]] : i32 to i16
// CHECK-NEXT:    %{{.*}} = llvm.mlir.constant(16256 : i16) : i16
// CHECK:         llvm.fmul %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     bf16
// CHECK:         llvm.return %{{.*}} : i16
func.func @bf16_arith(%a: bf16, %b: bf16) -> bf16 {
  %s = arith.addf %a, %b : bf16
  %one = arith.constant 1.0 : bf16
  %t = arith.mulf %s, %one : bf16
  func.return %t : bf16
}

// -----

// CHECK-LABEL: llvm.func @bf16_vector
// CHECK-SAME:    (%{{.*}}: vector<16xi16>, %{{.*}}: vector<16xi16>) -> vector<16xi16>
// CHECK:         llvm.fadd %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:         %[[NAN:.*]] = llvm.icmp "ugt" %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK-NEXT:    llvm.select %[[NAN]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xi32>
// CHECK:         llvm.trunc %{{.*}} : vector<16xi32> to vector<16xi16>
func.func @bf16_vector(%a: vector<16xbf16>, %b: vector<16xbf16>) -> vector<16xbf16> {
  %s = arith.addf %a, %b : vector<16xbf16>
  func.return %s : vector<16xbf16>
}

// -----

// A libm function on a vector runs lane by lane.

// CHECK-LABEL: llvm.func @math_vector_libm
// CHECK-SAME:    (%[[V:.*]]: vector<2xf64>) -> vector<2xf64>
// CHECK-NEXT:    %[[UNDEF:.*]] = llvm.mlir.undef : vector<2xf64>
// CHECK-NEXT:    %[[LANE0:.*]] = llvm.shufflevector %[[V]], %[[V]] [0] : vector<2xf64>
// CHECK-NEXT:    %[[X0:.*]] = llvm.bitcast %[[LANE0]] : vector<1xf64> to f64
// CHECK-NEXT:    %[[Y0:.*]] = llvm.call @cbrt(%[[X0]]) : (f64) -> f64
// CHECK-NEXT:    %[[I0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[V0:.*]] = llvm.insertelement %[[Y0]], %[[UNDEF]][%[[I0]] : i32] : vector<2xf64>
// CHECK-NEXT:    %[[LANE1:.*]] = llvm.shufflevector %[[V]], %[[V]] [1] : vector<2xf64>
// CHECK:         %[[Y1:.*]] = llvm.call @cbrt
// CHECK:         %[[R:.*]] = llvm.insertelement %[[Y1]], %[[V0]]
// CHECK-NEXT:    llvm.return %[[R]] : vector<2xf64>
func.func @math_vector_libm(%v: vector<2xf64>) -> vector<2xf64> {
  %r = math.cbrt %v : vector<2xf64>
  func.return %r : vector<2xf64>
}

// -----

// Element [i, j, k] of memref<2x3x4xf32> is at ((i * 3 + j) * 4 + k).

// CHECK-LABEL: llvm.func @memref_addressing
// CHECK-SAME:    (%[[M:.*]]: !llvm.ptr, %[[I:.*]]: i64, %[[J:.*]]: i64, %[[K:.*]]: i64) -> f32
// CHECK-NEXT:    %[[D1:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %[[IS:.*]] = llvm.mul %[[I]], %[[D1]] overflow<nsw> : i64
// CHECK-NEXT:    %[[IJ:.*]] = llvm.add %[[IS]], %[[J]] overflow<nsw> : i64
// CHECK-NEXT:    %[[D2:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[IJS:.*]] = llvm.mul %[[IJ]], %[[D2]] overflow<nsw> : i64
// CHECK-NEXT:    %[[IJK:.*]] = llvm.add %[[IJS]], %[[K]] overflow<nsw> : i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %[[M]][%[[IJK]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[V:.*]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:         %[[Q:.*]] = llvm.getelementptr inbounds %[[M]]
// CHECK-NEXT:    llvm.store %[[V]], %[[Q]] {alignment = 4 : i64} : f32, !llvm.ptr
func.func @memref_addressing(%m: memref<2x3x4xf32>, %i: index, %j: index, %k: index) -> f32 {
  %v = memref.load %m[%i, %j, %k] : memref<2x3x4xf32>
  memref.store %v, %m[%k, %j, %i] : memref<2x3x4xf32>
  func.return %v : f32
}

// -----

// A loop nest becomes header blocks (compare, branch) and latches (step, branch back); the
// block's body is inlined. The entry function's
// signature goes into @dlc_metadata.

// CHECK-LABEL: llvm.func @loop_nest
// CHECK-SAME:    (%[[A:.*]]: !llvm.ptr {llvm.noalias}, %[[B:.*]]: !llvm.ptr {llvm.noalias})
// CHECK-SAME:    attributes {dlc.num_outputs = 1 : i64}
// CHECK:         %[[C0:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[C1:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[C8:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    %[[C16:.*]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    llvm.br ^[[I_HEAD:.*]](%[[C0]] : i64)
// CHECK-NEXT:  ^[[I_HEAD]](%[[I:.*]]: i64):
// CHECK-NEXT:    %[[I_IN:.*]] = llvm.icmp "slt" %[[I]], %[[C8]] : i64
// CHECK-NEXT:    llvm.cond_br %[[I_IN]], ^[[I_BODY:.*]], ^[[I_EXIT:.*]]
// CHECK-NEXT:  ^[[I_BODY]]:
// CHECK-NEXT:    llvm.br ^[[J_HEAD:.*]](%[[C0]] : i64)
// CHECK-NEXT:  ^[[J_HEAD]](%[[J:.*]]: i64):
// CHECK-NEXT:    %[[J_IN:.*]] = llvm.icmp "slt" %[[J]], %[[C16]] : i64
// CHECK-NEXT:    llvm.cond_br %[[J_IN]], ^[[J_BODY:.*]], ^[[J_EXIT:.*]]
// CHECK-NEXT:  ^[[J_BODY]]:
// CHECK:         %[[SRC:.*]] = llvm.getelementptr inbounds %[[A]]
// CHECK-NEXT:    %[[VAL:.*]] = llvm.load %[[SRC]]
// CHECK:         %[[DST:.*]] = llvm.getelementptr inbounds %[[B]]
// CHECK-NEXT:    llvm.store %[[VAL]], %[[DST]]
// CHECK-NEXT:    %[[J_NEXT:.*]] = llvm.add %[[J]], %[[C1]] : i64
// CHECK-NEXT:    llvm.br ^[[J_HEAD]](%[[J_NEXT]] : i64)
// CHECK-NEXT:  ^[[J_EXIT]]:
// CHECK-NEXT:    %[[I_NEXT:.*]] = llvm.add %[[I]], %[[C1]] : i64
// CHECK-NEXT:    llvm.br ^[[I_HEAD]](%[[I_NEXT]] : i64)
// CHECK-NEXT:  ^[[I_EXIT]]:
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.mlir.global external constant @dlc_metadata
// CHECK-SAME:    \22name\22:\22loop_nest\22,\22num_outputs\22:1
// CHECK-SAME:    {\22name\22:\22A\22,\22shape\22:[8,16],\22dtype\22:\22float32\22}
// CHECK-SAME:    !llvm.array<{{[0-9]+}} x i8>
func.func @loop_nest(%A: memref<8x16xf32>, %B: memref<8x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %j = %c0 to %c16 step %c1 axis "j" {
      loop.block "copy" reads(%A : memref<8x16xf32>) writes(%B : memref<8x16xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<8x16xf32> -> f32
        loop.store %a, %B[%i, %j] : f32 -> memref<8x16xf32>
      }
    }
  }
  func.return
}

// -----

// A vector load or store moves 16 contiguous elements from the address of the first (re-typed
// as a vector pointer for llvmlite's builder).

// CHECK-LABEL: llvm.func @vector_load_store
// CHECK:         %[[SRC:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[SRCV:.*]] = llvm.getelementptr inbounds %[[SRC]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT:    %[[V:.*]] = llvm.load %[[SRCV]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NEXT:    %[[W:.*]] = llvm.fadd %[[V]], %[[V]] : vector<16xf32>
// CHECK:         %[[DST:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[DSTV:.*]] = llvm.getelementptr inbounds %[[DST]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT:    llvm.store %[[W]], %[[DSTV]] {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
func.func @vector_load_store(%A: memref<4x32xf32>, %B: memref<4x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  loop.for %j = %c0 to %c32 step %c16 axis "j" kind vectorized {
    %v = loop.load %A[%c0, %j] : memref<4x32xf32> -> vector<16xf32>
    %w = arith.addf %v, %v : vector<16xf32>
    loop.store %w, %B[%c0, %j] : vector<16xf32> -> memref<4x32xf32>
  }
  func.return
}

// -----

// A small local buffer is an alloca in the entry block, 64-byte aligned; a global one is taken
// from its allocation site's cache slot (an internal global, 0 at first: dlc_buffer_take
// allocates only when the slot is empty) and given back to the slot at its dealloc.

// CHECK-LABEL: llvm.func @buffers
// CHECK-NEXT:    %[[N:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[LOCAL:.*]] = llvm.alloca %[[N]] x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK:         %[[SLOT:.*]] = llvm.mlir.addressof @[[CACHE:dlc_buffer_cache_0]] : !llvm.ptr
// CHECK-NEXT:    %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %[[SIZE:.*]] = llvm.mlir.constant(4096) : i64
// CHECK-NEXT:    %[[HEAP:.*]] = llvm.call @dlc_buffer_take(%[[SLOT]], %[[ALIGN]], %[[SIZE]]) : (!llvm.ptr, i64, i64) -> !llvm.ptr
// CHECK:         llvm.getelementptr inbounds %[[LOCAL]]
// CHECK:         llvm.getelementptr inbounds %[[HEAP]]
// CHECK:         %[[BACK:.*]] = llvm.mlir.addressof @[[CACHE]] : !llvm.ptr
// CHECK-NEXT:    llvm.call @dlc_buffer_release(%[[BACK]], %[[HEAP]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT:     llvm.call @free
// CHECK:       llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK:       llvm.func @free(!llvm.ptr)
// CHECK:       llvm.func @dlc_buffer_take(!llvm.ptr, i64, i64) -> !llvm.ptr
// CHECK:       llvm.func @dlc_buffer_release(!llvm.ptr, !llvm.ptr)
// CHECK:       llvm.mlir.global internal @[[CACHE]](0 : i64) {{.*}} : i64
func.func @buffers(%A: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    %acc = loop.alloc local : memref<4xf32>
    %big = loop.alloc global : memref<1024xf32>
    %a = loop.load %A[%i] : memref<4xf32> -> f32
    loop.store %a, %acc[%i] : f32 -> memref<4xf32>
    loop.store %a, %big[%i] : f32 -> memref<1024xf32>
    loop.dealloc %big : memref<1024xf32>
  }
  func.return
}

// -----

// A global buffer without dealloc lives until the function returns.

// CHECK-LABEL: llvm.func @buffer_until_return
// CHECK:         %[[HEAP:.*]] = llvm.call @dlc_buffer_take
// CHECK:         llvm.call @dlc_buffer_release(%{{.*}}, %[[HEAP]])
// CHECK-NEXT:    llvm.return
func.func @buffer_until_return(%x: f32) {
  %c0 = arith.constant 0 : index
  %t = loop.alloc global : memref<8xf32>
  loop.store %x, %t[%c0] : f32 -> memref<8xf32>
  func.return
}

// -----

// CHECK: 'loop.for' op expected a CPU loop kind (serial, parallel, vectorized, unrolled) for axis 'i', found kind bound to 'threadIdx.x'
func.func @negative_bound_loop(%A: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  loop.for %t = %c0 to %c64 step %c1 axis "i" kind bound thread "threadIdx.x" {
    %z = arith.constant 0.0 : f32
    loop.store %z, %A[%t] : f32 -> memref<64xf32>
  }
  func.return
}

// -----

// CHECK: 'loop.alloc' op expected scope global or local on the CPU, found 'shared'
func.func @negative_shared_alloc() {
  %s = loop.alloc shared : memref<32xf32>
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  loop.store %z, %s[%c0] : f32 -> memref<32xf32>
  func.return
}

// -----

// CHECK: 'memref.load' op expected a memref of static shape (or of a dynamic leading dim), found memref<4x?xf32> (its accesses are linearized by loop-linearize-runtime-strides)
func.func @negative_dynamic_shape(%m: memref<4x?xf32>, %i: index) -> f32 {
  %v = memref.load %m[%i, %i] : memref<4x?xf32>
  func.return %v : f32
}

// -----

// CHECK: 'func.func' op expected argument 0 of entry function @negative_scalar_entry_argument to be a row-major memref with a NumPy element type, found f32
func.func @negative_scalar_entry_argument(%x: f32, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  func.return
}

// -----

// CHECK: 'math.ipowi' op has no lowering to the llvm dialect yet
func.func @negative_unsupported_op(%a: i32, %b: i32) -> i32 {
  %p = math.ipowi %a, %b : i32
  func.return %p : i32
}

// -----

// A vectorized loop of 40 f32 lanes becomes two <16 x float> vectors and one <8 x float>:
// contiguous loads and stores, a broadcast of the lane-invariant load, mul+add contracted into
// llvm.fma; no loop remains. For an AVX2 target (znver3) the vectors are <8 x float>, unless the
// vector_bits option overrides the target's width; every module records the target it was
// lowered for as its dlc.target.

// ZNVER3:       builtin.module attributes {dlc.target = "llvm -mcpu=znver3"} {
// ZNVER3-LABEL: llvm.func @vectorized_axpy
// ZNVER3-NOT:   vector<16xf32>
// ZNVER3:       llvm.intr.fma(%{{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// ZNVER3-NOT:   vector<16xf32>
// ZNVER3:       llvm.return
// OVERRIDE:       builtin.module attributes {dlc.target = "llvm -mcpu=znver3"} {
// OVERRIDE-LABEL: llvm.func @vectorized_axpy
// OVERRIDE:       llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>

// CHECK-LABEL: llvm.func @vectorized_axpy
// CHECK-NOT:     llvm.cond_br
// CHECK:         %[[S:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:         %[[Y:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:         %[[SPLAT:.*]] = llvm.shufflevector %{{.*}}, %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xf32>
// CHECK-NEXT:    %[[R:.*]] = llvm.intr.fma(%[[SPLAT]], %[[X]], %[[Y]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:         llvm.store %[[R]], %{{.*}} : vector<16xf32>, !llvm.ptr
// CHECK-COUNT-1: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:         llvm.intr.fma(%{{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NOT:     llvm.cond_br
// CHECK:         llvm.return
func.func @vectorized_axpy(%x: memref<40xf32>, %y: memref<40xf32>, %a: memref<1xf32>, %out: memref<40xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  loop.for %i = %c0 to %c40 step %c1 axis "i" kind vectorized {
    loop.block "axpy" reads(%x, %y, %a : memref<40xf32>, memref<40xf32>, memref<1xf32>) writes(%out : memref<40xf32>) spatial ["i"] {
      %s = loop.load %a[%c0] : memref<1xf32> -> f32
      %xi = loop.load %x[%i] : memref<40xf32> -> f32
      %yi = loop.load %y[%i] : memref<40xf32> -> f32
      %m = arith.mulf %s, %xi : f32
      %r = arith.addf %m, %yi : f32
      loop.store %r, %out[%i] : f32 -> memref<40xf32>
    }
  }
  func.return
}

// -----

// A strided (transposed) access in a vectorized loop is gathered lane by lane; a vector store
// into a 64-byte aligned local buffer at a multiple of 16 elements is 64-byte aligned.

// CHECK-LABEL: llvm.func @vectorized_gather
// CHECK:         %[[LANE0:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-COUNT-3: llvm.insertelement
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
func.func @vectorized_gather(%x: memref<4x4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = loop.alloc local : memref<16xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind vectorized {
    %v = loop.load %x[%i, %c0] : memref<4x4xf32> -> f32
    loop.store %v, %t[%i] : f32 -> memref<16xf32>
    loop.store %v, %out[%i] : f32 -> memref<4xf32>
  }
  func.return
}

// -----

// A vectorized loop over rows around a loop of one vector's lanes along them that only copies
// `out[k, l] = x[l, k]` (a channel-last pack) transposes the block in registers: one contiguous
// load per row (lane), log2(4) = 2 stages of two-source shuffles (bit 1 of the position, then
// bit 2), one contiguous store per column; no lane-by-lane gather.

// CHECK-LABEL: llvm.func @vectorized_transposed_copy
// CHECK-COUNT-4: llvm.load %{{.*}} -> vector<4xf32>
// CHECK:         llvm.shufflevector %{{.*}}, %{{.*}} [0, 4, 2, 6] : vector<4xf32>
// CHECK:         llvm.shufflevector %{{.*}}, %{{.*}} [1, 5, 3, 7] : vector<4xf32>
// CHECK:         llvm.shufflevector %{{.*}}, %{{.*}} [0, 1, 4, 5] : vector<4xf32>
// CHECK:         llvm.shufflevector %{{.*}}, %{{.*}} [2, 3, 6, 7] : vector<4xf32>
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = {{[0-9]+}} : i64} : vector<4xf32>, !llvm.ptr
// CHECK-NOT:     llvm.insertelement
// CHECK:         llvm.return
func.func @vectorized_transposed_copy(%x: memref<4x4xf32>, %out: memref<4x4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %l = %c0 to %c4 step %c1 axis "l" kind vectorized {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      %v = loop.load %x[%l, %k] : memref<4x4xf32> -> f32
      loop.store %v, %out[%k, %l] : f32 -> memref<4x4xf32>
    }
  }
  func.return
}

// -----

// A load whose last index moves by 2 (or 3, 4) elements per lane reads the span from the first
// lane's element to the last one's as contiguous vectors, none reaching past it, and picks the
// lanes with shuffles: 8 lanes of stride 2 read elements [0, 15) as two vectors at 0 and 7, one
// two-source shuffle; 4 lanes of stride 3 read [0, 10) at 0, 4 and 6, two shuffles.

// CHECK-LABEL: llvm.func @vectorized_strided_loads
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    llvm.shufflevector %[[A]], %[[B]] [0, 2, 4, 6, 9, 11, 13, 15] : vector<8xf32>
// CHECK:         %[[C:.*]] = llvm.load %{{.*}} -> vector<4xf32>
// CHECK:         %[[D:.*]] = llvm.load %{{.*}} -> vector<4xf32>
// CHECK:         %[[E:.*]] = llvm.load %{{.*}} -> vector<4xf32>
// CHECK-NEXT:    %[[CD:.*]] = llvm.shufflevector %[[C]], %[[D]] [0, 3, 6, 0] : vector<4xf32>
// CHECK-NEXT:    llvm.shufflevector %[[CD]], %[[E]] [0, 1, 2, 7] : vector<4xf32>
// CHECK-NOT:     llvm.insertelement
// CHECK:         llvm.return
func.func @vectorized_strided_loads(%x: memref<16xf32>, %y: memref<10xf32>, %out: memref<8xf32>, %out3: memref<4xf32>) attributes {dlc.num_outputs = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind vectorized {
    %j = arith.muli %i, %c2 : index
    %v = loop.load %x[%j] : memref<16xf32> -> f32
    loop.store %v, %out[%i] : f32 -> memref<8xf32>
  }
  loop.for %k = %c0 to %c4 step %c1 axis "k" kind vectorized {
    %l = arith.muli %k, %c3 : index
    %w = loop.load %y[%l] : memref<10xf32> -> f32
    loop.store %w, %out3[%k] : f32 -> memref<4xf32>
  }
  func.return
}

// -----

// A load at `i floordiv 2` (`arith.divui` by a constant dividing the first lane's index and
// the width: a nearest 2x upsampling's row) reads the 8 elements that 16 lanes read as one
// narrower vector and repeats each by one shuffle, 16 lanes from 16 outputs and then the 8
// remaining ones from 4 elements. Divided by 3, which does not divide the width, it is
// gathered lane by lane.

// CHECK-LABEL: llvm.func @vectorized_repeated_loads
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    %[[R:.*]] = llvm.shufflevector %[[A]], %[[A]] [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7] : vector<8xf32>
// CHECK:         llvm.store %[[R]], %{{.*}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NEXT:    llvm.shufflevector %[[B]], %[[B]] [0, 0, 1, 1, 2, 2, 3, 3] : vector<4xf32>
// CHECK:         llvm.insertelement
// CHECK:         llvm.return
func.func @vectorized_repeated_loads(%x: memref<12xf32>, %out: memref<24xf32>, %y: memref<8xf32>, %out3: memref<24xf32>) attributes {dlc.num_outputs = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c24 = arith.constant 24 : index
  loop.for %i = %c0 to %c24 step %c1 axis "i" kind vectorized {
    %j = arith.divui %i, %c2 : index
    %v = loop.load %x[%j] : memref<12xf32> -> f32
    loop.store %v, %out[%i] : f32 -> memref<24xf32>
  }
  loop.for %k = %c0 to %c24 step %c1 axis "k" kind vectorized {
    %l = arith.divui %k, %c3 : index
    %w = loop.load %y[%l] : memref<8xf32> -> f32
    loop.store %w, %out3[%k] : f32 -> memref<24xf32>
  }
  func.return
}

// -----

// The same read inside tiles of 16 over a runtime row of a flat buffer (a runtime-extents
// schedule's whole tiles, the buffer's runtime strides linearized): lane l reads
// `row * w + (t + l) / 2`. The tile loop's step, recorded before the loops are lowered
// (`dlc.operand_multiples`: `t` a multiple of 16), makes `t + l` start at an even index, and the
// row offset added after the division keeps the lanes repeated: one load of 8 and a shuffle,
// no vector division and no lane-by-lane gather.

// CHECK-LABEL: llvm.func internal @tiled_repeated_loads
// CHECK-NOT:     llvm.udiv %{{.*}} : vector<16xi64>
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    %[[R:.*]] = llvm.shufflevector %[[A]], %[[A]] [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7] : vector<8xf32>
// CHECK-NOT:     llvm.insertelement %{{.*}} : vector<16xf32>
// CHECK:         llvm.store %[[R]], %{{.*}} : vector<16xf32>, !llvm.ptr
func.func private @tiled_repeated_loads(%x: memref<?xf32>, %out: memref<?xf32>, %row: index, %w: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %rest = arith.remui %n, %c16 : index
  %whole = arith.subi %n, %rest : index
  %base = arith.muli %row, %w : index
  loop.for %t = %c0 to %whole step %c16 axis "j.0" {
    loop.for %l = %c0 to %c16 step %c1 axis "j.1" kind vectorized {
      %j = arith.addi %t, %l : index
      %h = arith.divui %j, %c2 : index
      %k = arith.addi %base, %h : index
      %v = loop.load %x[%k] : memref<?xf32> -> f32
      loop.store %v, %out[%j] : f32 -> memref<?xf32>
    }
  }
  func.return
}

// -----

// A parallel loop is outlined: the function stores its buffers (and the trip count) into a
// data block and calls GOMP_parallel with the thread function on @dlc_num_threads threads where
// that weak global is set (not 0), else the compiled count. By default (STATIC) each thread
// computes its one chunk [first, last) of the iterations and runs it in the body function, whose
// buffers are noalias; with parallel_schedule=guided (CHECK) threads take guided chunks from
// libgomp instead. With adaptive_threads=true (CHECK) the team adapts: while the module's countdown
// is above 0 the region runs on the caller alone; a region whose caller waited at its end (from
// thread 0's finishing time, which the thread function records, to the return) longer than
// max(half the region, 50 us) sets the countdown to 64; each region counts it down.

// CHECK:       llvm.mlir.global weak @dlc_num_threads(0 : i32) {addr_space = 0 : i32, alignment = 4 : i64} : i32
// CHECK-LABEL: llvm.func @parallel_copy
// CHECK:         %[[DATA:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64} : (i64) -> !llvm.ptr
// CHECK:         %[[FN:.*]] = llvm.mlir.addressof @parallel_copy_parallel0 : !llvm.ptr
// CHECK-NEXT:    %[[SETTING_PTR:.*]] = llvm.mlir.addressof @dlc_num_threads : !llvm.ptr
// CHECK-NEXT:    %[[SETTING:.*]] = llvm.load %[[SETTING_PTR]] {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[IS_SET:.*]] = llvm.icmp "ne" %[[SETTING]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[COMPILED:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[FULL:.*]] = llvm.select %[[IS_SET]], %[[SETTING]], %[[COMPILED]] : i1, i32
// CHECK:         %[[COUNTDOWN_ADDRESS:.*]] = llvm.mlir.addressof @[[COUNTDOWN_GLOBAL:dlc_team_serial_regions]] : !llvm.ptr
// CHECK-NEXT:    %[[COUNTDOWN:.*]] = llvm.load %[[COUNTDOWN_ADDRESS]] {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK:         %[[SERIAL:.*]] = llvm.icmp "sgt" %[[COUNTDOWN]], %{{.*}} : i32
// CHECK-NEXT:    %[[THREADS:.*]] = llvm.select %[[SERIAL]], %{{.*}}, %[[FULL]] : i1, i32
// CHECK-NEXT:    %[[START:.*]] = llvm.call @omp_get_wtime() : () -> f64
// CHECK-NEXT:    llvm.call @GOMP_parallel(%[[FN]], %[[DATA]], %[[THREADS]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK-NEXT:    %[[END:.*]] = llvm.call @omp_get_wtime() : () -> f64
// CHECK-NEXT:    %[[DONE_ADDRESS:.*]] = llvm.mlir.addressof @[[DONE_GLOBAL:dlc_team_master_done]] : !llvm.ptr
// CHECK-NEXT:    %[[DONE:.*]] = llvm.load %[[DONE_ADDRESS]] {alignment = 8 : i64} : !llvm.ptr -> f64
// CHECK-NEXT:    %[[WAITED:.*]] = llvm.fsub %[[END]], %[[DONE]] : f64
// CHECK-NEXT:    %[[TOOK:.*]] = llvm.fsub %[[END]], %[[START]] : f64
// CHECK:         %[[HALF:.*]] = llvm.fmul %[[TOOK]], %{{.*}} : f64
// CHECK-NEXT:    %[[LEAST:.*]] = llvm.mlir.constant(5.000000e-05 : f64) : f64
// CHECK-NEXT:    %[[THRESHOLD:.*]] = llvm.call_intrinsic "llvm.maxnum.f64"(%[[HALF]], %[[LEAST]])
// CHECK-NEXT:    %[[LONG:.*]] = llvm.fcmp "ogt" %[[WAITED]], %[[THRESHOLD]] : f64
// CHECK:         %[[CONTENDED:.*]] = llvm.select %[[SERIAL]], %{{.*}}, %[[LONG]] : i1, i1
// CHECK:         %[[COUNTED:.*]] = llvm.call_intrinsic "llvm.smax.i32"
// CHECK-NEXT:    %[[AGAIN:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.select %[[CONTENDED]], %[[AGAIN]], %[[COUNTED]] : i1, i32
// CHECK-NEXT:    llvm.store %[[NEXT]], %[[COUNTDOWN_ADDRESS]] {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK:       llvm.mlir.global internal @[[COUNTDOWN_GLOBAL]](0 : i32)
// CHECK:       llvm.func internal @parallel_copy_parallel0(%[[D:.*]]: !llvm.ptr)
// CHECK:         %[[FIRST_SLOT:.*]] = llvm.alloca
// CHECK-NEXT:    %[[LAST_SLOT:.*]] = llvm.alloca
// CHECK:         %[[STARTED:.*]] = llvm.call @GOMP_loop_guided_start(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FIRST_SLOT]], %[[LAST_SLOT]])
// CHECK:       ^[[BODY:.*]]:
// CHECK-NEXT:    %[[FIRST:.*]] = llvm.load %[[FIRST_SLOT]]
// CHECK-NEXT:    %[[LAST:.*]] = llvm.load %[[LAST_SLOT]]
// CHECK-NEXT:    llvm.call @parallel_copy_parallel0_body(%{{.*}}, %{{.*}}, %[[FIRST]], %[[LAST]])
// CHECK-NEXT:    %{{.*}} = llvm.call @GOMP_loop_guided_next(%[[FIRST_SLOT]], %[[LAST_SLOT]])
// CHECK:         %[[TID:.*]] = llvm.call @omp_get_thread_num() : () -> i32
// CHECK:         %[[IS_MASTER:.*]] = llvm.icmp "eq" %[[TID]], %{{.*}} : i32
// CHECK-NEXT:    %[[MINE:.*]] = llvm.mlir.addressof @[[DONE_GLOBAL]] : !llvm.ptr
// CHECK-NEXT:    %[[OTHERS:.*]] = llvm.mlir.addressof @dlc_team_scratch : !llvm.ptr
// CHECK-NEXT:    %[[WHERE:.*]] = llvm.select %[[IS_MASTER]], %[[MINE]], %[[OTHERS]] : i1, !llvm.ptr
// CHECK-NEXT:    %[[NOW:.*]] = llvm.call @omp_get_wtime() : () -> f64
// CHECK-NEXT:    llvm.store %[[NOW]], %[[WHERE]] {alignment = 8 : i64} : f64, !llvm.ptr
// CHECK-NEXT:    llvm.call @GOMP_loop_end_nowait()
// CHECK:       llvm.func internal @parallel_copy_parallel0_body(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: i64)

// With parallel_runtime=dlc (POOL) the loop goes to dlc's pool instead: one call of
// dlc_parallel_for with the chunk function, the data block, the trip count and the thread count;
// the chunk function runs the body on the [first, last) the pool hands it.
// POOL-LABEL: llvm.func @parallel_copy
// POOL:         %[[DATA:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 16 : i64} : (i64) -> !llvm.ptr
// POOL:         %[[FN:.*]] = llvm.mlir.addressof @parallel_copy_parallel0 : !llvm.ptr
// POOL:         %[[THREADS:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i32
// POOL:         llvm.call @dlc_parallel_for(%[[FN]], %[[DATA]], %{{.*}}, %[[THREADS]]) : (!llvm.ptr, !llvm.ptr, i64, i32) -> ()
// POOL-NEXT:    llvm.return
// POOL-NOT:     GOMP
// POOL-NOT:     omp_get
// POOL:       llvm.func internal @parallel_copy_parallel0(%[[D:.*]]: !llvm.ptr, %[[FIRST:.*]]: i64, %[[LAST:.*]]: i64)
// POOL:         llvm.call @parallel_copy_parallel0_body(%{{.*}}, %{{.*}}, %[[FIRST]], %[[LAST]])
// POOL-NEXT:    llvm.return
// POOL:       llvm.func internal @parallel_copy_parallel0_body(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: i64)

// FIXED-LABEL: llvm.func @parallel_copy
// FIXED:         %[[THREADS:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i32
// FIXED-NEXT:    %[[FLAGS:.*]] = llvm.mlir.constant(0 : i32) : i32
// FIXED-NEXT:    llvm.call @GOMP_parallel(%{{.*}}, %{{.*}}, %[[THREADS]], %[[FLAGS]])
// FIXED-NEXT:    llvm.return
// FIXED-NOT:     dlc_team

// STATIC-LABEL: llvm.func internal @parallel_copy_parallel0(%[[D:.*]]: !llvm.ptr)
// STATIC:         %[[TID32:.*]] = llvm.call @omp_get_thread_num() : () -> i32
// STATIC-NEXT:    %[[TID:.*]] = llvm.sext %[[TID32]] : i32 to i64
// STATIC-NEXT:    %[[NTH32:.*]] = llvm.call @omp_get_num_threads() : () -> i32
// STATIC-NEXT:    %[[NTH:.*]] = llvm.sext %[[NTH32]] : i32 to i64
// STATIC:         %[[CHUNK:.*]] = llvm.udiv %{{.*}}, %[[NTH]] : i64
// STATIC-NEXT:    %[[START:.*]] = llvm.mul %[[TID]], %[[CHUNK]] : i64
// STATIC-NEXT:    %[[FIRST:.*]] = llvm.call_intrinsic "llvm.umin.i64"(%[[START]], %{{.*}})
// STATIC:         %[[LAST:.*]] = llvm.call_intrinsic "llvm.umin.i64"
// STATIC-NEXT:    llvm.call @parallel_copy_parallel0_body(%{{.*}}, %{{.*}}, %[[FIRST]], %[[LAST]])
func.func @parallel_copy(%A: memref<8x16xf32>, %B: memref<8x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c16 step %c1 axis "j" {
      loop.block "copy" reads(%A : memref<8x16xf32>) writes(%B : memref<8x16xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<8x16xf32> -> f32
        loop.store %a, %B[%i, %j] : f32 -> memref<8x16xf32>
      }
    }
  }
  func.return
}

// -----

// An unrolled loop with constant bounds is a loop whose back edge asks LLVM to unroll it
// completely (`dlc.unroll_full`, printed as `!llvm.loop` metadata by `-t llvm`); a loop of more
// than 64 iterations stays a plain loop.

// CHECK-LABEL: llvm.func @unrolled
// CHECK:         llvm.cond_br
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK:         llvm.br ^{{.*}}(%{{.*}} : i64) {dlc.unroll_full}
// CHECK:         llvm.return
func.func @unrolled(%A: memref<3xf32>, %B: memref<3xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c3 step %c1 axis "i" kind unrolled {
    %a = loop.load %A[%i] : memref<3xf32> -> f32
    loop.store %a, %B[%i] : f32 -> memref<3xf32>
  }
  func.return
}

// -----

// CHECK-LABEL: llvm.func @unrolled_too_long
// CHECK-NOT:     dlc.unroll_full
// CHECK:         llvm.return
func.func @unrolled_too_long(%A: memref<65xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c65 = arith.constant 65 : index
  loop.for %i = %c0 to %c65 step %c1 axis "i" kind unrolled {
    %z = arith.constant 0.0 : f32
    loop.store %z, %A[%i] : f32 -> memref<65xf32>
  }
  func.return
}

// -----

// Booleans take a byte each in memory (NumPy's bool), also in vector code: an i1 buffer is
// loaded and stored as i8 (trunc after the load, zext before the store). A vectorized float
// compare is one llvm.fcmp of vectors, giving a vector of i1.

// CHECK-LABEL: llvm.func @vectorized_compare_into_bool_buffer
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
// CHECK:         %[[MASK_BYTES:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<4xi8>
// CHECK-NEXT:    %[[MASK:.*]] = llvm.trunc %[[MASK_BYTES]] : vector<4xi8> to vector<4xi1>
// CHECK-NEXT:    %[[LESS:.*]] = llvm.fcmp "olt" %[[A]], %[[B]] : vector<4xf32>
// CHECK-NEXT:    %[[BOTH:.*]] = llvm.and %[[LESS]], %[[MASK]] : vector<4xi1>
// CHECK:         %[[BYTES:.*]] = llvm.zext %[[BOTH]] : vector<4xi1> to vector<4xi8>
// CHECK:         llvm.store %[[BYTES]], %{{.*}} {alignment = 1 : i64} : vector<4xi8>, !llvm.ptr
func.func @vectorized_compare_into_bool_buffer(%x: memref<4xf32>, %y: memref<4xf32>, %m: memref<4xi1>, %out: memref<4xi1>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind vectorized {
    %a = loop.load %x[%i] : memref<4xf32> -> f32
    %b = loop.load %y[%i] : memref<4xf32> -> f32
    %k = loop.load %m[%i] : memref<4xi1> -> i1
    %lt = arith.cmpf olt, %a, %b : f32
    %r = arith.andi %lt, %k : i1
    loop.store %r, %out[%i] : i1 -> memref<4xi1>
  }
  func.return
}

// -----

// CHECK-LABEL: llvm.func @scalar_bool_memref
// CHECK-SAME:    (%[[M:.*]]: !llvm.ptr, %[[I:.*]]: i64)
// CHECK:         %[[AT:.*]] = llvm.getelementptr inbounds %[[M]][%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[BYTE:.*]] = llvm.load %[[AT]] {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK-NEXT:    %[[K:.*]] = llvm.trunc %[[BYTE]] : i8 to i1
// CHECK:         %[[STORED:.*]] = llvm.zext %[[K]] : i1 to i8
// CHECK-NEXT:    llvm.store %[[STORED]], %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr
func.func @scalar_bool_memref(%m: memref<2xi1>, %i: index) {
  %c0 = arith.constant 0 : index
  %k = memref.load %m[%i] : memref<2xi1>
  memref.store %k, %m[%c0] : memref<2xi1>
  func.return
}

// -----

// An index computed from data in a vectorized loop (nearest-neighbour Resize): the index_cast
// of the vector of lanes sign-extends the whole vector, then each lane is gathered.

// CHECK-LABEL: llvm.func @vectorized_index_cast_gather
// CHECK:         %[[K:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xi32>
// CHECK-NEXT:    %[[J:.*]] = llvm.sext %[[K]] : vector<4xi32> to vector<4xi64>
// CHECK-NEXT:    %[[LANE:.*]] = llvm.shufflevector %[[J]], %[[J]] [0] : vector<4xi64>
// CHECK-NEXT:    %[[J0:.*]] = llvm.bitcast %[[LANE]] : vector<1xi64> to i64
// CHECK-NEXT:    llvm.getelementptr inbounds %{{.*}}[%[[J0]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
func.func @vectorized_index_cast_gather(%idx: memref<4xi32>, %x: memref<8xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind vectorized {
    %k = loop.load %idx[%i] : memref<4xi32> -> i32
    %j = arith.index_cast %k : i32 to index
    %v = loop.load %x[%j] : memref<8xf32> -> f32
    loop.store %v, %out[%i] : f32 -> memref<4xf32>
  }
  func.return
}

// -----

// Arguments marked dlc.unsigned (unsigned in the graph, signless here) are NumPy uint<N> in the
// entry signature; the others keep their signless dtype.

// CHECK-LABEL: llvm.func @unsigned_arguments
// CHECK:       llvm.mlir.global external constant @dlc_metadata
// CHECK-SAME:    {\22name\22:\22x\22,\22shape\22:[4],\22dtype\22:\22uint16\22}
// CHECK-SAME:    {\22name\22:\22y\22,\22shape\22:[4],\22dtype\22:\22int16\22}
// CHECK-SAME:    {\22name\22:\22unsigned_arguments_out0\22,\22shape\22:[4],\22dtype\22:\22uint16\22}
func.func @unsigned_arguments(%x: memref<4xi16> {dlc.unsigned}, %y: memref<4xi16>, %out: memref<4xi16> {dlc.unsigned}) attributes {dlc.num_outputs = 1 : i64} {
  "memref.copy"(%x, %out) : (memref<4xi16>, memref<4xi16>) -> ()
  func.return
}

// -----

// Arguments that are one row of a dynamic batch (dlc.batch_rows, from graph-batch-rows) say so
// in the entry signature (`batch`); the others have no `batch` key. @batch_rows__batch runs n
// rows: the block entry (@batch_rows__rows4) on each whole block of 4 rows, the batched
// pointers advanced by the rows' bytes (16 per row), `w` whole; then the rows left: with no
// whole block before them, one at a time through the row entry; after whole blocks, 3 rows
// as the block entry on the batch's last 4 rows (shifted: its first row computed again, with
// no copy, for what three calls cost), fewer one at a time.

// CHECK-LABEL: llvm.func @batch_rows__batch(
// CHECK-SAME:    %n: i64, %[[X:[0-9]+]]: !llvm.ptr, %[[W:[0-9]+]]: !llvm.ptr, %[[Y:[0-9]+]]: !llvm.ptr) attributes {dlc.batch_entry}
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    llvm.br ^[[BLOCKS:bb[0-9]+]](%[[ZERO]] : i64)
// CHECK-NEXT:  ^[[BLOCKS]](%[[I:.*]]: i64):
// CHECK-NEXT:    %[[K:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[END:.*]] = llvm.add %[[I]], %[[K]] : i64
// CHECK-NEXT:    %[[FITS:.*]] = llvm.icmp "ule" %[[END]], %n : i64
// CHECK-NEXT:    llvm.cond_br %[[FITS]], ^[[BLOCK:bb[0-9]+]](%[[I]] : i64), ^[[TAIL:bb[0-9]+]](%[[I]] : i64)
// CHECK-NEXT:  ^[[BLOCK]](%[[B:.*]]: i64):
// CHECK-NEXT:    %[[S:.*]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    %[[OFF:.*]] = llvm.mul %[[B]], %[[S]] : i64
// CHECK-NEXT:    %[[XB:.*]] = llvm.getelementptr inbounds %[[X]]{{\[}}%[[OFF]]{{\]}} : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         %[[YB:.*]] = llvm.getelementptr inbounds %[[Y]]
// CHECK-NEXT:    llvm.call @batch_rows__rows4(%[[XB]], %[[W]], %[[YB]])
// CHECK:         llvm.br ^[[BLOCKS]]
// CHECK-NEXT:  ^[[TAIL]](%[[T:.*]]: i64):
// CHECK-NEXT:    %[[NONE:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[ALONE:.*]] = llvm.icmp "eq" %[[T]], %[[NONE]] : i64
// CHECK-NEXT:    llvm.cond_br %[[ALONE]], ^[[ROWS:bb[0-9]+]](%[[T]] : i64), ^[[AFTER:bb[0-9]+]](%[[T]] : i64)
// CHECK-NEXT:  ^[[AFTER]](%[[A:.*]]: i64):
// CHECK-NEXT:    %[[LEFT:.*]] = llvm.sub %n, %[[A]] : i64
// CHECK-NEXT:    %[[THREE:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %[[IS_THREE:.*]] = llvm.icmp "eq" %[[LEFT]], %[[THREE]] : i64
// CHECK-NEXT:    llvm.cond_br %[[IS_THREE]], ^[[SHIFTED:bb[0-9]+]](%[[A]] : i64), ^[[FEWER:bb[0-9]+]](%[[A]] : i64)
// CHECK-NEXT:  ^[[SHIFTED]](%{{.*}}: i64):
// CHECK-NEXT:    %[[FOUR:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[LAST:.*]] = llvm.sub %n, %[[FOUR]] : i64
// CHECK-NEXT:    %[[S2:.*]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    %[[OFF2:.*]] = llvm.mul %[[LAST]], %[[S2]] : i64
// CHECK-NEXT:    %[[XL:.*]] = llvm.getelementptr inbounds %[[X]]{{\[}}%[[OFF2]]{{\]}}
// CHECK:         llvm.call @batch_rows__rows4(%[[XL]], %[[W]], %{{.*}})
// CHECK-NEXT:    llvm.br ^[[DONE:bb[0-9]+]]
// CHECK-NEXT:  ^[[FEWER]](%[[F:.*]]: i64):
// CHECK-NEXT:    llvm.br ^[[ROWS]](%[[F]] : i64)
// CHECK-NEXT:  ^[[ROWS]](%[[R:.*]]: i64):
// CHECK-NEXT:    %[[MORE:.*]] = llvm.icmp "ult" %[[R]], %n : i64
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^[[ROW:bb[0-9]+]](%[[R]] : i64), ^[[DONE]]
// CHECK-NEXT:  ^[[ROW]]
// CHECK:         llvm.call @batch_rows(%{{.*}}, %[[W]], %{{.*}})
// CHECK:         %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.add %{{.*}}, %[[ONE]] : i64
// CHECK-NEXT:    llvm.br ^[[ROWS]](%[[NEXT]] : i64)
// CHECK-NEXT:  ^[[DONE]]:
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.mlir.global external constant @dlc_metadata
// CHECK-SAME:    {\22name\22:\22x\22,\22shape\22:[1,4],\22dtype\22:\22float32\22,\22batch\22:\22N\22}
// CHECK-SAME:    {\22name\22:\22w\22,\22shape\22:[4],\22dtype\22:\22float32\22}
// CHECK-SAME:    {\22name\22:\22y\22,\22shape\22:[1,4],\22dtype\22:\22float32\22,\22batch\22:\22N\22}
func.func @batch_rows(%x: memref<1x4xf32> {onnx.name = "x", dlc.batch_rows = "N"}, %w: memref<4xf32> {onnx.name = "w"}, %y: memref<1x4xf32> {onnx.name = "y", dlc.batch_rows = "N"}) attributes {dlc.num_outputs = 1 : i64} {
  "memref.copy"(%x, %y) : (memref<1x4xf32>, memref<1x4xf32>) -> ()
  func.return
}
func.func @batch_rows__rows4(%x: memref<4x4xf32> {onnx.name = "x", dlc.batch_rows = "N"}, %w: memref<4xf32> {onnx.name = "w"}, %y: memref<4x4xf32> {onnx.name = "y", dlc.batch_rows = "N"}) attributes {dlc.num_outputs = 1 : i64} {
  "memref.copy"(%x, %y) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  func.return
}

// -----

// The rows left after the whole blocks run by their plan (`tail_plans`, from the entries'
// estimated costs: here both read a 4 MiB weight, more than the target's 1 MiB L2, and compute
// nothing, so a block of 4 costs about a row). With no whole block before them, 2 or 3 rows
// run as one padded block: a scratch buffer holds a block of each batched argument (64-byte
// aligned: x at 0, y at 64), the tail's rows of x are copied in and its last row repeated
// into the others, the block entry runs on the scratch, and the tail's rows of y are copied
// out. After whole blocks, they run as the block entry on the batch's last 4 rows (shifted:
// no copy). A single row still runs through the row entry, and so does the tail when the
// scratch cannot be allocated.

// CHECK:       llvm.func @memcpy(!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @pad_rows__batch(
// CHECK-SAME:    %n: i64, %[[X:[0-9]+]]: !llvm.ptr, %[[Y:[0-9]+]]: !llvm.ptr) attributes {dlc.batch_entry}
// CHECK:         llvm.cond_br %{{.*}}, ^{{.*}}, ^[[TAIL:bb[0-9]+]](%{{.*}} : i64)
// CHECK:         llvm.call @pad_rows__rows4(
// CHECK:       ^[[TAIL]](%[[T:.*]]: i64):
// CHECK-NEXT:    %[[NONE:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[ALONE:.*]] = llvm.icmp "eq" %[[T]], %[[NONE]] : i64
// CHECK-NEXT:    llvm.cond_br %[[ALONE]], ^[[SMALL:bb[0-9]+]](%[[T]] : i64), ^[[AFTER:bb[0-9]+]](%[[T]] : i64)
// CHECK-NEXT:  ^[[SMALL]](%[[T0:.*]]: i64):
// CHECK-NEXT:    %[[LEFT:.*]] = llvm.sub %n, %[[T0]] : i64
// CHECK-NEXT:    %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[IS_TWO:.*]] = llvm.icmp "eq" %[[LEFT]], %[[TWO]] : i64
// CHECK-NEXT:    llvm.cond_br %[[IS_TWO]], ^[[TWO_ROWS:bb[0-9]+]](%[[T0]] : i64), ^[[NOT_TWO:bb[0-9]+]](%[[T0]] : i64)
// CHECK-NEXT:  ^[[TWO_ROWS]](%[[T2:.*]]: i64):
// CHECK-NEXT:    llvm.br ^[[PAD:bb[0-9]+]](%[[T2]] : i64)
// CHECK-NEXT:  ^[[NOT_TWO]](%[[T3:.*]]: i64):
// CHECK-NEXT:    %[[THREE:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %[[IS_THREE:.*]] = llvm.icmp "eq" %[[LEFT]], %[[THREE]] : i64
// CHECK-NEXT:    llvm.cond_br %[[IS_THREE]], ^[[THREE_ROWS:bb[0-9]+]](%[[T3]] : i64), ^[[OTHER:bb[0-9]+]](%[[T3]] : i64)
// CHECK-NEXT:  ^[[THREE_ROWS]](%[[T4:.*]]: i64):
// CHECK-NEXT:    llvm.br ^[[PAD]](%[[T4]] : i64)
// CHECK-NEXT:  ^[[OTHER]](%[[T5:.*]]: i64):
// CHECK-NEXT:    llvm.br ^[[ROWS:bb[0-9]+]](%[[T5]] : i64)
// CHECK-NEXT:  ^[[AFTER]](%[[A:.*]]: i64):
// CHECK-NEXT:    %[[LEFT_A:.*]] = llvm.sub %n, %[[A]] : i64
// CHECK-NEXT:    %[[TWO_A:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    llvm.icmp "eq" %[[LEFT_A]], %[[TWO_A]] : i64
// CHECK-NEXT:    llvm.cond_br %{{.*}}, ^[[SHIFT_TWO:bb[0-9]+]](%[[A]] : i64), ^{{bb[0-9]+}}(%[[A]] : i64)
// CHECK-NEXT:  ^[[SHIFT_TWO]](%{{.*}}: i64):
// CHECK-NEXT:    %[[FOUR:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[LAST:.*]] = llvm.sub %n, %[[FOUR]] : i64
// CHECK:         llvm.call @pad_rows__rows4(
// CHECK-NEXT:    llvm.br ^[[DONE:bb[0-9]+]]
// CHECK:         llvm.call @pad_rows__rows4(
// CHECK-NEXT:    llvm.br ^[[DONE]]
// CHECK:       ^[[PAD]](%[[P:.*]]: i64):
// CHECK-NEXT:    %[[R:.*]] = llvm.sub %n, %[[P]] : i64
// CHECK-NEXT:    %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %[[SIZE:.*]] = llvm.mlir.constant(128) : i64
// CHECK-NEXT:    %[[SCRATCH:.*]] = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]])
// CHECK-NEXT:    %[[ADDRESS:.*]] = llvm.ptrtoint %[[SCRATCH]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[NULL:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[FAILED:.*]] = llvm.icmp "eq" %[[ADDRESS]], %[[NULL]] : i64
// CHECK-NEXT:    llvm.cond_br %[[FAILED]], ^[[ROWS]](%[[P]] : i64), ^{{bb[0-9]+}}
// CHECK:         %[[XS:.*]] = llvm.getelementptr inbounds %[[SCRATCH]]
// CHECK:         llvm.call @memcpy(%[[XS]], %{{.*}}, %{{.*}})
// CHECK:         llvm.call @memcpy(
// CHECK:         llvm.call @pad_rows__rows4(%[[XS]], %[[YS:.*]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK:         llvm.call @memcpy(%{{.*}}, %[[YS]], %{{.*}})
// CHECK-NEXT:    llvm.call @free(%[[SCRATCH]])
// CHECK:       ^[[ROWS]]
// CHECK:         llvm.call @pad_rows(
"memref.global"() <{sym_name = "pad_rows_weights", type = memref<1048576xf32>, initial_value = dense<1.0> : tensor<1048576xf32>, sym_visibility = "private", constant}> : () -> ()
func.func private @pad_rows_kernel(%x: memref<1x4xf32>, %w: memref<1048576xf32>, %y: memref<1x4xf32>) {
  "memref.copy"(%x, %y) : (memref<1x4xf32>, memref<1x4xf32>) -> ()
  func.return
}
func.func private @pad_rows_kernel4(%x: memref<4x4xf32>, %w: memref<1048576xf32>, %y: memref<4x4xf32>) {
  "memref.copy"(%x, %y) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  func.return
}
func.func @pad_rows(%x: memref<1x4xf32> {onnx.name = "x", dlc.batch_rows = "N"}, %y: memref<1x4xf32> {onnx.name = "y", dlc.batch_rows = "N"}) attributes {dlc.num_outputs = 1 : i64} {
  %w = memref.get_global @pad_rows_weights : memref<1048576xf32>
  func.call @pad_rows_kernel(%x, %w, %y) : (memref<1x4xf32>, memref<1048576xf32>, memref<1x4xf32>) -> ()
  func.return
}
func.func @pad_rows__rows4(%x: memref<4x4xf32> {onnx.name = "x", dlc.batch_rows = "N"}, %y: memref<4x4xf32> {onnx.name = "y", dlc.batch_rows = "N"}) attributes {dlc.num_outputs = 1 : i64} {
  %w = memref.get_global @pad_rows_weights : memref<1048576xf32>
  func.call @pad_rows_kernel4(%x, %w, %y) : (memref<4x4xf32>, memref<1048576xf32>, memref<4x4xf32>) -> ()
  func.return
}

// -----

// Entries whose cost is proportional to their rows (no weights) run a tail as whole entries,
// the largest first and no padding: after the blocks of 4, 2 rows through the block entry of
// 2, 3 rows through it and then the row entry one row further on (the rows' bytes, 16, times
// the row), and a single row through the row loop.

// CHECK-LABEL: llvm.func @whole_rows__batch(
// CHECK-SAME:    %n: i64, %[[X:[0-9]+]]: !llvm.ptr, %[[Y:[0-9]+]]: !llvm.ptr) attributes {dlc.batch_entry}
// CHECK:         llvm.call @whole_rows__rows4(
// CHECK:         %[[LEFT:.*]] = llvm.sub %n, %{{.*}} : i64
// CHECK-NEXT:    %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    llvm.icmp "eq" %[[LEFT]], %[[TWO]] : i64
// CHECK-NEXT:    llvm.cond_br %{{.*}}, ^[[TWO_ROWS:bb[0-9]+]](%{{.*}} : i64), ^[[NOT_TWO:bb[0-9]+]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[TWO_ROWS]](%{{.*}}: i64):
// CHECK:         llvm.call @whole_rows__rows2(
// CHECK:         llvm.br ^[[DONE:bb[0-9]+]]
// CHECK-NEXT:  ^[[NOT_TWO]](%{{.*}}: i64):
// CHECK-NEXT:    %[[THREE:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    llvm.icmp "eq" %[[LEFT]], %[[THREE]] : i64
// CHECK-NEXT:    llvm.cond_br %{{.*}}, ^[[THREE_ROWS:bb[0-9]+]](%{{.*}} : i64), ^[[OTHER:bb[0-9]+]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[THREE_ROWS]](%[[FIRST:.*]]: i64):
// CHECK-NEXT:    %[[S:.*]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    %[[OFFSET:.*]] = llvm.mul %[[FIRST]], %[[S]] : i64
// CHECK-NEXT:    %[[XT:.*]] = llvm.getelementptr inbounds %[[X]]{{\[}}%[[OFFSET]]{{\]}}
// CHECK:         llvm.call @whole_rows__rows2(%[[XT]], %{{.*}})
// CHECK-NEXT:    %[[ADVANCE:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.add %[[FIRST]], %[[ADVANCE]] : i64
// CHECK-NEXT:    %[[S2:.*]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    llvm.mul %[[NEXT]], %[[S2]] : i64
// CHECK:         llvm.call @whole_rows(
// CHECK:         llvm.br ^[[DONE]]
// CHECK-NEXT:  ^[[OTHER]](%[[R:.*]]: i64):
// CHECK-NEXT:    llvm.br ^[[ROWS:bb[0-9]+]](%[[R]] : i64)
// CHECK-NEXT:  ^[[ROWS]](%{{.*}}: i64):
// CHECK:         llvm.call @whole_rows(
// CHECK:       ^[[DONE]]:
// CHECK-NEXT:    llvm.return
func.func @whole_rows(%x: memref<1x4xf32> {onnx.name = "x", dlc.batch_rows = "N"}, %y: memref<1x4xf32> {onnx.name = "y", dlc.batch_rows = "N"}) attributes {dlc.num_outputs = 1 : i64} {
  "memref.copy"(%x, %y) : (memref<1x4xf32>, memref<1x4xf32>) -> ()
  func.return
}
func.func @whole_rows__rows4(%x: memref<4x4xf32> {onnx.name = "x", dlc.batch_rows = "N"}, %y: memref<4x4xf32> {onnx.name = "y", dlc.batch_rows = "N"}) attributes {dlc.num_outputs = 1 : i64} {
  "memref.copy"(%x, %y) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  func.return
}
func.func @whole_rows__rows2(%x: memref<2x4xf32> {onnx.name = "x", dlc.batch_rows = "N"}, %y: memref<2x4xf32> {onnx.name = "y", dlc.batch_rows = "N"}) attributes {dlc.num_outputs = 1 : i64} {
  "memref.copy"(%x, %y) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  func.return
}

// -----

// With check-bounds, each index is compared (unsigned: a negative one fails too) with its
// dimension before the access; a violation branches to a block that reports the kernel, the
// buffer, the index and the dimension and aborts. Without the option nothing of it is emitted.

// BOUNDS-LABEL: llvm.func @check_bounds_load_store
// BOUNDS:         %[[SIZE:[0-9]+]] = llvm.mlir.constant(8) : i64
// BOUNDS-NEXT:    %[[LOAD_OK:.*]] = llvm.icmp "ult" %[[I:[a-z0-9]+]], %[[SIZE]] : i64
// BOUNDS-NEXT:    llvm.cond_br %[[LOAD_OK]], ^[[LOAD:bb[0-9]+]], ^[[LOAD_OOB:bb[0-9]+]]
// BOUNDS-NEXT:  ^[[LOAD]]:
// BOUNDS-NEXT:    llvm.getelementptr inbounds %A[%[[I]]]
// BOUNDS-NEXT:    %[[V:.*]] = llvm.load
// BOUNDS-NEXT:    %[[SIZE2:.*]] = llvm.mlir.constant(8) : i64
// BOUNDS-NEXT:    %[[STORE_OK:.*]] = llvm.icmp "ult" %[[I]], %[[SIZE2]] : i64
// BOUNDS-NEXT:    llvm.cond_br %[[STORE_OK]], ^[[STORE:bb[0-9]+]], ^[[STORE_OOB:bb[0-9]+]]
// BOUNDS-NEXT:  ^[[STORE]]:
// BOUNDS-NEXT:    llvm.getelementptr inbounds %B[%[[I]]]
// BOUNDS-NEXT:    llvm.store %[[V]]
// BOUNDS:       ^[[LOAD_OOB]]:
// BOUNDS-NEXT:    %[[LOAD_MSG:.*]] = llvm.mlir.addressof @[[LOAD_MESSAGE:dlc_oob_message_[0-9]+]] : !llvm.ptr
// BOUNDS-NEXT:    %[[FD:.*]] = llvm.mlir.constant(2 : i32) : i32
// BOUNDS-NEXT:    llvm.call @dprintf(%[[FD]], %[[LOAD_MSG]], %[[I]], %[[SIZE]]) vararg(!llvm.func<i32 (i32, !llvm.ptr, ...)>) : (i32, !llvm.ptr, i64, i64) -> i32
// BOUNDS-NEXT:    llvm.call @abort() : () -> ()
// BOUNDS-NEXT:    llvm.unreachable
// BOUNDS-NEXT:  ^[[STORE_OOB]]:
// BOUNDS-NEXT:    %[[STORE_MSG:.*]] = llvm.mlir.addressof @[[STORE_MESSAGE:dlc_oob_message_[0-9]+]] : !llvm.ptr
// BOUNDS-NEXT:    %[[FD2:.*]] = llvm.mlir.constant(2 : i32) : i32
// BOUNDS-NEXT:    llvm.call @dprintf(%[[FD2]], %[[STORE_MSG]], %[[I]], %[[SIZE2]])
// BOUNDS-NEXT:    llvm.call @abort() : () -> ()
// BOUNDS-NEXT:    llvm.unreachable
// BOUNDS:       llvm.mlir.global internal constant @[[LOAD_MESSAGE]]("dlc: out-of-bounds load of buffer A (arg 0) in @check_bounds_load_store: index %lld not in [0, %lld) (dimension 0 of memref<8xf32>)\0A\00")
// BOUNDS:       llvm.mlir.global internal constant @[[STORE_MESSAGE]]("dlc: out-of-bounds store of buffer B (arg 1) in @check_bounds_load_store: index %lld not in [0, %lld) (dimension 0 of memref<8xf32>)\0A\00")
// BOUNDS:       llvm.func @dprintf(i32, !llvm.ptr, ...) -> i32
// BOUNDS:       llvm.func @abort()

// CHECK-LABEL: llvm.func @check_bounds_load_store
// CHECK-NOT:     "ult"
// CHECK-NOT:     dprintf
// CHECK:       llvm.mlir.global external constant @dlc_metadata
func.func @check_bounds_load_store(%A: memref<8xf32>, %B: memref<8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    %v = loop.load %A[%i] : memref<8xf32> -> f32
    loop.store %v, %B[%i] : f32 -> memref<8xf32>
  }
  func.return
}

// -----

// A vector access of 16 lanes along the last dimension checks its first index against
// `size - 16 + 1` (all lanes inside); a constant index inside its dimension is not checked.

// BOUNDS-LABEL: llvm.func @check_bounds_vector
// BOUNDS:         %[[LIMIT:[0-9]+]] = llvm.mlir.constant(17) : i64
// BOUNDS-NEXT:    %[[OK:.*]] = llvm.icmp "ult" %[[J:[a-z0-9]+]], %[[LIMIT]] : i64
// BOUNDS-NEXT:    %[[SIZE:.*]] = llvm.mlir.constant(32) : i64
// BOUNDS-NEXT:    llvm.cond_br %[[OK]], ^{{.*}}, ^[[OOB:bb[0-9]+]]
// BOUNDS-NOT:     llvm.icmp "ult"
// BOUNDS:         llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// BOUNDS:       ^[[OOB]]:
// BOUNDS-NEXT:    %[[MSG:.*]] = llvm.mlir.addressof
// BOUNDS-NEXT:    llvm.mlir.constant(2 : i32)
// BOUNDS-NEXT:    llvm.call @dprintf(%{{.*}}, %[[MSG]], %[[J]], %[[SIZE]])
// BOUNDS:       "dlc: out-of-bounds load of 16 lanes of buffer A (arg 0) in @check_bounds_vector: index %lld + 15 not in [0, %lld) (dimension 1 of memref<4x32xf32>)\0A\00"
func.func @check_bounds_vector(%A: memref<4x32xf32>, %B: memref<4x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  loop.for %j = %c0 to %c32 step %c16 axis "j" kind vectorized {
    %v = loop.load %A[%c0, %j] : memref<4x32xf32> -> vector<16xf32>
    loop.store %v, %B[%c0, %j] : vector<16xf32> -> memref<4x32xf32>
  }
  func.return
}

// -----

// A gather in a vectorized loop checks the index of each lane.

// BOUNDS-LABEL: llvm.func @check_bounds_gather
// BOUNDS-COUNT-4: llvm.icmp "ult" %{{.*}}, %{{.*}} : i64
// BOUNDS-NOT:     llvm.icmp "ult"
// BOUNDS:         llvm.return
// BOUNDS:       "dlc: out-of-bounds load of buffer x (arg 1) in @check_bounds_gather: index %lld not in [0, %lld) (dimension 0 of memref<8xf32>)\0A\00"
func.func @check_bounds_gather(%idx: memref<4xi32>, %x: memref<8xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind vectorized {
    %k = loop.load %idx[%i] : memref<4xi32> -> i32
    %j = arith.index_cast %k : i32 to index
    %v = loop.load %x[%j] : memref<8xf32> -> f32
    loop.store %v, %out[%i] : f32 -> memref<4xf32>
  }
  func.return
}

// -----

// A memref.load checks each index against its own dimension (not only the linear offset).

// BOUNDS-LABEL: llvm.func @check_bounds_memref_load
// BOUNDS:         %[[ROWS:[0-9]+]] = llvm.mlir.constant(2) : i64
// BOUNDS-NEXT:    %[[ROW_OK:.*]] = llvm.icmp "ult" %i, %[[ROWS]] : i64
// BOUNDS-NEXT:    llvm.cond_br %[[ROW_OK]]
// BOUNDS:         %[[COLS:[0-9]+]] = llvm.mlir.constant(3) : i64
// BOUNDS-NEXT:    %[[COL_OK:.*]] = llvm.icmp "ult" %j, %[[COLS]] : i64
// BOUNDS-NEXT:    llvm.cond_br %[[COL_OK]]
// BOUNDS:       "dlc: out-of-bounds load of buffer A (arg 0) in @check_bounds_memref_load: index %lld not in [0, %lld) (dimension 1 of memref<2x3xf32>)\0A\00"
func.func @check_bounds_memref_load(%A: memref<2x3xf32>, %i: index, %j: index) -> f32 {
  %v = memref.load %A[%i, %j] : memref<2x3xf32>
  func.return %v : f32
}

// -----

// scf.while (the loop of graph.loop in an entry function): the "before" region is the header,
// scf.condition a conditional branch to the body or to the exit, whose arguments are the loop's
// results; the body branches back to the header.

// CHECK-LABEL: llvm.func @scf_while
// CHECK:         %[[FIRST:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[GO:.*]] = llvm.mlir.constant(true) : i1
// CHECK-NEXT:    llvm.br ^[[HEADER:.*]](%[[FIRST]], %[[GO]] : i64, i1)
// CHECK-NEXT:  ^[[HEADER]](%i: i64, %g: i1):
// CHECK-NEXT:    %more = llvm.icmp "slt" %i, %trip : i64
// CHECK-NEXT:    %ok = llvm.and %more, %g : i1
// CHECK-NEXT:    llvm.cond_br %ok, ^[[BODY:.*]](%i, %g : i64, i1), ^[[EXIT:.*]](%i, %g : i64, i1)
// CHECK-NEXT:  ^[[BODY]](%iteration: i64, %cond: i1):
// CHECK-NEXT:    %one = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %next = llvm.add %iteration, %one : i64
// CHECK-NEXT:    llvm.br ^[[HEADER]](%next, %cond : i64, i1)
// CHECK-NEXT:  ^[[EXIT]](%last: i64, %done: i1):
// CHECK:         llvm.store %last, %out
func.func @scf_while(%n: memref<i64>, %out: memref<i64>) attributes {dlc.num_outputs = 1 : i64} {
  %trip = loop.load %n[] : memref<i64> -> i64
  %first = arith.constant 0 : i64
  %go = arith.constant true
  %last, %done = scf.while (%i = %first, %g = %go) : (i64, i1) -> (i64, i1) {
    %more = arith.cmpi slt, %i, %trip : i64
    %ok = arith.andi %more, %g : i1
    scf.condition(%ok) %i, %g : i64, i1
  } do {
  ^bb0(%iteration: i64, %cond: i1):
    %one = arith.constant 1 : i64
    %next = arith.addi %iteration, %one : i64
    scf.yield %next, %cond : i64, i1
  }
  loop.store %last, %out[] : i64 -> memref<i64>
  func.return
}

// -----

// A tensor intrinsic: vpdpbusd's 4 bytes of a broadcast as one i32 word, its 64 bytes of b
// bitcast to 16 words, the library entry's LLVM intrinsic called.
// CHECK-LABEL: llvm.func @intrinsic_vpdpbusd
// CHECK:         %[[WORD:.*]] = llvm.bitcast %a : vector<4xi8> to i32
// CHECK:         %[[INSERTED:.*]] = llvm.insertelement %[[WORD]]
// CHECK-NEXT:    %[[SPLAT:.*]] = llvm.shufflevector %[[INSERTED]], %[[INSERTED]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xi32>
// CHECK-NEXT:    %[[WORDS:.*]] = llvm.bitcast %b : vector<64xi8> to vector<16xi32>
// CHECK-NEXT:    %r = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%acc, %[[SPLAT]], %[[WORDS]]) : (vector<16xi32>, vector<16xi32>, vector<16xi32>) -> vector<16xi32>
func.func @intrinsic_vpdpbusd(%acc: vector<16xi32>, %a: vector<4xi8>, %b: vector<64xi8>) -> vector<16xi32> {
  %r = loop.intrinsic "x86.avx512.vpdpbusd" %acc, %a, %b : (vector<16xi32>, vector<4xi8>, vector<64xi8>) -> vector<16xi32>
  func.return %r : vector<16xi32>
}

// -----

// vdpbf16ps: bf16 values are i16 bits, passed as <16 x i32> words (LLVM upgrades that signature
// to <32 x bfloat>; xDSL's printer has no bfloat): a's 2 bf16 broadcast as one word, b's 32
// bitcast to 16 words.
// CHECK-LABEL: llvm.func @intrinsic_vdpbf16ps
// CHECK:         %[[WORD:.*]] = llvm.bitcast %a : vector<2xi16> to i32
// CHECK:         %[[INSERTED:.*]] = llvm.insertelement %[[WORD]]
// CHECK-NEXT:    %[[SPLAT:.*]] = llvm.shufflevector %[[INSERTED]], %[[INSERTED]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xi32>
// CHECK-NEXT:    %[[WORDS:.*]] = llvm.bitcast %b : vector<32xi16> to vector<16xi32>
// CHECK-NEXT:    %r = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%acc, %[[SPLAT]], %[[WORDS]]) : (vector<16xf32>, vector<16xi32>, vector<16xi32>) -> vector<16xf32>
// CHECK-NOT:     bf16
func.func @intrinsic_vdpbf16ps(%acc: vector<16xf32>, %a: vector<2xbf16>, %b: vector<32xbf16>) -> vector<16xf32> {
  %r = loop.intrinsic "x86.avx512.vdpbf16ps" %acc, %a, %b : (vector<16xf32>, vector<2xbf16>, vector<32xbf16>) -> vector<16xf32>
  func.return %r : vector<16xf32>
}

// -----

// A warp-level GPU intrinsic has no LLVM call on the CPU.
// CHECK: 'loop.intrinsic' op expected an intrinsic with an LLVM call, found "ptx.mma.m16n8k32.s8" (mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32), which only the GPU path emits
func.func @negative_intrinsic_gpu_only(%acc: vector<4xi32>, %a: vector<16xi8>, %b: vector<8xi8>) -> vector<4xi32> {
  %r = loop.intrinsic "ptx.mma.m16n8k32.s8" %acc, %a, %b : (vector<4xi32>, vector<16xi8>, vector<8xi8>) -> vector<4xi32>
  func.return %r : vector<4xi32>
}

// -----

// Vectorized compares and selects stay whole vectors: one llvm.fcmp / llvm.icmp of
// vector<16xf32> / vector<16xi32> giving vector<16xi1>, and one llvm.select on it (no lanes
// extracted; LLVM does not always rebuild a vector compare from lanes).

// CHECK-LABEL: llvm.func @vectorized_compare_select
// CHECK-NOT:     llvm.extractelement
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:         %[[Y:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:         %[[I:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xi32>
// CHECK:         %[[J:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xi32>
// CHECK-NEXT:    %[[LT:.*]] = llvm.fcmp "ult" %[[X]], %[[Y]] : vector<16xf32>
// CHECK-NEXT:    %[[GT:.*]] = llvm.icmp "sgt" %[[I]], %[[J]] : vector<16xi32>
// CHECK-NEXT:    %[[BOTH:.*]] = llvm.and %[[LT]], %[[GT]] : vector<16xi1>
// CHECK-NEXT:    %[[R:.*]] = llvm.select %[[BOTH]], %[[X]], %[[Y]] : vector<16xi1>, vector<16xf32>
// CHECK:         llvm.store %[[R]], %{{.*}} : vector<16xf32>, !llvm.ptr
// CHECK-NOT:     llvm.extractelement
// CHECK:         llvm.return
func.func @vectorized_compare_select(%X: memref<16xf32>, %Y: memref<16xf32>, %I: memref<16xi32>,
    %J: memref<16xi32>, %Z: memref<16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %k = %c0 to %c16 step %c1 axis "k" kind vectorized {
    %x = loop.load %X[%k] : memref<16xf32> -> f32
    %y = loop.load %Y[%k] : memref<16xf32> -> f32
    %i = loop.load %I[%k] : memref<16xi32> -> i32
    %j = loop.load %J[%k] : memref<16xi32> -> i32
    %lt = arith.cmpf ult, %x, %y : f32
    %gt = arith.cmpi sgt, %i, %j : i32
    %both = arith.andi %lt, %gt : i1
    %r = arith.select %both, %x, %y : f32
    loop.store %r, %Z[%k] : f32 -> memref<16xf32>
  }
  func.return
}

// -----

// An i32 product of factors that fit in 16 bits (u8 minus a zero point, s8), accumulated by an
// add: on a target with avx512vnni (cascadelake) each 16-lane vector of it is one vpdpwssd,
// the lanes as (value, sign bits) pairs by (value, 0) pairs; the 8-lane rest keeps mul + add.
// Without VNNI (skylake-avx512) it stays mul + add.
// VNNI-LABEL: llvm.func @pair_dot
// VNNI:         llvm.mlir.constant(65535 : i32) : i32
// VNNI:         %[[MASK:.*]] = llvm.shufflevector %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xi32>
// VNNI-NEXT:    %[[W:.*]] = llvm.and %{{.*}}, %[[MASK]] : vector<16xi32>
// VNNI-NEXT:    %[[XP:.*]] = llvm.bitcast %{{.*}} : vector<16xi32> to vector<32xi16>
// VNNI-NEXT:    %[[WP:.*]] = llvm.bitcast %[[W]] : vector<16xi32> to vector<32xi16>
// VNNI:         llvm.call_intrinsic "llvm.x86.avx512.vpdpwssd.512"(%{{.*}}) : (vector<16xi32>, vector<16xi32>, vector<16xi32>) -> vector<16xi32>
// VNNI-NOT:     llvm.mul %{{.*}} : vector<16xi32>
// VNNI:         llvm.mul %{{.*}} : vector<8xi32>
// VNNI-NOT:     vpdpwssd
// VNNI:         llvm.return
// CHECK-LABEL: llvm.func @pair_dot
// CHECK-NOT:     vpdpwssd
// CHECK:         llvm.mul %{{.*}} : vector<16xi32>
// CHECK-NOT:     vpdpwssd
// CHECK:         llvm.return
func.func @pair_dot(%x: memref<24xi8>, %w: memref<24xi8>, %acc: memref<24xi32>, %out: memref<24xi32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c24 = arith.constant 24 : index
  loop.for %i = %c0 to %c24 step %c1 axis "i" kind vectorized {
    loop.block "dot" reads(%x, %w, %acc : memref<24xi8>, memref<24xi8>, memref<24xi32>) writes(%out : memref<24xi32>) spatial ["i"] {
      %xi = loop.load %x[%i] : memref<24xi8> -> i8
      %xe = arith.extui %xi : i8 to i32
      %zx = arith.constant 3 : i32
      %xs = arith.subi %xe, %zx : i32
      %wi = loop.load %w[%i] : memref<24xi8> -> i8
      %we = arith.extsi %wi : i8 to i32
      %p = arith.muli %xs, %we : i32
      %a = loop.load %acc[%i] : memref<24xi32> -> i32
      %s = arith.addi %a, %p : i32
      loop.store %s, %out[%i] : i32 -> memref<24xi32>
    }
  }
  func.return
}

// -----

// A prefetch: the element's address, by a getelementptr without inbounds (a prefetch may point
// past the buffer), then llvm.prefetch as a read (0) kept in every cache level (3) of data (1).
// CHECK-LABEL: llvm.func @prefetch
// CHECK:         %[[OFFSET:.*]] = llvm.add %{{.*}}, %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:    %[[ADDRESS:.*]] = llvm.getelementptr %{{.*}}[%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[RW:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[LOCALITY:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT:    %[[DATA:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.prefetch.p0"(%[[ADDRESS]], %[[RW]], %[[LOCALITY]], %[[DATA]]) : (!llvm.ptr, i32, i32, i32) -> ()
func.func @prefetch(%a: memref<16x64xf32>, %i: index, %k: index) {
  loop.prefetch %a[%i, %k] : memref<16x64xf32>
  func.return
}
