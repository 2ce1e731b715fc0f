// A schedule kept apart from the payload, for loop-interpret-transforms{library=...}.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @schedule(%root: !transform.any_op) {
    %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
    %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
    transform.loop.parallel %i : !transform.any_op
    transform.yield
  }
}
