// RUN: dlc-opt %s | filecheck %s
// RUN: %roundtrip | filecheck %s

// dlc's llvm.fcmp and llvm.select (dialects/llvm_vector.py) take vectors, as MLIR's do.

// CHECK-LABEL: llvm.func @vector_compare_select
// CHECK-NEXT:    %[[M:.*]] = llvm.fcmp "olt" %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NEXT:    %[[R:.*]] = llvm.select %[[M]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    %[[S:.*]] = llvm.fcmp "uno" %{{.*}}, %{{.*}} : f64
// CHECK-NEXT:    %{{.*}} = llvm.select %[[S]], %{{.*}}, %{{.*}} : i1, vector<8xf32>
llvm.func @vector_compare_select(%a: vector<8xf32>, %b: vector<8xf32>, %x: f64) -> vector<8xf32> {
  %m = llvm.fcmp "olt" %a, %b : vector<8xf32>
  %r = llvm.select %m, %a, %b : vector<8xi1>, vector<8xf32>
  %s = llvm.fcmp "uno" %x, %x : f64
  %t = llvm.select %s, %r, %a : i1, vector<8xf32>
  llvm.return %t : vector<8xf32>
}
