// RUN: dlc-opt %s --check-semantics -p graph-opt,convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,loop-dedup-functions,loop-plan-memory,loop-default-schedule 2>&1 | filecheck %s --check-prefix=LOOP
// RUN: dlc-opt %s --check-semantics -p cpu 2>&1 >/dev/null | filecheck %s --check-prefix=LLVM
// RUN: not dlc-opt %s --check-semantics -p graph-opt,convert-graph-to-tensor-expr,convert-tensor-expr-to-loop,loop-default-schedule,test-break-loop 2>&1 | filecheck %s --check-prefix=BROKEN
// RUN: dlc-opt %s --check-semantics --check-semantics-max-elements=10 -p graph-opt,convert-graph-to-tensor-expr,convert-tensor-expr-to-loop,test-break-loop 2>&1 >/dev/null | filecheck %s --check-prefix=BIG

// --check-semantics runs each level's interpreter: graph, tensor_expr, then loop (destination
// passing); it names a pass that breaks a loop nest and stops, with a note, at the llvm dialect.

// The cpu pipeline up to the default schedules passes the check: no diagnostic, the loops printed.
// LOOP-NOT:   dlc-opt:
// LOOP-LABEL: func.func @conv_relu
// LOOP:       loop.for
// LOOP-NOT:   dlc-opt:

// The whole cpu pipeline: checked up to the llvm dialect, then one note.
// LLVM:       dlc-opt: note: --check-semantics stopped after pass 'convert-loop-to-llvm': the module is at the llvm dialect, which no interpreter runs; passes checked before it: graph-batch-rows, graph-fold-qdq, graph-fold-constants, {{.*}}, loop-default-schedule, loop-fold-constant-nests, loop-fuse-nests, loop-collapse-parallel, math-polynomial-approximation, loop-linearize-runtime-strides, convert-memref-view-to-llvm
// LLVM-NOT:   dlc-opt:

// BROKEN:     dlc-opt: error: --check-semantics: pass 'test-break-loop' changed the results of @conv_relu: output #0:

// A function too big for the loop interpreter is skipped with a note (so the broken pass is not
// caught).
// BIG:        dlc-opt: note: --check-semantics skips @conv_relu at the loop level from pass 'convert-tensor-expr-to-loop' on: its arguments hold {{[0-9]+}} elements, more than --check-semantics-max-elements 10
// BIG-NOT:    dlc-opt:
func.func @conv_relu(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %w = graph.constant dense<[[[[0.3]], [[-0.7]]], [[[1.1]], [[0.2]]], [[[-0.4]], [[0.9]]]]>
    : tensor<3x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32>
  %k = graph.constant dense<[[[2.0]], [[3.0]], [[0.5]]]> : tensor<3x1x1xf32>
  %y = graph.add %c, %k : (tensor<1x3x5x5xf32>, tensor<3x1x1xf32>) -> tensor<1x3x5x5xf32>
  %r = graph.relu %y : tensor<1x3x5x5xf32>
  func.return %r : tensor<1x3x5x5xf32>
}
