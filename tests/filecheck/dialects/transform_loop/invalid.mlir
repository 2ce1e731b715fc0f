// RUN: dlc-opt %s --split-input-file --verify-diagnostics | filecheck %s

transform.named_sequence @split_results(%root: !transform.any_op) {
  // CHECK: 'transform.loop.split' op expected 3 results for 2 factor(s), found 2
  %a, %b = transform.loop.split %root [2, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.yield
}

// -----

transform.named_sequence @split_factor_not_a_param(%root: !transform.any_op) {
  // CHECK: 'transform.loop.split' op expected the factors operands to be !transform.param values, found !transform.any_op
  %a, %b = transform.loop.split %root [%root] : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.yield
}

// -----

transform.named_sequence @reorder_one_loop(%root: !transform.any_op) {
  // CHECK: 'transform.loop.reorder' op expected at least 2 loops, found 1
  transform.loop.reorder %root : !transform.any_op
  transform.yield
}

// -----

transform.named_sequence @tile_sizes(%root: !transform.any_op) {
  // CHECK: 'transform.loop.tile' op expected 2 tile sizes and 4 results, found 3 and 4
  %a, %b, %c, %d = transform.loop.tile %root, %root [2, 2, 2] : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}

// -----

transform.named_sequence @unroll_factor_not_a_param(%root: !transform.any_op) {
  // CHECK: 'transform.loop.unroll' op expected the factor operand to be a !transform.param, found !transform.any_op
  transform.loop.unroll %root factor %root : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

transform.named_sequence @pack_perm(%root: !transform.any_op) {
  // CHECK: 'transform.loop.pack' op expected outer_perm to be a permutation of 0..1, found [0, 0]
  %p = transform.loop.pack %root, 0, [0, 16] outer_perm [0, 0] : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

transform.named_sequence @apply_rules_knobs(%root: !transform.any_op) {
  // CHECK: 'transform.loop.apply_rules' op expected 5 knobs (threads, rows, accumulators, pack_rows, l2_kib), found 2
  transform.loop.apply_rules %root [2, 8] : !transform.any_op
  transform.yield
}

// -----

transform.named_sequence @split_peeled_factor(%root: !transform.any_op) {
  // CHECK: 'transform.loop.split_peeled' op expected a positive factor, found 0
  %a, %b, %c = transform.loop.split_peeled %root [0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}

// -----

transform.named_sequence @block_rows_results(%root: !transform.any_op) {
  // CHECK: 'transform.loop.block_rows' op expected one result per block size (3), found 2
  %a, %b = transform.loop.block_rows %root [4, 2, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.yield
}
