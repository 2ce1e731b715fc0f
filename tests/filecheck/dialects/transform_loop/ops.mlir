// RUN: dlc-opt %s | filecheck %s
// RUN: %roundtrip | filecheck %s

// Every transform.loop op in its custom form (the `Example:` of each op's docstring), round-
// tripped through the generic form. Nothing here runs: there is no pass.

// CHECK-LABEL: transform.named_sequence @all_ops
transform.named_sequence @all_ops(%root: !transform.any_op) {
  %p = transform.param.constant 8 : i64 -> !transform.param<i64>
  // CHECK: %{{.*}} = transform.param.constant 8 : i64 -> !transform.param<i64>
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  // CHECK: %[[B:.*]] = transform.loop.match_block "matmul" in %{{.*}} : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = transform.loop.get_loops %[[B]] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %k2 = transform.loop.match_loop %b axis "k" : (!transform.any_op) -> !transform.any_op
  // CHECK: transform.loop.match_loop %[[B]] axis "k" : (!transform.any_op) -> !transform.any_op
  %k0, %k1 = transform.loop.split %k [8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  // CHECK: transform.loop.split %{{.*}} [8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %s0, %s1, %s2 = transform.loop.split %k [2, %p] : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  // CHECK: transform.loop.split %{{.*}} [2, %{{.*}}] : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %tiles, %tile, %left = transform.loop.split_peeled %j [16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  // CHECK: transform.loop.split_peeled %{{.*}} [16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %blocks, %rest = transform.loop.block_rows %i [8, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  // CHECK: transform.loop.block_rows %{{.*}} [8, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %e:3 = transform.loop.block_rows %i [3, 2, 1] exact : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  // CHECK: transform.loop.block_rows %{{.*}} [3, 2, 1] exact : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.reorder %k, %j : !transform.any_op, !transform.any_op
  // CHECK: transform.loop.reorder %{{.*}}, %{{.*}} : !transform.any_op, !transform.any_op
  %i0, %j0, %i1, %j1 = transform.loop.tile %i, %j [4, 8] : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  // CHECK: transform.loop.tile %{{.*}}, %{{.*}} [4, 8] : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  %ij = transform.loop.fuse %i, %j : (!transform.any_op, !transform.any_op) -> !transform.any_op
  // CHECK: transform.loop.fuse %{{.*}}, %{{.*}} : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.loop.unroll %k : !transform.any_op
  // CHECK: transform.loop.unroll %{{.*}} : !transform.any_op
  transform.loop.unroll %k factor 2 : !transform.any_op
  // CHECK: transform.loop.unroll %{{.*}} factor 2 : !transform.any_op
  transform.loop.unroll %k factor %p : !transform.any_op, !transform.param<i64>
  // CHECK: transform.loop.unroll %{{.*}} factor %{{.*}} : !transform.any_op, !transform.param<i64>
  transform.loop.vectorize %j : !transform.any_op
  // CHECK: transform.loop.vectorize %{{.*}} : !transform.any_op
  transform.loop.parallel %i : !transform.any_op
  // CHECK: transform.loop.parallel %{{.*}} : !transform.any_op
  transform.loop.bind %i "blockIdx.x" : !transform.any_op
  // CHECK: transform.loop.bind %{{.*}} "blockIdx.x" : !transform.any_op
  %init = transform.loop.decompose_reduction %b, %i : (!transform.any_op, !transform.any_op) -> !transform.any_op
  // CHECK: transform.loop.decompose_reduction %[[B]], %{{.*}} : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.loop.compute_inline %b : !transform.any_op
  // CHECK: transform.loop.compute_inline %[[B]] : !transform.any_op
  %copy = transform.loop.cache_read %b, 0, "local" : (!transform.any_op) -> !transform.any_op
  // CHECK: transform.loop.cache_read %[[B]], 0, "local" : (!transform.any_op) -> !transform.any_op
  %wb = transform.loop.cache_write %b, "local" : (!transform.any_op) -> !transform.any_op
  // CHECK: transform.loop.cache_write %[[B]], "local" : (!transform.any_op) -> !transform.any_op
  %pk = transform.loop.pack %b, 1, [0, 16] outer_perm [1, 0] : (!transform.any_op) -> !transform.any_op
  // CHECK: transform.loop.pack %[[B]], 1, [0, 16] outer_perm [1, 0] : (!transform.any_op) -> !transform.any_op
  %pk2 = transform.loop.pack %b, 0, [4, 0] : (!transform.any_op) -> !transform.any_op
  // CHECK: transform.loop.pack %[[B]], 0, [4, 0] : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_at %b, %j : !transform.any_op, !transform.any_op
  // CHECK: transform.loop.compute_at %[[B]], %{{.*}} : !transform.any_op, !transform.any_op
  transform.loop.reverse_compute_at %b, %j : !transform.any_op, !transform.any_op
  // CHECK: transform.loop.reverse_compute_at %[[B]], %{{.*}} : !transform.any_op, !transform.any_op
  %rows = transform.param.constant 8 : i64 -> !transform.param<i64>
  %acc = transform.param.constant 24 : i64 -> !transform.param<i64>
  transform.loop.apply_rules %i [2, 8, 24, 0, 0] : !transform.any_op
  // CHECK: transform.loop.apply_rules %{{.*}} [2, 8, 24, 0, 0] : !transform.any_op
  transform.loop.apply_rules %i [0, %rows, %acc, 0, 512]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
  // CHECK: transform.loop.apply_rules %{{.*}} [0, %{{.*}}, %{{.*}}, 0, 512] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
  %blk = transform.loop.tensorize %j1, "x86.avx512.vpdpbusd" : (!transform.any_op) -> !transform.any_op
  // CHECK: transform.loop.tensorize %{{.*}}, "x86.avx512.vpdpbusd" : (!transform.any_op) -> !transform.any_op
  transform.yield
}
