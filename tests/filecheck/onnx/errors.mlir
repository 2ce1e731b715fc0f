// RUN: rm -f %t.out
// RUN: python3 %S/Inputs/make_model.py unsupported %t.unsupported.onnx
// RUN: not dlc-translate --import-onnx %t.unsupported.onnx -o %t.out 2>&1 | filecheck %s --check-prefix=OPS
// RUN: not test -e %t.out
// RUN: python3 %S/Inputs/make_model.py conv_block_dynamic %t.dynamic.onnx
// RUN: not dlc-translate --import-onnx %t.dynamic.onnx 2>&1 | filecheck %s --check-prefix=DYNAMIC
// RUN: python3 %S/Inputs/make_model.py old_opset %t.old.onnx
// RUN: not dlc-translate --import-onnx %t.old.onnx 2>&1 | filecheck %s --check-prefix=OPSET
// RUN: python3 %S/Inputs/make_model.py truncated %t.truncated.onnx
// RUN: not dlc-translate --import-onnx %t.truncated.onnx 2>&1 | filecheck %s --check-prefix=TRUNCATED
// RUN: python3 %S/Inputs/make_model.py conv_block %t.onnx
// RUN: not dlc-translate --import-onnx %t.onnx --input-shape x=1x3 2>&1 | filecheck %s --check-prefix=RANK

// Every unsupported op in one error, each with its node, domain and opset; no output file.
// OPS:      dlc-translate: error: unsupported ONNX ops in 2 nodes:
// OPS-NEXT:   Hardmax (domain 'ai.onnx', opset 17) in node 'hardmax1'
// OPS-NEXT:   Det (domain 'ai.onnx', opset 17) in node 'det1'
// OPS-NOT:  Traceback

// DYNAMIC: dlc-translate: error: graph input 'x' has dynamic dimension 0 ('N') in shape Nx3x8x8, first used by node 'conv1' (Conv); dlc needs static shapes: give one with --input-shape x=1x3x8x8
// DYNAMIC-NOT: Traceback

// OPSET: dlc-translate: error: model opset 6 (domain 'ai.onnx') is out of range: dlc imports opsets 7 to {{[0-9]+}}

// TRUNCATED: dlc-translate: error: cannot parse '{{.*}}truncated.onnx' as an ONNX model
// TRUNCATED-NOT: Traceback

// RANK: dlc-translate: error: input shape 1x3 for 'x' has rank 2, but the model declares rank 4
