module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
    %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %j0, %j1 = transform.loop.split %j [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
