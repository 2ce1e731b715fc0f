// RUN: dlc-opt %s -p convert-tensor-expr-to-loop --split-input-file --verify-diagnostics | filecheck %s
// RUN: dlc-opt %s -p 'convert-tensor-expr-to-loop{fuse-epilogue=false}' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOFUSE

// Elementwise: one nest writing straight into the output; the axes are named after the body's
// index arguments; the index constants sit at the top of the function.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME:    (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK-SAME:    attributes {dlc.num_outputs = 1 : i64} {
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         loop.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1]] axis "i" {
// CHECK-NEXT:      loop.for %[[J:.*]] = %[[C0]] to %[[C8]] step %[[C1]] axis "j" {
// CHECK-NEXT:        loop.block "add" reads(%[[A]], %[[B]] : memref<4x8xf32>, memref<4x8xf32>) writes(%[[OUT]] : memref<4x8xf32>) spatial ["i", "j"] {
// CHECK-NEXT:          %[[X:.*]] = loop.load %[[A]][%[[I]], %[[J]]] : memref<4x8xf32> -> f32
// CHECK-NEXT:          %[[Y:.*]] = loop.load %[[B]][%[[I]], %[[J]]] : memref<4x8xf32> -> f32
// CHECK-NEXT:          %[[Z:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:          loop.store %[[Z]], %[[OUT]][%[[I]], %[[J]]] : f32 -> memref<4x8xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return{{$}}
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = tensor_expr.compute "add" tag "injective" -> tensor<4x8xf32> {
  ^bb0(%i: index, %j: index):
    %x = tensor_expr.read %a[%i, %j] : tensor<4x8xf32>
    %y = tensor_expr.read %b[%i, %j] : tensor<4x8xf32>
    %z = arith.addf %x, %y : f32
    tensor_expr.yield %z : f32
  }
  func.return %s : tensor<4x8xf32>
}

// -----

// A reduction: the spatial loop outside, the init block at each point, then the reduction loop
// around the block that accumulates into the output. Unnamed index arguments give the generic
// axis names i0.. and r0...
// CHECK-LABEL: func.func @reduction_with_init
// CHECK-SAME:    (%[[X:.*]]: memref<4x16xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i0" {
// CHECK-NEXT:      loop.block "row_max_init" reads() writes(%[[OUT]] : memref<4xf32>) spatial ["i0"] {
// CHECK-NEXT:        %[[INIT:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:        loop.store %[[INIT]], %[[OUT]][%[[I]]] : f32 -> memref<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "r0" {
// CHECK-NEXT:        loop.block "row_max" reads(%[[X]] : memref<4x16xf32>) writes(%[[OUT]] : memref<4xf32>) spatial ["i0"] reduction ["r0"] {
// CHECK-NEXT:          %[[V:.*]] = loop.load %[[X]][%[[I]], %[[R]]] : memref<4x16xf32> -> f32
// CHECK-NEXT:          %[[ACC:.*]] = loop.load %[[OUT]][%[[I]]] : memref<4xf32> -> f32
// CHECK-NEXT:          %[[MAX:.*]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:          loop.store %[[MAX]], %[[OUT]][%[[I]]] : f32 -> memref<4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
func.func @reduction_with_init(%x: tensor<4x16xf32>) -> tensor<4xf32> {
  %m = tensor_expr.compute "row_max" reduce [16] max init 0xFF800000 : f32 -> tensor<4xf32> {
  ^bb0(%0: index, %1: index):
    %v = tensor_expr.read %x[%0, %1] : tensor<4x16xf32>
    tensor_expr.yield %v : f32
  }
  func.return %m : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[A:.*]]: memref<16x64xf32>, %[[B:.*]]: memref<64x32xf32>, %[[C:.*]]: memref<16x32xf32>)
// CHECK:         loop.for %[[I:.*]] = {{.*}} axis "i" {
// CHECK-NEXT:      loop.for %[[J:.*]] = {{.*}} axis "j" {
// CHECK-NEXT:        loop.block "matmul_init" reads() writes(%[[C]] : memref<16x32xf32>) spatial ["i", "j"] {
// CHECK-NEXT:          %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:          loop.store %[[ZERO]], %[[C]][%[[I]], %[[J]]]
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.for %[[K:.*]] = {{.*}} axis "k" {
// CHECK-NEXT:          loop.block "matmul" reads(%[[A]], %[[B]] : memref<16x64xf32>, memref<64x32xf32>) writes(%[[C]] : memref<16x32xf32>) spatial ["i", "j"] reduction ["k"] {
// CHECK-NEXT:            %[[AV:.*]] = loop.load %[[A]][%[[I]], %[[K]]]
// CHECK-NEXT:            %[[BV:.*]] = loop.load %[[B]][%[[K]], %[[J]]]
// CHECK-NEXT:            %[[P:.*]] = arith.mulf %[[AV]], %[[BV]] : f32
// CHECK-NEXT:            %[[ACC:.*]] = loop.load %[[C]][%[[I]], %[[J]]]
// CHECK-NEXT:            %[[SUM:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT:            loop.store %[[SUM]], %[[C]][%[[I]], %[[J]]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
func.func @matmul(%A: tensor<16x64xf32>, %B: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %c = tensor_expr.compute "matmul" tag "matmul" reduce [64] sum init 0.0 : f32 -> tensor<16x32xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %a = tensor_expr.read %A[%i, %k] : tensor<16x64xf32>
    %b = tensor_expr.read %B[%k, %j] : tensor<64x32xf32>
    %p = arith.mulf %a, %b : f32
    tensor_expr.yield %p : f32
  }
  func.return %c : tensor<16x32xf32>
}

// -----

// An integer reduction into a rank-0 result: no spatial loop, addi.
// CHECK-LABEL: func.func @integer_sum
// CHECK-SAME:    (%[[X:.*]]: memref<8xi32>, %[[OUT:.*]]: memref<i32>)
// CHECK:         loop.block "sum_all_init" reads() writes(%[[OUT]] : memref<i32>) {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      loop.store %[[ZERO]], %[[OUT]][] : i32 -> memref<i32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[R:.*]] = {{.*}} axis "r" {
// CHECK-NEXT:      loop.block "sum_all" reads(%[[X]] : memref<8xi32>) writes(%[[OUT]] : memref<i32>) reduction ["r"] {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[X]][%[[R]]] : memref<8xi32> -> i32
// CHECK-NEXT:        %[[ACC:.*]] = loop.load %[[OUT]][] : memref<i32> -> i32
// CHECK-NEXT:        %[[SUM:.*]] = arith.addi %[[ACC]], %[[V]] : i32
// CHECK-NEXT:        loop.store %[[SUM]], %[[OUT]][] : i32 -> memref<i32>
func.func @integer_sum(%x: tensor<8xi32>) -> tensor<i32> {
  %s = tensor_expr.compute "sum_all" reduce [8] sum init 0 : i32 -> tensor<i32> {
  ^bb0(%r: index):
    %v = tensor_expr.read %x[%r] : tensor<8xi32>
    tensor_expr.yield %v : i32
  }
  func.return %s : tensor<i32>
}

// -----

// The unsigned max combiner folds with arith.maxui; dlc.unsigned stays on the arguments and
// moves with the result onto its output argument.
// CHECK-LABEL: func.func @unsigned_max
// CHECK-SAME:    (%[[X:.*]]: memref<4x8xi8> {dlc.unsigned}, %[[OUT:.*]]: memref<4xi8> {dlc.unsigned})
// CHECK:         %[[ACC:.*]] = loop.load %[[OUT]][%{{.*}}] : memref<4xi8> -> i8
// CHECK-NEXT:    %[[MAX:.*]] = arith.maxui %[[ACC]], %{{.*}} : i8
// CHECK-NEXT:    loop.store %[[MAX]], %[[OUT]][%{{.*}}] : i8 -> memref<4xi8>
func.func @unsigned_max(%x: tensor<4x8xi8> {dlc.unsigned}) -> (tensor<4xi8> {dlc.unsigned}) {
  %m = tensor_expr.compute "max_u" reduce [8] maxui init 0 : i8 -> tensor<4xi8> {
  ^bb0(%i: index, %r: index):
    %v = tensor_expr.read %x[%i, %r] : tensor<4x8xi8>
    tensor_expr.yield %v : i8
  }
  func.return %m : tensor<4xi8>
}

// -----

// A tensor constant becomes a private constant global with the same dense attribute; an
// intermediate gets a global buffer, freed after its last use.
// CHECK:         "memref.global"() <{sym_name = "constant_to_global_cst0", type = memref<4xf32>, initial_value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>, sym_visibility = "private", constant}> : () -> ()
// CHECK-LABEL: func.func @constant_to_global
// CHECK-SAME:    (%[[X:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-NEXT:    %[[W:.*]] = memref.get_global @constant_to_global_cst0 : memref<4xf32>
// CHECK:         %[[T:.*]] = loop.alloc global : memref<4xf32>
// CHECK-NEXT:    loop.for
// CHECK-NEXT:      loop.block "scale" reads(%[[X]], %[[W]] : memref<4xf32>, memref<4xf32>) writes(%[[T]] : memref<4xf32>)
// CHECK:         loop.for
// CHECK-NEXT:      loop.block "neg" reads(%[[T]] : memref<4xf32>) writes(%[[OUT]] : memref<4xf32>)
// CHECK:         loop.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT:    func.return
func.func @constant_to_global(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %t = tensor_expr.compute "scale" -> tensor<4xf32> {
  ^bb0(%i: index):
    %a = tensor_expr.read %x[%i] : tensor<4xf32>
    %b = tensor_expr.read %w[%i] : tensor<4xf32>
    %c = arith.mulf %a, %b : f32
    tensor_expr.yield %c : f32
  }
  %r = tensor_expr.compute "neg" -> tensor<4xf32> {
  ^bb0(%i: index):
    %a = tensor_expr.read %t[%i] : tensor<4xf32>
    %b = arith.negf %a : f32
    tensor_expr.yield %b : f32
  }
  func.return %r : tensor<4xf32>
}

// -----

// The callee becomes destination-passing too; the caller allocates the first call's output and
// passes its own output to the call whose result it returns.
// CHECK:         func.func private @double(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64}
// CHECK-LABEL: func.func @call_between_functions
// CHECK-SAME:    (%[[X:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
// CHECK-NEXT:    %[[Y:.*]] = loop.alloc global : memref<4xf32>
// CHECK-NEXT:    func.call @double(%[[X]], %[[Y]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @double(%[[Y]], %[[OUT]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    loop.dealloc %[[Y]] : memref<4xf32>
// CHECK-NEXT:    func.return
func.func private @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = tensor_expr.compute "double" -> tensor<4xf32> {
  ^bb0(%i: index):
    %a = tensor_expr.read %x[%i] : tensor<4xf32>
    %b = arith.addf %a, %a : f32
    tensor_expr.yield %b : f32
  }
  func.return %d : tensor<4xf32>
}

func.func @call_between_functions(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @double(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = func.call @double(%y) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}

// -----

// A declaration gets the destination-passing signature too; an unused call result is allocated
// and freed right after the call.
// CHECK:         func.func private @ext(memref<4xf32>, f32, memref<2xf32>, memref<4xf32>) -> () attributes {dlc.num_outputs = 2 : i64}
// CHECK-LABEL: func.func @external_callee
// CHECK-SAME:    (%[[X:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<2xf32>)
// CHECK-NEXT:    %[[S:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[B:.*]] = loop.alloc global : memref<4xf32>
// CHECK-NEXT:    func.call @ext(%[[X]], %[[S]], %[[OUT]], %[[B]]) : (memref<4xf32>, f32, memref<2xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    loop.dealloc %[[B]] : memref<4xf32>
// CHECK-NEXT:    func.return
func.func private @ext(tensor<4xf32>, f32) -> (tensor<2xf32>, tensor<4xf32>)

func.func @external_callee(%x: tensor<4xf32>) -> tensor<2xf32> {
  %s = arith.constant 1.0 : f32
  %a, %b = func.call @ext(%x, %s) : (tensor<4xf32>, f32) -> (tensor<2xf32>, tensor<4xf32>)
  func.return %a : tensor<2xf32>
}

// -----

// Outputs follow the results' order; an argument returned as is, and a value returned a second
// time, are copied into their outputs by "copy_out<k>" blocks.
// CHECK-LABEL: func.func @outputs
// CHECK-SAME:    (%[[X:.*]]: memref<2xf32>, %[[OUT0:.*]]: memref<2xf32>, %[[OUT1:.*]]: memref<2xf32>, %[[OUT2:.*]]: memref<2xf32>)
// CHECK-SAME:    attributes {dlc.num_outputs = 3 : i64}
// CHECK:         loop.block "neg" reads(%[[X]] : memref<2xf32>) writes(%[[OUT1]] : memref<2xf32>)
// CHECK:         loop.block "copy_out0" reads(%[[X]] : memref<2xf32>) writes(%[[OUT0]] : memref<2xf32>) spatial ["i0"]
// CHECK:         loop.block "copy_out2" reads(%[[OUT1]] : memref<2xf32>) writes(%[[OUT2]] : memref<2xf32>) spatial ["i0"]
func.func @outputs(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %n = tensor_expr.compute "neg" -> tensor<2xf32> {
  ^bb0(%i: index):
    %a = tensor_expr.read %x[%i] : tensor<2xf32>
    %b = arith.negf %a : f32
    tensor_expr.yield %b : f32
  }
  func.return %x, %n, %n : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Scalar arguments stay scalars; function-level scalar ops are kept and used by the blocks.
// CHECK-LABEL: func.func @scalar_operands
// CHECK-SAME:    (%[[X:.*]]: memref<4xf32>, %[[ALPHA:.*]]: f32, %[[OUT:.*]]: memref<4xf32>)
// CHECK:         %[[SCALE:.*]] = arith.mulf %[[ALPHA]], %{{.*}} : f32
// CHECK:         loop.block "scale"
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[X]]
// CHECK-NEXT:      %{{.*}} = arith.mulf %[[V]], %[[SCALE]] : f32
func.func @scalar_operands(%x: tensor<4xf32>, %alpha: f32) -> tensor<4xf32> {
  %two = arith.constant 2.0 : f32
  %scale = arith.mulf %alpha, %two : f32
  %y = tensor_expr.compute "scale" -> tensor<4xf32> {
  ^bb0(%i: index):
    %a = tensor_expr.read %x[%i] : tensor<4xf32>
    %b = arith.mulf %a, %scale : f32
    tensor_expr.yield %b : f32
  }
  func.return %y : tensor<4xf32>
}

// -----

// conv2d + bias + relu. Fused (the default): ONE nest writing ONE buffer; the accumulator is a
// local of one element per output point, and the epilogue block reads it after the reduction
// loops. Unfused: the conv's own nest into a global buffer, then the relu's nest.
// CHECK-LABEL: func.func @epilogue_fusion
// CHECK-SAME:    (%[[X:.*]]: memref<1x2x6x6xf32>, %[[W:.*]]: memref<4x2x3x3xf32>, %[[BIAS:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<1x4x4x4xf32>)
// CHECK-NOT:     loop.alloc global
// CHECK:         loop.for %[[N:.*]] = {{.*}} axis "n" {
// CHECK-NEXT:      loop.for %[[C:.*]] = {{.*}} axis "c" {
// CHECK-NEXT:        loop.for %[[H:.*]] = {{.*}} axis "h" {
// CHECK-NEXT:          loop.for %[[WI:.*]] = {{.*}} axis "w" {
// CHECK-NEXT:            %[[ACC:.*]] = loop.alloc local : memref<1xf32>
// CHECK-NEXT:            loop.block "conv2d_init" reads() writes(%[[ACC]] : memref<1xf32>) spatial ["n", "c", "h", "w"] {
// CHECK:                 loop.for %{{.*}} axis "rc" {
// CHECK-NEXT:              loop.for %{{.*}} axis "rh" {
// CHECK-NEXT:                loop.for %{{.*}} axis "rw" {
// CHECK-NEXT:                  loop.block "conv2d" reads(%[[X]], %[[W]] : memref<1x2x6x6xf32>, memref<4x2x3x3xf32>) writes(%[[ACC]] : memref<1xf32>) spatial ["n", "c", "h", "w"] reduction ["rc", "rh", "rw"] {
// CHECK:                         %[[SUM:.*]] = arith.addf
// CHECK-NEXT:                    loop.store %[[SUM]], %[[ACC]][%{{.*}}] : f32 -> memref<1xf32>
// CHECK-NEXT:                  }
// CHECK-NEXT:                }
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:            loop.block "bias_relu" reads(%[[ACC]], %[[BIAS]] : memref<1xf32>, memref<4xf32>) writes(%[[OUT]] : memref<1x4x4x4xf32>) spatial ["n", "c", "h", "w"] {
// CHECK-NEXT:              %[[V:.*]] = loop.load %[[ACC]][%{{.*}}] : memref<1xf32> -> f32
// CHECK-NEXT:              %[[B:.*]] = loop.load %[[BIAS]][%[[C]]] : memref<4xf32> -> f32
// CHECK-NEXT:              %[[S:.*]] = arith.addf %[[V]], %[[B]] : f32
// CHECK:                   %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK-NEXT:              loop.store %[[R]], %[[OUT]][%[[N]], %[[C]], %[[H]], %[[WI]]] : f32 -> memref<1x4x4x4xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:            loop.dealloc %[[ACC]] : memref<1xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// NOFUSE-LABEL: func.func @epilogue_fusion
// NOFUSE-SAME:    %[[OUT:[^:]*]]: memref<1x4x4x4xf32>)
// NOFUSE:         %[[CONV:.*]] = loop.alloc global : memref<1x4x4x4xf32>
// NOFUSE:         loop.block "conv2d_init" reads() writes(%[[CONV]] : memref<1x4x4x4xf32>)
// NOFUSE:         loop.block "conv2d" reads({{.*}}) writes(%[[CONV]] : memref<1x4x4x4xf32>)
// NOFUSE:         loop.for %{{.*}} axis "n" {
// NOFUSE:           loop.block "bias_relu" reads(%[[CONV]], %{{.*}} : memref<1x4x4x4xf32>, memref<4xf32>) writes(%[[OUT]] : memref<1x4x4x4xf32>)
// NOFUSE:         loop.dealloc %[[CONV]] : memref<1x4x4x4xf32>
// NOFUSE-NEXT:    func.return
func.func @epilogue_fusion(%X: tensor<1x2x6x6xf32>, %W: tensor<4x2x3x3xf32>, %bias: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %conv = tensor_expr.compute "conv2d" tag "conv2d_nchw" reduce [2, 3, 3] sum init 0.0 : f32 -> tensor<1x4x4x4xf32> {
  ^bb0(%n: index, %c: index, %h: index, %w: index, %rc: index, %rh: index, %rw: index):
    %ih = arith.addi %h, %rh : index
    %iw = arith.addi %w, %rw : index
    %x = tensor_expr.read %X[%n, %rc, %ih, %iw] : tensor<1x2x6x6xf32>
    %k = tensor_expr.read %W[%c, %rc, %rh, %rw] : tensor<4x2x3x3xf32>
    %p = arith.mulf %x, %k : f32
    tensor_expr.yield %p : f32
  }
  %relu = tensor_expr.compute "bias_relu" tag "injective" -> tensor<1x4x4x4xf32> {
  ^bb0(%n: index, %c: index, %h: index, %w: index):
    %v = tensor_expr.read %conv[%n, %c, %h, %w] : tensor<1x4x4x4xf32>
    %b = tensor_expr.read %bias[%c] : tensor<4xf32>
    %s = arith.addf %v, %b : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %zero : f32
    tensor_expr.yield %r : f32
  }
  func.return %relu : tensor<1x4x4x4xf32>
}

// -----

// A chain of epilogues (bias add, then relu, not inlined) fuses too: the middle value lives in a
// local as well, and only the output is written.
// CHECK-LABEL: func.func @epilogue_chain
// CHECK-SAME:    %[[OUT:[^:]*]]: memref<4x4xf32>)
// CHECK-NOT:     loop.alloc global
// CHECK:         %[[ACC:.*]] = loop.alloc local : memref<1xf32>
// CHECK-NEXT:    %[[TMP:.*]] = loop.alloc local : memref<1xf32>
// CHECK:         loop.block "matmul" reads({{.*}}) writes(%[[ACC]] : memref<1xf32>)
// CHECK:         loop.block "bias_add" reads(%[[ACC]], %{{.*}} : memref<1xf32>, memref<4xf32>) writes(%[[TMP]] : memref<1xf32>)
// CHECK:         loop.block "relu" reads(%[[TMP]] : memref<1xf32>) writes(%[[OUT]] : memref<4x4xf32>)
// CHECK:         loop.dealloc %[[ACC]]
// CHECK-NEXT:    loop.dealloc %[[TMP]]

// NOFUSE-LABEL: func.func @epilogue_chain
// NOFUSE-COUNT-2: loop.alloc global
func.func @epilogue_chain(%A: tensor<4x8xf32>, %B: tensor<8x4xf32>, %bias: tensor<4xf32>) -> tensor<4x4xf32> {
  %mm = tensor_expr.compute "matmul" reduce [8] sum init 0.0 : f32 -> tensor<4x4xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %a = tensor_expr.read %A[%i, %k] : tensor<4x8xf32>
    %b = tensor_expr.read %B[%k, %j] : tensor<8x4xf32>
    %p = arith.mulf %a, %b : f32
    tensor_expr.yield %p : f32
  }
  %add = tensor_expr.compute "bias_add" -> tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor_expr.read %mm[%i, %j] : tensor<4x4xf32>
    %b = tensor_expr.read %bias[%j] : tensor<4xf32>
    %s = arith.addf %v, %b : f32
    tensor_expr.yield %s : f32
  }
  %relu = tensor_expr.compute "relu" -> tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor_expr.read %add[%i, %j] : tensor<4x4xf32>
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    tensor_expr.yield %r : f32
  }
  func.return %relu : tensor<4x4xf32>
}

// -----

// An epilogue over runtime sizes that adds another input (a residual) fuses when its sizes,
// taken from that input, are the reduction's by the function's `eq` size checks (checked
// before it runs); with no such check the sizes are not known equal and it stays a nest of
// its own, after a global buffer.
// CHECK-LABEL: func.func @runtime_residual
// CHECK-NOT:     loop.alloc global
// CHECK:         %[[ACC:.*]] = loop.alloc local : memref<1xf32>
// CHECK:         loop.block "rowsum" reads({{.*}}) writes(%[[ACC]] : memref<1xf32>)
// CHECK:         loop.block "residual" reads(%r, %[[ACC]] : memref<?x4xf32>, memref<1xf32>) writes(%out : memref<?x4xf32>)
// CHECK-LABEL: func.func @unchecked_residual
// CHECK:         loop.alloc global
// CHECK:         loop.block "residual" reads(%r, %{{.*}} : memref<?x4xf32>, memref<?x4xf32>)
func.func @runtime_residual(%x: tensor<?x4x8xf32>, %r: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1] -> (s0, s1)>, kind = "eq", what = "'graph.add' op needs equal sizes along dim 0 of its operands (#1 and #0)"}]} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %m = tensor.dim %r, %c0 : tensor<?x4xf32>
  %sum = tensor_expr.compute "rowsum" sizes(%n) reduce [8] sum init 0.0 : f32 -> tensor<?x4xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %v = tensor_expr.read %x[%i, %j, %k] : tensor<?x4x8xf32>
    tensor_expr.yield %v : f32
  }
  %add = tensor_expr.compute "residual" sizes(%m) -> tensor<?x4xf32> {
  ^bb0(%i: index, %j: index):
    %a = tensor_expr.read %r[%i, %j] : tensor<?x4xf32>
    %b = tensor_expr.read %sum[%i, %j] : tensor<?x4xf32>
    %s = arith.addf %a, %b : f32
    tensor_expr.yield %s : f32
  }
  func.return %add : tensor<?x4xf32>
}
func.func @unchecked_residual(%x: tensor<?x4x8xf32>, %r: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %m = tensor.dim %r, %c0 : tensor<?x4xf32>
  %sum = tensor_expr.compute "rowsum" sizes(%n) reduce [8] sum init 0.0 : f32 -> tensor<?x4xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %v = tensor_expr.read %x[%i, %j, %k] : tensor<?x4x8xf32>
    tensor_expr.yield %v : f32
  }
  %add = tensor_expr.compute "residual" sizes(%m) -> tensor<?x4xf32> {
  ^bb0(%i: index, %j: index):
    %a = tensor_expr.read %r[%i, %j] : tensor<?x4xf32>
    %b = tensor_expr.read %sum[%i, %j] : tensor<?x4xf32>
    %s = arith.addf %a, %b : f32
    tensor_expr.yield %s : f32
  }
  func.return %add : tensor<?x4xf32>
}

// -----

// A reduction that is also returned keeps its buffer (here its output): the epilogue still
// shares its nest and reads it at the point.
// CHECK-LABEL: func.func @epilogue_reduction_returned
// CHECK-SAME:    (%{{.*}}: memref<4x8xf32>, %[[MEAN:.*]]: memref<4xf32>, %[[SUM:.*]]: memref<4xf32>)
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for %[[I:.*]] = {{.*}} axis "i" {
// CHECK-NEXT:      loop.block "sum_init" reads() writes(%[[SUM]] : memref<4xf32>)
// CHECK:           loop.for %{{.*}} axis "k" {
// CHECK-NEXT:        loop.block "sum" reads(%{{.*}} : memref<4x8xf32>) writes(%[[SUM]] : memref<4xf32>)
// CHECK:           loop.block "mean" reads(%[[SUM]] : memref<4xf32>) writes(%[[MEAN]] : memref<4xf32>) spatial ["i"] {
// CHECK-NEXT:        %{{.*}} = loop.load %[[SUM]][%[[I]]] : memref<4xf32> -> f32
func.func @epilogue_reduction_returned(%A: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = tensor_expr.compute "sum" reduce [8] sum init 0.0 : f32 -> tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %a = tensor_expr.read %A[%i, %k] : tensor<4x8xf32>
    tensor_expr.yield %a : f32
  }
  %m = tensor_expr.compute "mean" -> tensor<4xf32> {
  ^bb0(%i: index):
    %v = tensor_expr.read %s[%i] : tensor<4xf32>
    %n = arith.constant 8.0 : f32
    %r = arith.divf %v, %n : f32
    tensor_expr.yield %r : f32
  }
  func.return %m, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

// An epilogue that reads the reduction at another index (a transpose) is not fused.
// CHECK-LABEL: func.func @epilogue_not_at_own_index
// CHECK:         %[[S:.*]] = loop.alloc global : memref<4x4xf32>
// CHECK:         loop.block "rowsum" reads(%{{.*}}) writes(%[[S]] : memref<4x4xf32>)
// CHECK:         loop.for %[[I:.*]] = {{.*}} axis "i" {
// CHECK-NEXT:      loop.for %[[J:.*]] = {{.*}} axis "j" {
// CHECK-NEXT:        loop.block "transpose" reads(%[[S]] : memref<4x4xf32>)
// CHECK-NEXT:          loop.load %[[S]][%[[J]], %[[I]]]
// CHECK:         loop.dealloc %[[S]]
func.func @epilogue_not_at_own_index(%A: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = tensor_expr.compute "rowsum" reduce [4] sum init 0.0 : f32 -> tensor<4x4xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %a = tensor_expr.read %A[%i, %k] : tensor<4x4xf32>
    tensor_expr.yield %a : f32
  }
  %t = tensor_expr.compute "transpose" -> tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor_expr.read %s[%j, %i] : tensor<4x4xf32>
    tensor_expr.yield %v : f32
  }
  func.return %t : tensor<4x4xf32>
}

// -----

// A runtime number of rows: memrefs with a dynamic leading dim, their sizes passed after the
// outputs (one index argument per dynamic dim of the memref arguments, counted by
// dlc.dim_args), tensor.dim reading them, the loops over the rows bounded by them, and an
// intermediate allocated with its size.
// CHECK-LABEL: func.func @runtime_rows
// CHECK-SAME:    (%[[X:.*]]: memref<?x8xf32>, %[[B:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<?x8xf32> {dlc.dim_sizes = affine_map<()[s0] -> (s0)>}, %[[XN:.*]]: index, %[[ON:.*]]: index)
// CHECK-SAME:    attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
// CHECK:         %[[S:.*]] = loop.alloc global sizes(%[[XN]]) : memref<?x8xf32>
// CHECK-NEXT:    loop.for %{{.*}} = %{{.*}} to %[[XN]] step %{{.*}} axis "i" {
// CHECK:           loop.block "add" reads(%[[X]], %[[B]] : memref<?x8xf32>, memref<8xf32>) writes(%[[S]] : memref<?x8xf32>)
// CHECK:         loop.for %{{.*}} = %{{.*}} to %[[XN]] step %{{.*}} axis "i" {
// CHECK:           loop.block "sub" reads(%[[S]] : memref<?x8xf32>) writes(%[[OUT]] : memref<?x8xf32>)
// CHECK:         loop.dealloc %[[S]] : memref<?x8xf32>
func.func @runtime_rows(%x: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %s = tensor_expr.compute "add" tag "injective" sizes(%n) -> tensor<?x8xf32> {
  ^bb0(%i: index, %j: index):
    %u = tensor_expr.read %x[%i, %j] : tensor<?x8xf32>
    %v = tensor_expr.read %b[%j] : tensor<8xf32>
    %w = arith.addf %u, %v : f32
    tensor_expr.yield %w : f32
  }
  %r = tensor_expr.compute "sub" tag "injective" sizes(%n) -> tensor<?x8xf32> {
  ^bb0(%i: index, %j: index):
    %u = tensor_expr.read %s[%i, %j] : tensor<?x8xf32>
    %v = tensor_expr.read %s[%i, %c0] : tensor<?x8xf32>
    %w = arith.subf %u, %v : f32
    tensor_expr.yield %w : f32
  }
  func.return %r : tensor<?x8xf32>
}

// -----

// A call passes the sizes of its operands' dynamic dims after them, in the callee's order.
// CHECK-LABEL: func.func @calls_runtime_rows
// CHECK-SAME:    (%[[X:.*]]: memref<?x8xf32>, %[[OUT:.*]]: memref<?x8xf32> {dlc.dim_sizes = affine_map<()[s0] -> (s0)>}, %[[XN:.*]]: index, %[[ON:.*]]: index)
// CHECK:         func.call @negate(%[[X]], %[[OUT]], %[[XN]], %[[ON]]) : (memref<?x8xf32>, memref<?x8xf32>, index, index) -> ()
func.func @calls_runtime_rows(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = func.call @negate(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}
func.func private @negate(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %y = tensor_expr.compute "neg" tag "injective" sizes(%n) -> tensor<?x8xf32> {
  ^bb0(%i: index, %j: index):
    %u = tensor_expr.read %x[%i, %j] : tensor<?x8xf32>
    %w = arith.negf %u : f32
    tensor_expr.yield %w : f32
  }
  func.return %y : tensor<?x8xf32>
}

// -----

// A call's result of runtime rows that is not returned has the rows of its first operand of
// runtime rows (the functions outlined from batch-polymorphic ops keep their operands' rows).
// CHECK-LABEL: func.func @chained_runtime_rows
// CHECK-SAME:    (%[[X:.*]]: memref<?x8xf32>, %[[OUT:.*]]: memref<?x8xf32> {dlc.dim_sizes = affine_map<()[s0] -> (s0)>}, %[[XN:.*]]: index, %[[ON:.*]]: index)
// CHECK:         %[[Y:.*]] = loop.alloc global sizes(%[[XN]]) : memref<?x8xf32>
// CHECK-NEXT:    func.call @negate(%[[X]], %[[Y]], %[[XN]], %[[XN]])
// CHECK-NEXT:    func.call @negate(%[[Y]], %[[OUT]], %[[XN]], %[[ON]])
func.func @chained_runtime_rows(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = func.call @negate(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %z = func.call @negate(%y) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %z : tensor<?x8xf32>
}
func.func private @negate(%x: tensor<?x8xf32>) -> tensor<?x8xf32>

// -----

// CHECK: 'func.call' op expected an operand dynamic in each dynamic dim of its result tensor<?x8xf32> (whose rows it has), a callee whose body sizes it, or the result to be returned
func.func @negative_rows_from_nowhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @spread(%x) : (tensor<4xf32>) -> tensor<?x8xf32>
  func.return %x : tensor<4xf32>
}
func.func private @spread(%x: tensor<4xf32>) -> tensor<?x8xf32>

// -----

// Runtime sizes in any dim (an image of runtime height and width): every dynamic dim of the
// memrefs gets a size argument, sizes computed from them (a valid 3x3 window's output) bound
// the loops; the output's sizes (the caller's arguments) have their shape function in terms of
// the inputs' sizes (dlc.dim_sizes), for the runtime to allocate and check the output.
// CHECK-LABEL: func.func @runtime_plane
// CHECK-SAME:    (%[[X:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?x?xf32> {dlc.dim_sizes = affine_map<()[s0, s1] -> ((s0 + -2), (s1 + -2))>}, %[[XH:.*]]: index, %[[XW:.*]]: index, %{{.*}}: index, %{{.*}}: index)
// CHECK-SAME:    attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 4 : i64} {
// CHECK:         %[[OH:.*]] = arith.subi %[[XH]], %{{.*}} : index
// CHECK-NEXT:    %[[OW:.*]] = arith.subi %[[XW]], %{{.*}} : index
// CHECK-NEXT:    loop.for %[[I:.*]] = %{{.*}} to %[[OH]] step %{{.*}} axis "i" {
// CHECK-NEXT:      loop.for %[[J:.*]] = %{{.*}} to %[[OW]] step %{{.*}} axis "j" {
// CHECK:             loop.store %{{.*}}, %[[OUT]][%[[I]], %[[J]]] : f32 -> memref<?x?xf32>
// CHECK:               loop.load %[[X]][%{{.*}}, %{{.*}}] : memref<?x?xf32> -> f32
func.func @runtime_plane(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = tensor.dim %x, %c0 : tensor<?x?xf32>
  %w = tensor.dim %x, %c1 : tensor<?x?xf32>
  %oh = arith.subi %h, %c2 : index
  %ow = arith.subi %w, %c2 : index
  %y = tensor_expr.compute "box" tag "pool" sizes(%oh, %ow) reduce [3, 3] sum init 0.0 : f32 -> tensor<?x?xf32> {
  ^bb0(%i: index, %j: index, %r: index, %s: index):
    %a = arith.addi %i, %r : index
    %b = arith.addi %j, %s : index
    %v = tensor_expr.read %x[%a, %b] : tensor<?x?xf32>
    tensor_expr.yield %v : f32
  }
  func.return %y : tensor<?x?xf32>
}

// -----

// A runtime plane flattened (a detector head's x.view(n, c, -1)): the output's size is the
// product of two input sizes, a semi-affine shape function (MLIR's `s0 * s1`).
// CHECK-LABEL: func.func @runtime_plane_flattened
// CHECK-SAME:    (%[[X:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?xf32> {dlc.dim_sizes = affine_map<()[s0, s1] -> ((s0 * s1))>}, %[[XH:.*]]: index, %[[XW:.*]]: index, %{{.*}}: index)
// CHECK:         %[[HW:.*]] = arith.muli %[[XH]], %[[XW]] : index
// CHECK-NEXT:    loop.for %{{.*}} = %{{.*}} to %[[HW]] step %{{.*}} axis "i" {
func.func @runtime_plane_flattened(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = tensor.dim %x, %c0 : tensor<?x?xf32>
  %w = tensor.dim %x, %c1 : tensor<?x?xf32>
  %hw = arith.muli %h, %w : index
  %y = tensor_expr.compute "flatten" tag "injective" sizes(%hw) -> tensor<?xf32> {
  ^bb0(%i: index):
    %r = arith.divui %i, %w : index
    %c = arith.remui %i, %w : index
    %v = tensor_expr.read %x[%r, %c] : tensor<?x?xf32>
    tensor_expr.yield %v : f32
  }
  func.return %y : tensor<?xf32>
}

// -----

// CHECK: 'tensor.dim' op expected the size of a dim of a function argument at a constant index in @negative_dim_of_compute
func.func @negative_dim_of_compute(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %y = tensor_expr.compute "neg" tag "injective" sizes(%n) -> tensor<?x8xf32> {
  ^bb0(%i: index, %j: index):
    %u = tensor_expr.read %x[%i, %j] : tensor<?x8xf32>
    tensor_expr.yield %u : f32
  }
  %m = tensor.dim %y, %c0 : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// -----

// CHECK: 'func.func' op expected ranked tensors or scalars as the arguments of @negative_unranked, found tensor<*xf32>
func.func @negative_unranked(%x: tensor<*xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<0.0> : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// -----

// CHECK: 'tensor.empty' op expected one of tensor_expr.compute, arith.*, math.*, func.call, func.return in the body of @negative_unknown_op (convert-tensor-expr-to-loop), found 'tensor.empty'
func.func @negative_unknown_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tensor.empty() : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// CHECK: 'arith.addf' op expected scalar operands and results in the body of @negative_tensor_arith, found tensor<4xf32>
func.func @negative_tensor_arith(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// CHECK: 'tensor.extract' op expected one of tensor_expr.read, tensor_expr.yield, arith.*, math.* in the body of 'tensor_expr.compute' "gather" in @negative_op_in_compute_body (convert-tensor-expr-to-loop), found 'tensor.extract'
func.func @negative_op_in_compute_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tensor_expr.compute "gather" -> tensor<4xf32> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<4xf32>
    tensor_expr.yield %v : f32
  }
  func.return %y : tensor<4xf32>
}

// -----

// scf.if on tensors: the result gets a buffer (here the output), each branch copies its yielded
// value into it; the call's result buffer is allocated around the whole if.

// CHECK-LABEL: func.func @if_bufferized(%c: memref<i1>, %x: memref<2xf32>, %out: memref<2xf32>)
// CHECK:         %[[COND:.*]] = loop.load %c[] : memref<i1> -> i1
// CHECK-NEXT:    %[[T:.*]] = loop.alloc global : memref<2xf32>
// CHECK-NEXT:    scf.if %[[COND]] {
// CHECK-NEXT:      func.call @then(%x, %[[T]]) : (memref<2xf32>, memref<2xf32>) -> ()
// CHECK:             loop.block "copy_out0" reads(%[[T]] : memref<2xf32>) writes(%out : memref<2xf32>)
// CHECK:         } else {
// CHECK:             loop.block "copy_out0" reads(%x : memref<2xf32>) writes(%out : memref<2xf32>)
// CHECK:         loop.dealloc %[[T]] : memref<2xf32>
// CHECK-NEXT:    func.return

func.func @if_bufferized(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %cond = tensor.extract %c[] : tensor<i1>
  %r = scf.if %cond -> (tensor<2xf32>) {
    %t = func.call @then(%x) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %t : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
func.func private @then(tensor<2xf32>) -> tensor<2xf32>

// -----

// scf.while: the tensors it carries live in their result buffers (the outputs), initialised
// before the loop; only the scalars stay loop-carried. The body stores the iteration into a
// buffer, calls the body function, reloads the condition, writes the scan element into row %row
// in place and copies the new carried value into its state.

// CHECK-LABEL: func.func @while_bufferized(%m: memref<i64>, %x: memref<2xf32>, %out: memref<2xf32>, %out_1: memref<3x2xf32>)
// CHECK:         %[[TRIP:.*]] = loop.load %m[] : memref<i64> -> i64
// CHECK:         %[[IT:.*]] = loop.alloc global : memref<i64>
// CHECK-NEXT:    %[[NEXT:.*]] = loop.alloc global : memref<i1>
// CHECK-NEXT:    %[[V:.*]] = loop.alloc global : memref<2xf32>
// CHECK-NEXT:    %[[ELEM:.*]] = loop.alloc global : memref<2xf32>
// CHECK:           loop.block "loop_init" reads(%x : memref<2xf32>) writes(%out : memref<2xf32>)
// CHECK:           loop.block "loop_init" reads(%scan_init : memref<3x2xf32>) writes(%out_1 : memref<3x2xf32>)
// CHECK:         scf.while (%i = %first, %g = %go) : (i64, i1) -> (i64, i1) {
// CHECK-NEXT:      %more = arith.cmpi slt, %i, %[[TRIP]] : i64
// CHECK-NEXT:      %ok = arith.andi %more, %g : i1
// CHECK-NEXT:      scf.condition(%ok) %i, %g : i64, i1
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%iteration: i64, %cond: i1):
// CHECK-NEXT:      loop.store %iteration, %[[IT]][] : i64 -> memref<i64>
// CHECK-NEXT:      func.call @body(%[[IT]], %out, %[[NEXT]], %[[V]], %[[ELEM]])
// CHECK-NEXT:      %next = loop.load %[[NEXT]][] : memref<i1> -> i1
// CHECK:           %row = arith.index_cast %iteration : i64 to index
// CHECK:             loop.block "scan_insert" reads(%[[ELEM]] : memref<2xf32>) writes(%out_1 : memref<3x2xf32>)
// CHECK-NEXT:          %[[E:.*]] = loop.load %[[ELEM]][%[[J:.*]]] : memref<2xf32> -> f32
// CHECK-NEXT:          loop.store %[[E]], %out_1[%row, %[[J]]] : f32 -> memref<3x2xf32>
// CHECK:             loop.block "loop_carry" reads(%[[V]] : memref<2xf32>) writes(%out : memref<2xf32>)
// CHECK:           scf.yield %{{.*}}, %next : i64, i1
// CHECK:         loop.dealloc %[[IT]] : memref<i64>

func.func @while_bufferized(%m: tensor<i64>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %trip = tensor.extract %m[] : tensor<i64>
  %go = arith.constant true
  %scan_init = arith.constant dense<0.000000e+00> : tensor<3x2xf32>
  %first = arith.constant 0 : i64
  %n, %done, %v, %s = scf.while (%i = %first, %g = %go, %state0 = %x, %state1 = %scan_init) : (i64, i1, tensor<2xf32>, tensor<3x2xf32>) -> (i64, i1, tensor<2xf32>, tensor<3x2xf32>) {
    %more = arith.cmpi slt, %i, %trip : i64
    %ok = arith.andi %more, %g : i1
    scf.condition(%ok) %i, %g, %state0, %state1 : i64, i1, tensor<2xf32>, tensor<3x2xf32>
  } do {
  ^bb0(%iteration: i64, %cond: i1, %state0_1: tensor<2xf32>, %state1_1: tensor<3x2xf32>):
    %it = tensor.from_elements %iteration : tensor<i64>
    %b:3 = func.call @body(%it, %state0_1) : (tensor<i64>, tensor<2xf32>) -> (tensor<i1>, tensor<2xf32>, tensor<2xf32>)
    %next = tensor.extract %b#0[] : tensor<i1>
    %one = arith.constant 1 : i64
    %i1 = arith.addi %iteration, %one : i64
    %row = arith.index_cast %iteration : i64 to index
    %stacked = tensor.insert_slice %b#2 into %state1_1[%row, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
    scf.yield %i1, %next, %b#1, %stacked : i64, i1, tensor<2xf32>, tensor<3x2xf32>
  }
  func.return %v, %s : tensor<2xf32>, tensor<3x2xf32>
}
func.func private @body(tensor<i64>, tensor<2xf32>) -> (tensor<i1>, tensor<2xf32>, tensor<2xf32>)

// -----

// Carried tensors that trade places go through temporaries (no state is overwritten before it is
// read).

// CHECK-LABEL: func.func @while_swapping_states
// CHECK:         %[[T0:.*]] = loop.alloc global : memref<2xf32>
// CHECK-NEXT:    %[[T1:.*]] = loop.alloc global : memref<2xf32>
// CHECK-NEXT:    scf.while
// CHECK:           loop.block "loop_swap" reads(%out_1 : memref<2xf32>) writes(%[[T0]] : memref<2xf32>)
// CHECK:           loop.block "loop_swap" reads(%out : memref<2xf32>) writes(%[[T1]] : memref<2xf32>)
// CHECK:           loop.block "loop_carry" reads(%[[T0]] : memref<2xf32>) writes(%out : memref<2xf32>)
// CHECK:           loop.block "loop_carry" reads(%[[T1]] : memref<2xf32>) writes(%out_1 : memref<2xf32>)
// CHECK:         loop.dealloc %[[T0]] : memref<2xf32>
// CHECK-NEXT:    loop.dealloc %[[T1]] : memref<2xf32>

func.func @while_swapping_states(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %go = arith.constant true
  %g, %a, %b = scf.while (%c = %go, %p = %x, %q = %y) : (i1, tensor<2xf32>, tensor<2xf32>) -> (i1, tensor<2xf32>, tensor<2xf32>) {
    scf.condition(%c) %c, %p, %q : i1, tensor<2xf32>, tensor<2xf32>
  } do {
  ^bb0(%c2: i1, %p2: tensor<2xf32>, %q2: tensor<2xf32>):
    %no = arith.constant false
    scf.yield %no, %q2, %p2 : i1, tensor<2xf32>, tensor<2xf32>
  }
  func.return %a, %b : tensor<2xf32>, tensor<2xf32>
}

// -----

// CHECK: 'tensor.empty' op expected one of func.call, tensor.extract, tensor.from_elements, tensor.insert_slice, scalar arith ops in the regions of 'scf.if' in @negative_op_in_region (convert-tensor-expr-to-loop), found 'tensor.empty'

func.func @negative_op_in_region(%c: i1, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    %t = tensor.empty() : tensor<2xf32>
    scf.yield %t : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

// A scan: the states live in the buffers of its first results (here the output), copied from the
// inits first; the step's computes are nests inside one serial time loop annotated dlc.scan
// (reversed: t_rev = T-1-t), reading the slice of a sequence at the step; their buffers are
// allocated around the loop; each step ends by copying the next state over the state and the
// step's output into its row of the stacked result.
// CHECK-LABEL: func.func @scan_reverse
// CHECK-SAME:    (%[[H0:.*]]: memref<2x3xf32>, %[[XS:.*]]: memref<5x2x3xf32>, %[[OUT:.*]]: memref<2x3xf32>, %[[YS:.*]]: memref<5x2x3xf32>)
// CHECK:         loop.block "rnn_init0" reads(%[[H0]] : memref<2x3xf32>) writes(%[[OUT]] : memref<2x3xf32>)
// CHECK:         %[[NEXT:.*]] = loop.alloc global : memref<2x3xf32>
// CHECK-NEXT:    loop.for %[[T:.*]] = %{{.*}} to %[[C5:.*]] step %{{.*}} axis "rnn_t" annotations {dlc.scan} {
// CHECK-NEXT:      %[[TREV:.*]] = arith.subi %{{.*}}, %[[T]] : index
// CHECK:             loop.block "step" reads(%[[OUT]], %[[XS]] : memref<2x3xf32>, memref<5x2x3xf32>) writes(%[[NEXT]] : memref<2x3xf32>)
// CHECK-NEXT:          loop.load %[[OUT]][%[[I:.*]], %[[J:.*]]] : memref<2x3xf32> -> f32
// CHECK-NEXT:          loop.load %[[XS]][%[[TREV]], %[[I]], %[[J]]] : memref<5x2x3xf32> -> f32
// CHECK:             loop.block "rnn_state0" reads(%[[NEXT]] : memref<2x3xf32>) writes(%[[OUT]] : memref<2x3xf32>)
// CHECK:             loop.block "rnn_out0" reads(%[[NEXT]] : memref<2x3xf32>) writes(%[[YS]] : memref<5x2x3xf32>)
// CHECK:               loop.store %{{.*}}, %[[YS]][%[[TREV]], %{{.*}}, %{{.*}}] : f32 -> memref<5x2x3xf32>
// CHECK:         loop.dealloc %[[NEXT]] : memref<2x3xf32>
// CHECK-NEXT:    func.return
func.func @scan_reverse(%h0: tensor<2x3xf32>, %xs: tensor<5x2x3xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>) {
  %h, %ys = tensor_expr.scan "rnn" reverse inits(%h0 : tensor<2x3xf32>)
      sequences(%xs : tensor<5x2x3xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>) {
  ^bb0(%state: tensor<2x3xf32>, %x: tensor<2x3xf32>):
    %next = tensor_expr.compute "step" -> tensor<2x3xf32> {
    ^bb1(%i: index, %j: index):
      %a = tensor_expr.read %state[%i, %j] : tensor<2x3xf32>
      %b = tensor_expr.read %x[%i, %j] : tensor<2x3xf32>
      %s = arith.addf %a, %b : f32
      tensor_expr.yield %s : f32
    }
    tensor_expr.scan_yield %next, %next : tensor<2x3xf32>, tensor<2x3xf32>
  }
  func.return %h, %ys : tensor<2x3xf32>, tensor<5x2x3xf32>
}

// -----

// Two states swapped by the body cannot be copied over each other in place.
func.func @negative_scan_swapped_states(%a0: tensor<2xf32>, %b0: tensor<2xf32>, %xs: tensor<3x2xf32>) -> tensor<2xf32> {
  // CHECK: 'tensor_expr.scan' op expected next state #0 to be computed in the body or to be state #0 itself, found another state
  %a, %b = tensor_expr.scan "swap" inits(%a0, %b0 : tensor<2xf32>, tensor<2xf32>) sequences(%xs : tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%sa: tensor<2xf32>, %sb: tensor<2xf32>, %x: tensor<2xf32>):
    tensor_expr.scan_yield %sb, %sa : tensor<2xf32>, tensor<2xf32>
  }
  func.return %a : tensor<2xf32>
}

// -----

// A reduction over a runtime height and width (a global pool): its loops run to the sizes.
// CHECK-LABEL: func.func @runtime_reduction
// CHECK-SAME:    %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index
// CHECK:         loop.for %{{.*}} = %{{.*}} to %x_d0 step %{{.*}} axis "i" {
// CHECK:           loop.block "sum_init"
// CHECK:           loop.for %{{.*}} = %{{.*}} to %x_d2 step %{{.*}} axis "y" {
// CHECK-NEXT:        loop.for %{{.*}} = %{{.*}} to %x_d3 step %{{.*}} axis "z" {
// CHECK-NEXT:          loop.block "sum" {{.*}} reduction ["y", "z"]
func.func @runtime_reduction(%x: tensor<?x8x?x?xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x8x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x8x?x?xf32>
  %s = tensor_expr.compute "sum" sizes(%n, %h, %w) reduce [?, ?] sum init 0.0 : f32 -> tensor<?x8xf32> {
  ^bb0(%i: index, %c: index, %y: index, %z: index):
    %v = tensor_expr.read %x[%i, %c, %y, %z] : tensor<?x8x?x?xf32>
    tensor_expr.yield %v : f32
  }
  func.return %s : tensor<?x8xf32>
}
