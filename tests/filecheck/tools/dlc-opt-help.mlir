// RUN: dlc-opt --help | filecheck %s
// RUN: dlc-opt --version | filecheck %s --check-prefix=VERSION
// RUN: dlc-opt --list-passes | filecheck %s --check-prefix=LIST
// RUN: dlc-opt --help-pass graph-fuse-ops | filecheck %s --check-prefix=PASS
// RUN: dlc-opt --help-pass graph-opt | filecheck %s --check-prefix=PIPELINE

// `--help`: dlc's passes with their summaries, then the named pipelines and the targets, then
// the options (one timing flag), then xDSL's upstream passes by name.

// CHECK:      usage: dlc-opt [options] [input_file]
// CHECK:      dlc-opt from dlc {{[^ ]+}}, built on xdsl {{[^ ]+}}: the mlir-opt of dlc.
// CHECK:      dlc passes (-p
// CHECK:        graph-fold-constants {{ +}}Evaluate graph ops whose operands are all
// CHECK:        graph-fuse-ops {{ +}}Group graph ops into `graph.fused` ops by
// CHECK:        convert-loop-to-llvm {{ +}}Lower loop-level dlc IR to the llvm dialect
// CHECK:      named pipelines
// CHECK-NEXT:   graph-opt {{ +}}graph-level optimizations: fold QDQ pairs, constants
// CHECK:        cpu {{ +}}graph-opt with int8 convs and depthwise regions in NHWC,
// CHECK:      targets (-t NAME
// CHECK-NEXT:   llvm {{ +}}LLVM IR of an llvm-dialect module
// CHECK-NEXT:   ptx {{ +}}PTX of the module's kernels
// CHECK:        opencl {{ +}}the module's kernels as one OpenCL C program
// CHECK-NEXT:   and xDSL's: {{.*}}mlir
// CHECK:      options:
// CHECK-NOT:    canonicalize
// CHECK:        --list-passes
// CHECK:        --help-pass NAME
// CHECK:        --elide-elementsattrs-if-larger N
// CHECK-NOT:  {{^ +--time-passes}}
// CHECK:        --timing, --time-passes
// CHECK-NOT:  {{^ +--time-passes}}
// CHECK:      upstream xDSL passes, also usable in -p
// CHECK:      canonicalize,

// VERSION: dlc-opt from dlc {{[0-9]+\.[0-9]+.*}}, built on xdsl {{[0-9]+\.[0-9]+.*}}

// LIST:      dlc passes:
// LIST-NEXT:   graph-fold-constants
// LIST-NEXT:     Evaluate graph ops whose operands are all constants
// LIST:          options:
// LIST-NEXT:       size-limit: int = 134217728
// LIST:        graph-fuse-ops
// LIST-NEXT:     Group graph ops into `graph.fused` ops
// LIST:          options:
// LIST-NEXT:       max-depth: int = 256
// LIST-NEXT:       inline-constant-limit: int = 16777216
// LIST:        tensor-expr-inline
// LIST:            keep-tags: tuple[str, ...] = pad,winograd_input
// LIST:      named pipelines
// LIST-NEXT:   graph-opt
// LIST-NEXT:     graph-level optimizations
// LIST:      upstream xDSL passes
// LIST:       {{ }}canonicalize,

// PASS:      graph-fuse-ops
// PASS-EMPTY:
// PASS-NEXT:   Group graph ops into `graph.fused` ops by their fusion kinds (TVM's FuseOps).
// PASS:        *Input invariant*:
// PASS:        *Output IR*:
// PASS:        *Invariants*:
// PASS:      Options, their types and defaults (-p 'graph-fuse-ops{option=value ...}'):
// PASS-NEXT:   max-depth: int = 256
// PASS-NEXT:   inline-constant-limit: int = 16777216

// PIPELINE:      graph-opt
// PIPELINE:        graph-fold-constants,{{.*}},graph-fuse-ops
// PIPELINE:      No options.
