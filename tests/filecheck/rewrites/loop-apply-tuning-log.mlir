// RUN: %python %S/Inputs/write_tuning_log.py %s %S/Inputs/split-i1.mlir %t.jsonl
// RUN: dlc-opt %s -p 'loop-apply-tuning-log{log="%t.jsonl"}' | filecheck %s
// RUN: dlc-opt %s -p 'loop-apply-tuning-log{log="%t.jsonl" target="llvm -mcpu=test -threads=4"}' | filecheck %s
// RUN: dlc-opt %s -p 'loop-apply-tuning-log{log="%t.missing.jsonl"}' | filecheck %s --check-prefix=NONE
// RUN: not dlc-opt %s -p 'loop-apply-tuning-log' 2>&1 | filecheck %s --check-prefix=NOLOG

// A kernel with a record gets the record's schedule (its column loop split by 4) and is marked
// scheduled and tuned with its workload key; a kernel without one is left alone. A record of
// the same CPU at another thread count still applies; a missing log schedules nothing.

// CHECK-LABEL: func.func @tuned_matmul
// CHECK-SAME:    dlc.scheduled
// CHECK-SAME:    dlc.tuned = "{{[0-9a-f]+}}"
// CHECK:         loop.for %{{.*}} axis "i1.0"
// CHECK:         loop.for %{{.*}} axis "i1.1"
// CHECK:         loop.block "matmul"
// NONE-LABEL:  func.func @tuned_matmul
// NONE-NOT:      dlc.tuned
// NONE:          axis "i1"
// NOLOG: 'loop-apply-tuning-log' expected a log option, found none
func.func @tuned_matmul(%a: memref<4x4xf32>, %b: memref<4x8xf32>, %out: memref<4x8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c8 step %c1 axis "i1" {
      loop.for %r0 = %c0 to %c4 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %b : memref<4x4xf32>, memref<4x8xf32>) writes(%out : memref<4x8xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<4x4xf32> -> f32
          %1 = loop.load %b[%r0, %i1] : memref<4x8xf32> -> f32
          %2 = arith.mulf %0, %1 : f32
          %acc = loop.load %out[%i0, %i1] : memref<4x8xf32> -> f32
          %3 = arith.addf %acc, %2 : f32
          loop.store %3, %out[%i0, %i1] : f32 -> memref<4x8xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @negative_no_record
// CHECK-NOT:     dlc.tuned
// CHECK:         axis "i1"
// CHECK-NOT:     axis "i1.0"
func.func @negative_no_record(%a: memref<2x4xf32>, %b: memref<4x8xf32>, %out: memref<2x8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i0 = %c0 to %c2 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c8 step %c1 axis "i1" {
      loop.for %r0 = %c0 to %c4 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %b : memref<2x4xf32>, memref<4x8xf32>) writes(%out : memref<2x8xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<2x4xf32> -> f32
          %1 = loop.load %b[%r0, %i1] : memref<4x8xf32> -> f32
          %2 = arith.mulf %0, %1 : f32
          %acc = loop.load %out[%i0, %i1] : memref<2x8xf32> -> f32
          %3 = arith.addf %acc, %2 : f32
          loop.store %3, %out[%i0, %i1] : f32 -> memref<2x8xf32>
        }
      }
    }
  }
  func.return
}
