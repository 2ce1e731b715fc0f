// RUN: not dlc-opt %s -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512" parallel_runtime=dlc parallel_schedule=dynamic}' 2>&1 | filecheck %s --check-prefix=SCHEDULE
// RUN: not dlc-opt %s -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512" parallel_runtime=dlc adaptive_threads=true}' 2>&1 | filecheck %s --check-prefix=ADAPTIVE
// RUN: not dlc-opt %s -p 'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512" parallel_runtime=tbb}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// convert-loop-to-llvm's parallel_runtime (the positive case, parallel_runtime=dlc, is in
// convert-loop-to-llvm.mlir): dlc's pool hands out chunks itself, so libgomp's schedules and
// the adaptive team do not apply to it; an unknown runtime is an error naming the choices.

// SCHEDULE: expected the default parallel_schedule (static) and no adaptive_threads with parallel_runtime=dlc (the pool hands out chunks itself), found parallel_schedule=dynamic adaptive_threads=False
// ADAPTIVE: found parallel_schedule=static adaptive_threads=True
// UNKNOWN: expected a parallel runtime among gomp, dlc, found 'tbb'
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
