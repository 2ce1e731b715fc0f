// RUN: not dlc-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not dlc-opt %s -p 'canonicalize{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not dlc-opt %s -t no-such-target 2>&1 | filecheck %s --check-prefix=TARGET

// PASS: dlc-opt: error: invalid pass pipeline 'no-such-pass': Unrecognized passes: ['no-such-pass']
// PASS-NOT: Traceback
// OPTION: dlc-opt: error: invalid pass pipeline
// OPTION-SAME: no-such-option
// TARGET: invalid choice: 'no-such-target'

func.func @f(%a: i32) -> i32 {
  func.return %a : i32
}
