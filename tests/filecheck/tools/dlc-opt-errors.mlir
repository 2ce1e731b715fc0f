// RUN: not dlc-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not dlc-opt %s -p 'canonicalize{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not dlc-opt %s -t no-such-target 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not dlc-opt %s -p graph-fuse,cannonicalize 2>&1 | filecheck %s --check-prefix=CLOSE
// RUN: not dlc-opt --help-pass graph-fuse 2>&1 | filecheck %s --check-prefix=HELP-PASS
// RUN: not dlc-opt --help-pass no-such-pass 2>&1 | filecheck %s --check-prefix=HELP-NONE
// RUN: not dlc-opt %s --elide-elementsattrs-if-larger=-1 2>&1 | filecheck %s --check-prefix=ELIDE
// RUN: not dlc-opt %S/Inputs/use-before-def.mlir -p graph-simplify 2>&1 | filecheck %s --check-prefix=CYCLE
// RUN: not dlc-opt %S/Inputs/use-before-def-nested.mlir 2>&1 | filecheck %s --check-prefix=LATER

// CYCLE: dlc-opt: error: 'graph.add' op operand #1 (%a) is used before it is defined
// CYCLE-NOT: Traceback
// LATER: dlc-opt: error: 'graph.add' op operand #1 (%b) is used before it is defined
// PASS: dlc-opt: error: invalid pass pipeline 'no-such-pass': Unrecognized passes: ['no-such-pass']
// PASS-NOT: Traceback
// OPTION: dlc-opt: error: invalid pass pipeline
// OPTION-SAME: no-such-option
// TARGET: invalid choice: 'no-such-target'
// CLOSE:      dlc-opt: error: invalid pass pipeline 'graph-fuse,cannonicalize': Unrecognized passes: ['graph-fuse', 'cannonicalize']
// CLOSE-NEXT:   'graph-fuse': did you mean 'graph-fuse-ops'
// CLOSE-NEXT:   'cannonicalize': did you mean 'canonicalize'
// HELP-PASS: dlc-opt: error: unknown pass 'graph-fuse'; did you mean 'graph-fuse-ops'
// HELP-PASS-SAME: dlc-opt --list-passes lists dlc's passes and pipelines
// HELP-PASS-NOT: Traceback
// HELP-NONE: dlc-opt: error: unknown pass 'no-such-pass' (dlc-opt --list-passes
// ELIDE: dlc-opt: error: argument --elide-elementsattrs-if-larger: expected a number of elements (0 or more), found '-1'

func.func @f(%a: i32) -> i32 {
  func.return %a : i32
}
