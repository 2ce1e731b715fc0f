// RUN: dlc-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the graph dialect, one case each, in the order of ops.py.

func.func @negative_dynamic_shape(%a: tensor<3x?xf32>) {
  // CHECK: 'graph.flatten' op expected operand #0 to have a static shape after its leading dim, found tensor<3x?xf32>
  %r = graph.flatten %a {axis = 1 : i64} : (tensor<3x?xf32>) -> tensor<3x?xf32>
  func.return
}

// -----

// Shape-polymorphic ops (runtime heights and widths) still need the dims they compute with.

func.func @negative_batch_norm_of_runtime_channels(%x: tensor<1x?x4xf32>, %p: tensor<3xf32>) {
  // CHECK: 'graph.batch_norm' op expected the channel axis to be a static dim of tensor<1x?x4xf32>, found axis 1
  %r = graph.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-5 : f32} : (tensor<1x?x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x?x4xf32>
  func.return
}

// -----

func.func @negative_resize_size_of_a_runtime_dim(%x: tensor<1x1x?x4xf32>) {
  // CHECK: 'graph.resize' op expected size -1 for dynamic dim 2 of tensor<1x1x?x4xf32>, found size 8, scale 2.0
  %r = graph.resize %x {sizes = array<i64: 1, 1, 8, 8>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest"} : (tensor<1x1x?x4xf32>) -> tensor<1x1x8x8xf32>
  func.return
}

// -----

func.func @negative_dynamic_leading_dim_not_polymorphic(%x: tensor<?x4xf32>) {
  // CHECK: 'graph.topk' op expected the operand to have a static shape, found tensor<?x4xf32>
  %v, %i = graph.topk %x {k = 2 : i64, axis = 1 : i64} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi64>)
  func.return
}

// -----

func.func @negative_reduce_over_the_dynamic_batch(%a: tensor<?x3xf32>) {
  // CHECK: 'graph.reduce' op expected a reduced axis to be a static dim of tensor<?x3xf32>, found axis 0
  %r = graph.reduce %a {axes = array<i64: 0>, kind = "sum"} : (tensor<?x3xf32>) -> tensor<1x3xf32>
  func.return
}

// -----

func.func @negative_gather_along_the_dynamic_batch(%a: tensor<?x3xf32>, %i: tensor<2xi64>) {
  // CHECK: 'graph.gather' op expected the gathered axis to be a static dim of tensor<?x3xf32>, found axis 0
  %r = graph.gather %a, %i {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @negative_arange_length(%t: tensor<?x5xi64>) {
  // CHECK: 'graph.arange' op expected result type tensor<5xi64>, found tensor<?xi64>
  %r = graph.arange %t {axis = 1 : i64} : (tensor<?x5xi64>) -> tensor<?xi64>
  func.return
}

// -----

func.func @negative_arange_element_type(%t: tensor<?x5xi64>) {
  // CHECK: 'graph.arange' op expected an integer or float result, found index
  %r = graph.arange %t {axis = 0 : i64} : (tensor<?x5xi64>) -> tensor<?xindex>
  func.return
}

// -----

func.func @negative_pad_of_the_dynamic_batch(%a: tensor<?x3xf32>) {
  // CHECK: 'graph.pad' op expected a padded axis to be a static dim of tensor<?x3xf32>, found axis 0
  %r = graph.pad %a {pads = array<i64: 1, 0, 0, 0>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @negative_slice_of_the_dynamic_batch(%a: tensor<?x3xf32>) {
  // CHECK: 'graph.slice' op expected dynamic dim 0 of tensor<?x3xf32> taken whole (start 0, a dynamic size, step 1), found start 1, size -1, step 1
  %r = graph.slice %a {starts = array<i64: 1, 0>, sizes = array<i64: -1, 3>, steps = array<i64: 1, 1>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @negative_slice_of_a_runtime_height(%a: tensor<?x8x?xf32>) {
  // CHECK: 'graph.slice' op expected dynamic dim 2 of tensor<?x8x?xf32> taken whole (start 0, a dynamic size, step 1), found start 0, size 3, step 1
  %r = graph.slice %a {starts = array<i64: 0, 0, 0>, sizes = array<i64: -1, 8, 3>, steps = array<i64: 1, 1, 1>} : (tensor<?x8x?xf32>) -> tensor<?x8x3xf32>
  func.return
}

// -----

func.func @negative_static_slice_size_below_zero(%a: tensor<?x8x?xf32>) {
  // CHECK: 'graph.slice' op expected 'sizes' >= 0 along static dims, found [-1, -1, -1]
  %r = graph.slice %a {starts = array<i64: 0, 0, 0>, sizes = array<i64: -1, -1, -1>, steps = array<i64: 1, 1, 1>} : (tensor<?x8x?xf32>) -> tensor<?x?x?xf32>
  func.return
}

// -----

func.func @negative_argmax_over_the_dynamic_batch(%a: tensor<?x3xf32>) {
  // CHECK: 'graph.argmax' op expected the reduced axis to be a static dim of tensor<?x3xf32>, found axis 0
  %r = graph.argmax %a {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<1x3xi64>
  func.return
}

// -----

func.func @negative_argmax_over_a_runtime_axis(%a: tensor<?x3x?xf32>) {
  // CHECK: 'graph.argmax' op expected the reduced axis to be a static dim of tensor<?x3x?xf32>, found axis 2
  %r = graph.argmax %a {axis = 2 : i64} : (tensor<?x3x?xf32>) -> tensor<?x3x1xi64>
  func.return
}

// -----

func.func @negative_dynamic_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // CHECK: 'graph.add' op expected result type tensor<2x3xf32>, found tensor<?x3xf32>
  %r = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @negative_result_type(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // CHECK: 'graph.add' op expected result type tensor<2x3xf32>, found tensor<3x3xf32>
  %r = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  func.return
}

// -----

func.func @negative_element_types(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  // CHECK: 'graph.sub' op expected operand element types to match, found f32 and i32
  %r = graph.sub %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @negative_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // CHECK: 'graph.mul' op expected broadcast-compatible operand shapes, found tensor<2x3xf32> and tensor<4xf32>
  %r = graph.mul %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @negative_float_only(%a: tensor<3xi32>) {
  // CHECK: 'graph.sigmoid' op expected a floating-point element type, found i32
  %r = graph.sigmoid %a : tensor<3xi32>
  func.return
}

// -----

func.func @negative_ceil_integer(%a: tensor<3xi64>) {
  // CHECK: 'graph.ceil' op expected a floating-point element type, found i64
  %r = graph.ceil %a : tensor<3xi64>
  func.return
}

// -----

func.func @negative_clip_bounds(%a: tensor<3xf32>) {
  // CHECK: 'graph.clip' op expected min <= max, found min 6.0 and max 0.0
  %r = graph.clip %a {max = 0.0 : f32, min = 6.0 : f32} : tensor<3xf32>
  func.return
}

// -----

func.func @negative_matmul_scalar(%a: tensor<f32>, %b: tensor<3xf32>) {
  // CHECK: 'graph.matmul' op expected operands of rank >= 1, found tensor<f32> and tensor<3xf32>
  %r = graph.matmul %a, %b : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @negative_matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // CHECK: 'graph.matmul' op expected contracting dims to match, found 3 (lhs tensor<2x3xf32>) and 4 (rhs tensor<4x5xf32>)
  %r = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @negative_matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<4x3x5xf32>) {
  // CHECK: 'graph.matmul' op expected broadcast-compatible batch dims, found tensor<2x2x3xf32> and tensor<4x3x5xf32>
  %r = graph.matmul %a, %b : (tensor<2x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>
  func.return
}

// -----

func.func @negative_conv2d_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected an input of rank 4, found tensor<3x8x8xf32>
  %r = graph.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_attr_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected 'padding' to have 4 values, found 2
  %r = graph.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @negative_conv2d_strides(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected positive 'strides', found [0, 1]
  %r = graph.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected non-negative 'padding', found [0, -1, 0, 0]
  %r = graph.conv2d %x, %w {padding = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected positive 'groups', found 0
  %r = graph.conv2d %x, %w {groups = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_layout(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected 'layout' to be a permutation of NCHW, found 'NCHWc'
  %r = graph.conv2d %x, %w {layout = "NCHWc"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_channels(%x: tensor<1x64x8x8xf32>, %w: tensor<16x32x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected input channels 64 to match weight channels 32 (groups 1)
  %r = graph.conv2d %x, %w : (tensor<1x64x8x8xf32>, tensor<16x32x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_output_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected output channels 6 to be divisible by groups 4
  %r = graph.conv2d %x, %w {groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // CHECK: 'graph.conv2d' op expected a bias of shape (4), found tensor<3xf32>
  %r = graph.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_output_size(%x: tensor<1x3x2x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected a positive output size for dim H, found 0 (input 2, kernel 3, dilation 1)
  %r = graph.conv2d %x, %w : (tensor<1x3x2x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32>
  func.return
}

// -----

func.func @conv2d_winograd_runtime_channels(%x: tensor<1x?x8x8xf32>, %u: tensor<6x8x8x3xf32>) {
  // CHECK: 'graph.conv2d_winograd' op expected the input's channels to be a static dim of tensor<1x?x8x8xf32>, found axis 1
  %r = graph.conv2d_winograd %x, %u {tile = 4 : i64} : (tensor<1x?x8x8xf32>, tensor<6x8x8x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_winograd_tile(%x: tensor<1x8x8x8xf32>, %u: tensor<5x8x8x3xf32>) {
  // CHECK: 'graph.conv2d_winograd' op expected 'tile' in [2, 4], found 3
  %r = graph.conv2d_winograd %x, %u {tile = 3 : i64} : (tensor<1x8x8x8xf32>, tensor<5x8x8x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_winograd_rows(%x: tensor<1x8x8x8xf32>, %u: tensor<4x8x8x3xf32>) {
  // CHECK: 'graph.conv2d_winograd' op expected a weight of 6 transformed rows (tile 4), found 4
  %r = graph.conv2d_winograd %x, %u {tile = 4 : i64} : (tensor<1x8x8x8xf32>, tensor<4x8x8x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_winograd_channels(%x: tensor<1x8x8x8xf32>, %u: tensor<4x8x4x3xf32>) {
  // CHECK: 'graph.conv2d_winograd' op expected input channels 8 to match weight channels 4
  %r = graph.conv2d_winograd %x, %u {tile = 2 : i64} : (tensor<1x8x8x8xf32>, tensor<4x8x4x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @negative_conv2d_winograd_integer(%x: tensor<1x8x8x8xi32>, %u: tensor<4x8x8x3xi32>) {
  // CHECK: 'graph.conv2d_winograd' op expected a floating-point element type, found i32
  %r = graph.conv2d_winograd %x, %u {tile = 2 : i64} : (tensor<1x8x8x8xi32>, tensor<4x8x8x3xi32>) -> tensor<1x8x6x6xi32>
  func.return
}

// -----

func.func @negative_conv2d_winograd_size(%x: tensor<1x8x1x8xf32>, %u: tensor<4x8x8x3xf32>) {
  // CHECK: 'graph.conv2d_winograd' op expected a positive output size, found -1x6 (input 1x8, kernel 3x3)
  %r = graph.conv2d_winograd %x, %u {tile = 2 : i64} : (tensor<1x8x1x8xf32>, tensor<4x8x8x3xf32>) -> tensor<1x8x1x6xf32>
  func.return
}

// -----

func.func @negative_pool_padding(%x: tensor<1x4x8x8xf32>) {
  // CHECK: 'graph.max_pool2d' op expected padding [2, 0] of dim H to be smaller than the window extent 2
  %r = graph.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x9x7xf32>
  func.return
}

// -----

func.func @negative_max_pool_bool(%x: tensor<1x4x8x8xi1>) {
  // CHECK: 'graph.max_pool2d' op expected a floating-point or integer element type, found i1
  %r = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x4x8x8xi1>) -> tensor<1x4x7x7xi1>
  func.return
}

// -----

func.func @negative_avg_pool_integer(%x: tensor<1x4x8x8xi8>) {
  // CHECK: 'graph.avg_pool2d' op expected a floating-point element type, found i8
  %r = graph.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x4x8x8xi8>) -> tensor<1x4x7x7xi8>
  func.return
}

// -----

func.func @negative_pool_output_size(%x: tensor<1x4x2x8xf32>) {
  // CHECK: 'graph.avg_pool2d' op expected a positive output size for dim H, found 0 (input 2, window extent 3)
  %r = graph.avg_pool2d %x {kernel = array<i64: 3, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x1x6xf32>
  func.return
}

// -----

func.func @negative_batch_norm_rank(%x: tensor<4xf32>, %p: tensor<4xf32>) {
  // CHECK: 'graph.batch_norm' op expected an input of rank >= 2, found tensor<4xf32>
  %r = graph.batch_norm %x, %p, %p, %p, %p : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @negative_batch_norm_param(%x: tensor<1x4x2x2xf32>, %p: tensor<4xf32>, %v: tensor<3xf32>) {
  // CHECK: 'graph.batch_norm' op expected var of shape (4), found tensor<3xf32>
  %r = graph.batch_norm %x, %p, %p, %p, %v : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x4x2x2xf32>
  func.return
}

// -----

func.func @negative_softmax_axis(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.softmax' op expected axis in [-2, 2) for rank 2, found 2
  %r = graph.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  func.return
}

// -----

func.func @negative_reduce_kind(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.reduce' op expected kind in sum, mean, max, min, prod, found 'avg'
  %r = graph.reduce %x {axes = array<i64: 1>, kind = "avg"} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @negative_reduce_axes(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.reduce' op expected distinct axes, found [1, -1]
  %r = graph.reduce %x {axes = array<i64: 1, -1>, kind = "sum"} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @negative_mod_of_two_types(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  // CHECK: 'graph.mod' op expected operand element types to match, found f32 and i32
  %r = graph.mod %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @negative_reshape_dims(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.reshape' op expected 'shape' dims >= 0 with at most one -1, found [-1, -1]
  %r = graph.reshape %x {shape = array<i64: -1, -1>} : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return
}

// -----

func.func @negative_reshape_fill(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.reshape' op expected 6 elements to fill shape [4, -1]
  %r = graph.reshape %x {shape = array<i64: 4, -1>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @negative_reshape_count(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.reshape' op expected shape [4, 2] to hold 6 elements, found 8
  %r = graph.reshape %x {shape = array<i64: 4, 2>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @negative_transpose_perm(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.transpose' op expected 'perm' to be a permutation of [0, 2), found [0, 0]
  %r = graph.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @negative_concat_empty() {
  // CHECK: 'graph.concat' op expected at least one input, found none
  %r = "graph.concat"() {axis = 0 : i64} : () -> tensor<2xf32>
  func.return
}

// -----

func.func @negative_concat_shapes(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // CHECK: 'graph.concat' op expected input #1 to match tensor<2x3xf32> except along axis 1, found tensor<3x3xf32>
  %r = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

func.func @negative_flatten_axis(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.flatten' op expected axis in [-2, 2] for rank 2, found 3
  %r = graph.flatten %x {axis = 3 : i64} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  func.return
}

// -----

func.func @negative_dynamic_broadcast_not_leading(%a: tensor<?xf32>, %b: tensor<5x1xf32>) {
  // CHECK: 'graph.add' op expected result type tensor<5x?xf32>, found tensor<5x3xf32>
  %r = graph.add %a, %b : (tensor<?xf32>, tensor<5x1xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

func.func @negative_dynamic_broadcast_static(%a: tensor<?x3xf32>, %b: tensor<4x3xf32>) {
  // CHECK: 'graph.add' op expected broadcast-compatible operand shapes, found tensor<?x3xf32> and tensor<4x3xf32>
  %r = graph.add %a, %b : (tensor<?x3xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @negative_dynamic_conv_weight(%x: tensor<1x3x8x8xf32>, %w: tensor<?x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected the weight to have a static shape, found tensor<?x3x3x3xf32>
  %r = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<?x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return
}

// -----

func.func @negative_dynamic_conv_batch_not_n(%x: tensor<?x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // CHECK: 'graph.conv2d' op expected the dynamic leading dim of tensor<?x3x8x8xf32> to be the layout's N axis
  %r = graph.conv2d %x, %w {layout = "CNHW"} : (tensor<?x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x6x6xf32>
  func.return
}

// -----

func.func @negative_runtime_matmul_contracting(%a: tensor<?x?x3xf32>, %b: tensor<?x4x?xf32>) {
  // CHECK: 'graph.matmul' op expected contracting dims to match, found 3 (lhs tensor<?x?x3xf32>) and 4 (rhs tensor<?x4x?xf32>)
  %r = graph.matmul %a, %b : (tensor<?x?x3xf32>, tensor<?x4x?xf32>) -> tensor<?x?x?xf32>
  func.return
}

// -----

func.func @negative_dynamic_matmul_rhs(%a: tensor<?x3xf32>, %b: tensor<?x4xf32>) {
  // CHECK: 'graph.matmul' op expected a dim of a matrix rhs to be a static dim of tensor<?x4xf32>, found axis 0
  %r = graph.matmul %a, %b : (tensor<?x3xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

func.func @negative_dynamic_matmul_contracting(%a: tensor<?xf32>, %b: tensor<3x4xf32>) {
  // CHECK: 'graph.matmul' op expected the contracting dim to be a static dim of tensor<?xf32>, found axis 0
  %r = graph.matmul %a, %b : (tensor<?xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @negative_dynamic_softmax_axis(%x: tensor<?x10xf32>) {
  // CHECK: 'graph.softmax' op expected the softmax axis to be a static dim of tensor<?x10xf32>, found axis 0
  %r = graph.softmax %x {axis = 0 : i64} : tensor<?x10xf32>
  func.return
}

// -----

func.func @negative_dynamic_reshape_batch(%x: tensor<?x3x4xf32>) {
  // CHECK: 'graph.reshape' op expected 'shape' to start with -1 (the batch) for an operand with a dynamic leading dim, found [2, -1]
  %r = graph.reshape %x {shape = array<i64: 2, -1>} : (tensor<?x3x4xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

func.func @negative_reshape_merging_runtime_dims_two_ways(%x: tensor<?x?x?xf32>) {
  // CHECK: 'graph.reshape' op expected 'shape' [-1, -1] to keep each dynamic dim of tensor<?x?x?xf32> (a -1 for each, in order, or one -1 for consecutive ones merged) and to regroup only the static dims between them
  %r = graph.reshape %x {shape = array<i64: -1, -1>} : (tensor<?x?x?xf32>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @negative_reshape_groups_leaving_a_runtime_dim_out(%x: tensor<?x3x?x?x8xf32>) {
  // CHECK: 'graph.reshape' op expected 'shape' [-1, -1, 8] to keep each dynamic dim of tensor<?x3x?x?x8xf32> (a -1 for each, in order, or one -1 for consecutive ones merged) and to regroup only the static dims between them, as 'groups' [0, 1, 1, 3] pairs them
  %r = graph.reshape %x {shape = array<i64: -1, -1, 8>, groups = array<i64: 0, 1, 1, 3>} : (tensor<?x3x?x?x8xf32>) -> tensor<?x?x8xf32>
  func.return
}

// -----

func.func @negative_reshape_groups_of_a_static_operand(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.reshape' op expected 'groups' only for an operand with runtime dims after its leading one, found tensor<2x3xf32>
  %r = graph.reshape %x {shape = array<i64: 6>, groups = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return
}

// -----

func.func @negative_reshape_merging_a_static_dim_beside_runtime_dims(%x: tensor<?x8x?x?xf32>) {
  // CHECK: 'graph.reshape' op expected 'shape' [-1, -1, 8] to keep each dynamic dim of tensor<?x8x?x?xf32> (a -1 for each, in order, or one -1 for consecutive ones merged) and to regroup only the static dims between them
  %r = graph.reshape %x {shape = array<i64: -1, -1, 8>} : (tensor<?x8x?x?xf32>) -> tensor<?x?x8xf32>
  func.return
}

// -----

func.func @negative_reshape_moving_static_dims_across_a_runtime_dim(%x: tensor<?x8x?x4xf32>) {
  // CHECK: 'graph.reshape' op expected 'shape' [-1, 32, -1, 1] to keep each dynamic dim of tensor<?x8x?x4xf32> (a -1 for each, in order, or one -1 for consecutive ones merged) and to regroup only the static dims between them
  %r = graph.reshape %x {shape = array<i64: -1, 32, -1, 1>} : (tensor<?x8x?x4xf32>) -> tensor<?x32x?x1xf32>
  func.return
}

// -----

func.func @negative_dynamic_reshape_row(%x: tensor<?x3x4xf32>) {
  // CHECK: 'graph.reshape' op expected shape [5] to hold 12 elements, found 5
  %r = graph.reshape %x {shape = array<i64: -1, 5>} : (tensor<?x3x4xf32>) -> tensor<?x5xf32>
  func.return
}

// -----

func.func @negative_dynamic_transpose(%x: tensor<?x3xf32>) {
  // CHECK: 'graph.transpose' op expected 'perm' to keep the dynamic leading dim of tensor<?x3xf32> first, found [1, 0]
  %r = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @negative_dynamic_concat_axis(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) {
  // CHECK: 'graph.concat' op expected the concat axis to be a static dim of tensor<?x3xf32>, found axis 0
  %r = graph.concat %a, %b {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @negative_dynamic_concat_static(%a: tensor<?x3xf32>, %b: tensor<2x5xf32>) {
  // CHECK: 'graph.concat' op expected input #1 to match tensor<?x3xf32> except along axis 1, found tensor<2x5xf32>
  %r = graph.concat %a, %b {axis = 1 : i64} : (tensor<?x3xf32>, tensor<2x5xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

func.func @negative_dynamic_flatten_axis(%x: tensor<?x3xf32>) {
  // CHECK: 'graph.flatten' op expected axis >= 1 to keep the dynamic leading dim of tensor<?x3xf32> in the rows, found 0
  %r = graph.flatten %x {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<1x3xf32>
  func.return
}

// -----

func.func @negative_yield_parent(%a: tensor<3xf32>) {
  // CHECK: 'graph.yield' expects parent op to be one of 'graph.fused', 'graph.if', 'graph.loop'
  graph.yield %a : tensor<3xf32>
}

// -----

func.func @negative_fused_unranked(%a: tensor<*xf32>) {
  // CHECK: operand 'inputs' at position 0 does not verify:
  // CHECK-NEXT: tensor<*xf32> should be of base attribute tensor
  %r = graph.fused (%a) : (tensor<*xf32>) -> tensor<*xf32> {
  ^bb0(%x: tensor<*xf32>):
    graph.yield %x : tensor<*xf32>
  }
  func.return
}

// -----

func.func @negative_fused_kind(%a: tensor<3xf32>) {
  // CHECK: 'graph.fused' op unknown fusion kind 'fancy', expected one of elementwise, broadcast, injective, reduction, out_fusable, opaque
  %r = graph.fused (%a) {kind = "fancy"} : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: tensor<3xf32>):
    graph.yield %x : tensor<3xf32>
  }
  func.return
}

// -----

func.func @negative_fused_arguments(%a: tensor<3xf32>) {
  // CHECK: 'graph.fused' op expected the body's argument types to match the operand types (tensor<3xf32>), found (tensor<4xf32>)
  %r = graph.fused (%a) : (tensor<3xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    graph.yield %x : tensor<4xf32>
  }
  func.return
}

// -----

func.func @negative_fused_terminator(%a: tensor<3xf32>) {
  // CHECK: 'graph.fused' op expected the body to end with graph.yield, found 'test.termop'
  %r = graph.fused (%a) : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%x: tensor<3xf32>):
    "test.termop"() : () -> ()
  }
  func.return
}

// -----

func.func @negative_fused_yield_types(%a: tensor<3xf32>) {
  // CHECK: 'graph.fused' op expected graph.yield types (tensor<3xf32>) to match the result types (tensor<3xi32>)
  %r = graph.fused (%a) : (tensor<3xf32>) -> tensor<3xi32> {
  ^bb0(%x: tensor<3xf32>):
    graph.yield %x : tensor<3xf32>
  }
  func.return
}

// -----

// ops_tensor.py: data movement, selection and conversion.

func.func @negative_cast_element_type(%x: tensor<2xi4>) {
  // CHECK: 'graph.cast' op expected element types with a NumPy dtype, found i4
  %r = graph.cast %x : (tensor<2xi4>) -> tensor<2xf32>
  func.return
}

// -----

func.func @negative_cast_shape(%x: tensor<2xf32>) {
  // CHECK: 'graph.cast' op expected result type tensor<2xi32>, found tensor<3xi32>
  %r = graph.cast %x : (tensor<2xf32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @negative_compare_predicate(%a: tensor<2xf32>) {
  // CHECK: 'graph.compare' op expected 'predicate' in eq, ne, lt, le, gt, ge, found 'less'
  %r = graph.compare %a, %a {predicate = "less"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  func.return
}

// -----

func.func @negative_compare_broadcast(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // CHECK: 'graph.compare' op expected broadcast-compatible operand shapes, found tensor<2xf32> and tensor<3xf32>
  %r = graph.compare %a, %b {predicate = "eq"} : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xi1>
  func.return
}

// -----

func.func @negative_where_condition(%c: tensor<2xf32>, %a: tensor<2xf32>) {
  // CHECK: 'graph.where' op expected an i1 condition, found tensor<2xf32>
  %r = graph.where %c, %a, %a : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @negative_where_broadcast(%c: tensor<4xi1>, %a: tensor<2xf32>) {
  // CHECK: 'graph.where' op expected broadcast-compatible operand shapes, found tensor<4xi1>, tensor<2xf32> and tensor<2xf32>
  %r = graph.where %c, %a, %a : (tensor<4xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @negative_gather_indices(%x: tensor<5xf32>, %i: tensor<2xf32>) {
  // CHECK: 'graph.gather' op expected indices of an integer element type, found tensor<2xf32>
  %r = graph.gather %x, %i : (tensor<5xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @negative_gather_axis(%x: tensor<5xf32>, %i: tensor<2xi64>) {
  // CHECK: 'graph.gather' op expected axis in [-1, 1) for rank 1, found 1
  %r = graph.gather %x, %i {axis = 1 : i64} : (tensor<5xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @negative_slice_count(%x: tensor<4x5xf32>) {
  // CHECK: 'graph.slice' op expected 'starts' to have 2 values, found 1
  %r = graph.slice %x {starts = array<i64: 0>, sizes = array<i64: 1>, steps = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<1xf32>
  func.return
}

// -----

func.func @negative_slice_step(%x: tensor<4xf32>) {
  // CHECK: 'graph.slice' op expected non-zero 'steps', found [0]
  %r = graph.slice %x {starts = array<i64: 0>, sizes = array<i64: 1>, steps = array<i64: 0>} : (tensor<4xf32>) -> tensor<1xf32>
  func.return
}

// -----

func.func @negative_slice_out_of_bounds(%x: tensor<4xf32>) {
  // CHECK: 'graph.slice' op expected axis 0 to read inside [0, 4), found elements 2 to 6
  %r = graph.slice %x {starts = array<i64: 2>, sizes = array<i64: 3>, steps = array<i64: 2>} : (tensor<4xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @negative_pad_negative(%x: tensor<4xf32>) {
  // CHECK: 'graph.pad' op expected non-negative 'pads', found [-1, 0]
  %r = graph.pad %x {pads = array<i64: -1, 0>} : (tensor<4xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @negative_pad_mode(%x: tensor<4xf32>) {
  // CHECK: 'graph.pad' op expected 'mode' in constant, reflect, edge, wrap, found 'symmetric'
  %r = graph.pad %x {pads = array<i64: 1, 0>, mode = "symmetric"} : (tensor<4xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @negative_pad_reflect(%x: tensor<2xf32>) {
  // CHECK: 'graph.pad' op expected reflect pads of axis 0 smaller than its dim 2, found 2 and 0
  %r = graph.pad %x {pads = array<i64: 2, 0>, mode = "reflect"} : (tensor<2xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @negative_broadcast_to(%x: tensor<2xf32>) {
  // CHECK: 'graph.broadcast_to' op expected tensor<2xf32> to broadcast to [2, 3]
  %r = graph.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @negative_broadcast_to_batch_without_batch(%x: tensor<1x3xf32>) {
  // CHECK: 'graph.broadcast_to' op expected a batch operand, or an operand of the target's rank with a dynamic leading dim, for the target [-1, 3], found tensor<1x3xf32>
  %r = graph.broadcast_to %x {shape = array<i64: -1, 3>} : (tensor<1x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @negative_broadcast_to_batch_of_batched(%x: tensor<?x3xf32>, %n: tensor<?x5xf32>) {
  // CHECK: 'graph.broadcast_to' op expected a batch operand with a dynamic leading dim and an operand without one, found tensor<?x5xf32> and tensor<?x3xf32>
  %r = graph.broadcast_to %x, %n {shape = array<i64: -1, 3>} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @negative_broadcast_to_batch_rows(%x: tensor<2x3xf32>, %n: tensor<?x5xf32>) {
  // CHECK: 'graph.broadcast_to' op expected tensor<2x3xf32> to broadcast to [-1, 3]
  %r = graph.broadcast_to %x, %n {shape = array<i64: -1, 3>} : (tensor<2x3xf32>, tensor<?x5xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @negative_broadcast_to_batched_static_target(%x: tensor<?x3xf32>) {
  // CHECK: 'graph.broadcast_to' op expected a leading target dim of -1 for a dynamic batch, found [2, 3]
  %r = graph.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<?x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @negative_resize_scales(%x: tensor<4xf32>) {
  // CHECK: 'graph.resize' op expected positive 'scales', found [0.0]
  %r = graph.resize %x {sizes = array<i64: 4>, scales = array<f64: 0.0>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @negative_resize_of_the_batch(%x: tensor<?x4xf32> {dlc.dim_symbols = ["N", ""]}) {
  // CHECK: 'graph.resize' op expected size -1 and scale 1 for the dynamic batch of tensor<?x4xf32>, found size -1, scale 2.0
  %r = graph.resize %x {sizes = array<i64: -1, 8>, scales = array<f64: 2.0, 2.0>} : (tensor<?x4xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

func.func @negative_resize_mode(%x: tensor<4xf32>) {
  // CHECK: 'graph.resize' op expected 'mode' in nearest, linear, cubic, found 'area'
  %r = graph.resize %x {sizes = array<i64: 8>, scales = array<f64: 2.0>, mode = "area"} : (tensor<4xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @negative_resize_linear_integers(%x: tensor<4xi32>) {
  // CHECK: 'graph.resize' op expected a floating-point element type for mode 'linear', found i32
  %r = graph.resize %x {sizes = array<i64: 8>, scales = array<f64: 2.0>, mode = "linear"} : (tensor<4xi32>) -> tensor<8xi32>
  func.return
}

// -----

func.func @negative_argmax_empty(%x: tensor<2x0xf32>) {
  // CHECK: 'graph.argmax' op expected a non-empty axis 1, found tensor<2x0xf32>
  %r = graph.argmax %x {axis = 1 : i64} : (tensor<2x0xf32>) -> tensor<2x1xi64>
  func.return
}

// -----

func.func @negative_topk_k(%x: tensor<3xf32>) {
  // CHECK: 'graph.topk' op expected k in [0, 3], found 4
  %v, %i = graph.topk %x {k = 4 : i64} : (tensor<3xf32>) -> (tensor<4xf32>, tensor<4xi64>)
  func.return
}

// -----

func.func @negative_topk_results(%x: tensor<3xf32>) {
  // CHECK: 'graph.topk' op expected result types tensor<2xf32> and tensor<2xi64>, found tensor<2xf32> and tensor<2xi32>
  %v, %i = graph.topk %x {k = 2 : i64} : (tensor<3xf32>) -> (tensor<2xf32>, tensor<2xi32>)
  func.return
}

// -----

func.func @negative_nonzero_indices(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.nonzero' op expected indices of type tensor<2x6xi64>, found tensor<2x3xi64>
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x3xi64>, tensor<i64>)
  func.return
}

// -----

func.func @negative_nonzero_count(%x: tensor<2x3xf32>) {
  // CHECK: 'graph.nonzero' op expected the count result of type tensor<i64>, found tensor<1xi64>
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<1xi64>)
  func.return
}

// -----

func.func @negative_nms_boxes(%b: tensor<1x6x5xf32>, %s: tensor<1x1x6xf32>, %m: tensor<i64>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected boxes of shape [batches, boxes, 4], found tensor<1x6x5xf32>
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 1 : i64} : tensor<1x6x5xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32> -> tensor<1x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_nms_scores(%b: tensor<1x6x4xf32>, %s: tensor<1x1x5xf32>, %m: tensor<i64>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected scores of shape [1, classes, 6] for boxes tensor<1x6x4xf32>, found tensor<1x1x5xf32>
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 1 : i64} : tensor<1x6x4xf32>, tensor<1x1x5xf32>, tensor<i64>, tensor<f32> -> tensor<1x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_nms_integer_boxes(%b: tensor<1x6x4xi32>, %s: tensor<1x1x6xi32>, %m: tensor<i64>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected float boxes and scores of one type, found tensor<1x6x4xi32> and tensor<1x1x6xi32>
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 1 : i64} : tensor<1x6x4xi32>, tensor<1x1x6xi32>, tensor<i64>, tensor<f32> -> tensor<1x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_nms_bound(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>, %m: tensor<i64>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected 'bound' in [0, 6], found 7
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 7 : i64} : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32> -> tensor<7x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_nms_selected(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>, %m: tensor<i64>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected selected indices of type tensor<2x3xi64>, found tensor<6x3xi64>
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 2 : i64} : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32> -> tensor<6x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_nms_count(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>, %m: tensor<i64>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected the count result of type tensor<i64>, found tensor<i32>
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 2 : i64} : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32> -> tensor<2x3xi64>, tensor<i32>
  func.return
}

// -----

func.func @negative_nms_center_point_box(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>, %m: tensor<i64>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected 'center_point_box' 0 or 1, found 2
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 2 : i64, center_point_box = 2 : i64} : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32> -> tensor<2x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_nms_max_output(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>, %m: tensor<2xi64>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected max_output_boxes_per_class to be a scalar (shape [] or [1]), found tensor<2xi64>
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 2 : i64} : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<2xi64>, tensor<f32> -> tensor<2x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_nms_max_output_type(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>, %m: tensor<i32>, %t: tensor<f32>) {
  // CHECK: 'graph.non_max_suppression' op expected max_output_boxes_per_class of i64 element type, found tensor<i32>
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 2 : i64} : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i32>, tensor<f32> -> tensor<2x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_nms_threshold_type(%b: tensor<1x6x4xf32>, %s: tensor<1x1x6xf32>, %m: tensor<i64>, %t: tensor<f16>) {
  // CHECK: 'graph.non_max_suppression' op expected iou_threshold of the boxes' element type, found tensor<f16>
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 2 : i64} : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f16> -> tensor<2x3xi64>, tensor<i64>
  func.return
}

// -----

func.func @negative_conv_transpose2d_channels(%x: tensor<1x4x5x5xf32>, %w: tensor<3x3x3x3xf32>) {
  // CHECK: 'graph.conv_transpose2d' op expected weight dim 0 to be the 4 input channels, found 3
  %r = graph.conv_transpose2d %x, %w : (tensor<1x4x5x5xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x7x7xf32>
  func.return
}

// -----

func.func @negative_conv_transpose2d_groups(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: 'graph.conv_transpose2d' op expected groups to divide the 4 input channels, found 3
  %r = graph.conv_transpose2d %x, %w {groups = 3 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x9x7x7xf32>
  func.return
}

// -----

func.func @negative_conv_transpose2d_bias(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // CHECK: 'graph.conv_transpose2d' op expected a bias of shape [3], found tensor<4xf32>
  %r = graph.conv_transpose2d %x, %w, %b : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x3x7x7xf32>
  func.return
}

// -----

func.func @negative_conv_transpose2d_output(%x: tensor<1x4x1x1xf32>, %w: tensor<4x3x1x1xf32>) {
  // CHECK: 'graph.conv_transpose2d' op expected a positive output size along H, found -1
  %r = graph.conv_transpose2d %x, %w {padding = array<i64: 1, 0, 1, 0>} : (tensor<1x4x1x1xf32>, tensor<4x3x1x1xf32>) -> tensor<1x3x1x1xf32>
  func.return
}

// -----

// Quantized ops (ops_quant.py).

func.func @negative_quantize_zero_scale(%x: tensor<4xf32>) {
  %s = graph.constant dense<0.0> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  // CHECK: 'graph.quantize' op expected positive finite scales, found 0.0
  %q = graph.quantize %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @negative_dequantize_nan_scale(%x: tensor<4xi8>) {
  %s = graph.constant dense<"0x0000C07F"> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  // CHECK: 'graph.dequantize' op expected positive finite scales, found nan
  %d = graph.dequantize %x, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  func.return
}

// -----

func.func @negative_quantize_channels(%x: tensor<1x3x4xf32>, %s: tensor<2xf32>, %z: tensor<2xi8>) {
  // CHECK: 'graph.quantize' op expected 3 per-channel scales (axis 1 of tensor<1x3x4xf32>), found 2
  %q = graph.quantize %x, %s, %z {axis = 1 : i64} : (tensor<1x3x4xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<1x3x4xi8>
  func.return
}

// -----

func.func @negative_quantize_channels_of_the_batch(%x: tensor<?x3xf32> {dlc.dim_symbols = ["N", ""]}, %s: tensor<2xf32>, %z: tensor<2xi8>) {
  // CHECK: 'graph.quantize' op expected per-channel scales along a static axis, found axis 0 of tensor<?x3xf32> (the dynamic batch)
  %q = graph.quantize %x, %s, %z {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<?x3xi8>
  func.return
}

// -----

func.func @negative_quantize_zero_point_shape(%x: tensor<1x3x4xf32>, %s: tensor<3xf32>, %z: tensor<i8>) {
  // CHECK: 'graph.quantize' op expected the zero point's shape tensor<i8> to match the scale's tensor<3xf32>
  %q = graph.quantize %x, %s, %z : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<i8>) -> tensor<1x3x4xi8>
  func.return
}

// -----

func.func @negative_quantize_int_input(%x: tensor<4xi32>, %s: tensor<f32>, %z: tensor<i8>) {
  // CHECK: 'graph.quantize' op expected a floating-point input, found tensor<4xi32>
  %q = graph.quantize %x, %s, %z : (tensor<4xi32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @negative_quantize_i16(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i16>) {
  // CHECK: 'graph.quantize' op expected a zero point of element type i8 or ui8, found tensor<i16>
  %q = graph.quantize %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<i16>) -> tensor<4xi16>
  func.return
}

// -----

func.func @negative_dequantize_zero_point_type(%x: tensor<4xi8>, %s: tensor<f32>, %z: tensor<ui8>) {
  // CHECK: 'graph.dequantize' op expected a zero point of element type i8, found tensor<ui8>
  %d = graph.dequantize %x, %s, %z : (tensor<4xi8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  func.return
}

// -----

func.func @negative_quantize_f64_scale(%x: tensor<4xf32>, %s: tensor<f64>, %z: tensor<i8>) {
  // CHECK: 'graph.quantize' op expected an f32 scale, found tensor<f64>
  %q = graph.quantize %x, %s, %z : (tensor<4xf32>, tensor<f64>, tensor<i8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @negative_conv2d_integer_float(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xi8>, %xz: tensor<f32>, %wz: tensor<i8>) {
  // CHECK: 'graph.conv2d_integer' op expected an input of element type i8 or ui8, found tensor<1x3x8x8xf32>
  %r = graph.conv2d_integer %x, %w, %xz, %wz : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x6x6xi32>
  func.return
}

// -----

func.func @negative_conv2d_integer_channels(%x: tensor<1x3x8x8xi8>, %w: tensor<4x2x3x3xi8>, %xz: tensor<i8>, %wz: tensor<i8>) {
  // CHECK: 'graph.conv2d_integer' op expected input channels 3 to match weight channels 2 (groups 1)
  %r = graph.conv2d_integer %x, %w, %xz, %wz : (tensor<1x3x8x8xi8>, tensor<4x2x3x3xi8>, tensor<i8>, tensor<i8>) -> tensor<1x4x6x6xi32>
  func.return
}

// -----

func.func @negative_conv2d_integer_weight_zero_point(%x: tensor<1x3x8x8xi8>, %w: tensor<4x3x3x3xi8>, %xz: tensor<i8>, %wz: tensor<3xi8>) {
  // CHECK: 'graph.conv2d_integer' op expected the weight zero point of rank 0 or shape (4), found tensor<3xi8>
  %r = graph.conv2d_integer %x, %w, %xz, %wz : (tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8>, tensor<i8>, tensor<3xi8>) -> tensor<1x4x6x6xi32>
  func.return
}

// -----

func.func @negative_conv2d_integer_bias(%x: tensor<1x3x8x8xi8>, %w: tensor<4x3x3x3xi8>, %xz: tensor<i8>, %wz: tensor<i8>, %b: tensor<4xf32>) {
  // CHECK: 'graph.conv2d_integer' op expected an i32 bias, found tensor<4xf32>
  %r = graph.conv2d_integer %x, %w, %xz, %wz, %b : (tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8>, tensor<i8>, tensor<i8>, tensor<4xf32>) -> tensor<1x4x6x6xi32>
  func.return
}

// -----

func.func @negative_matmul_integer_zero_point(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>, %az: tensor<2xui8>, %bz: tensor<i8>) {
  // CHECK: 'graph.matmul_integer' op expected the lhs zero point of rank 0, found tensor<2xui8>
  %r = graph.matmul_integer %a, %b, %az, %bz : (tensor<2x3xui8>, tensor<3x4xi8>, tensor<2xui8>, tensor<i8>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @negative_matmul_integer_contracting(%a: tensor<2x3xui8>, %b: tensor<5x4xi8>, %az: tensor<ui8>, %bz: tensor<i8>) {
  // CHECK: 'graph.matmul_integer' op expected contracting dims to match, found 3 (lhs tensor<2x3xi32>) and 5 (rhs tensor<5x4xi32>)
  %r = graph.matmul_integer %a, %b, %az, %bz : (tensor<2x3xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @negative_lookup_f32_input(%x: tensor<4xf32>, %t: tensor<256xf32>) {
  // CHECK: 'graph.lookup' op expected an input of element type i8 or ui8, found tensor<4xf32>
  %y = graph.lookup %x, %t : (tensor<4xf32>, tensor<256xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @negative_lookup_short_table(%x: tensor<4xi8>, %t: tensor<128xf32>) {
  // CHECK: 'graph.lookup' op expected a table of shape (256), found tensor<128xf32>
  %y = graph.lookup %x, %t : (tensor<4xi8>, tensor<128xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @negative_if_condition(%c: tensor<2xi1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.if' op expected the condition to be a one-element tensor of i1, found tensor<2xi1>
  %r = graph.if %c : tensor<2xi1> -> tensor<2xf32> {
    graph.yield %x : tensor<2xf32>
  } else {
    graph.yield %x : tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_if_branch_types(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<3xf32>) {
  // CHECK: 'graph.if' op expected the else region to yield the result types (tensor<2xf32>), found (tensor<3xf32>)
  %r = graph.if %c : tensor<i1> -> tensor<2xf32> {
    graph.yield %x : tensor<2xf32>
  } else {
    graph.yield %y : tensor<3xf32>
  }
  func.return
}

// -----

func.func @negative_if_region_arguments(%c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.if' op expected the then region to take no arguments, found 1
  %r = graph.if %c : tensor<i1> -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    graph.yield %a : tensor<2xf32>
  } else {
    graph.yield %x : tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_if_terminator(%c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.if' op expected the then region to end with graph.yield, found 'test.termop'
  %r = graph.if %c : tensor<i1> -> tensor<2xf32> {
    "test.termop"() : () -> ()
  } else {
    graph.yield %x : tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_loop_max_trip(%m: tensor<i32>, %c: tensor<i1>) {
  // CHECK: 'graph.loop' op expected max_trip to be a one-element tensor of i64, found tensor<i32>
  graph.loop (%m, %c) : (tensor<i32>, tensor<i1>) -> () {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>):
    graph.yield %ci : tensor<i1>
  }
  func.return
}

// -----

func.func @negative_loop_carried_results(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.loop' op expected the first 1 result types to be the carried types (tensor<2xf32>), found (tensor<3xf32>)
  %r = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<3xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    graph.yield %ci, %v : tensor<i1>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_loop_body_arguments(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.loop' op expected the body to take 3 arguments (iteration, condition, carried), found 2
  %r = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>):
    graph.yield %ci, %x : tensor<i1>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_loop_iteration_argument(%m: tensor<i64>, %c: tensor<i1>) {
  // CHECK: 'graph.loop' op expected the body's iteration argument to be a one-element tensor of i64, found tensor<2xi64>
  graph.loop (%m, %c) : (tensor<i64>, tensor<i1>) -> () {
  ^bb0(%i: tensor<2xi64>, %ci: tensor<i1>):
    graph.yield %ci : tensor<i1>
  }
  func.return
}

// -----

func.func @negative_loop_carried_arguments(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.loop' op expected the body's carried arguments to have the carried types (tensor<2xf32>), found (tensor<2xf16>)
  %r = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf16>):
    graph.yield %ci, %x : tensor<i1>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_loop_yield_count(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.loop' op expected the body to yield 2 values (condition, carried, scan elements), found 1
  %r = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    graph.yield %ci : tensor<i1>
  }
  func.return
}

// -----

func.func @negative_loop_yielded_condition(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.loop' op expected the body's yielded condition to be a one-element tensor of i1, found tensor<2xf32>
  %r = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    graph.yield %v, %v : tensor<2xf32>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_loop_yielded_carried(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<3xf32>) {
  // CHECK: 'graph.loop' op expected the body to yield the carried types (tensor<2xf32>), found (tensor<3xf32>)
  %r = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    graph.yield %ci, %y : tensor<i1>, tensor<3xf32>
  }
  func.return
}

// -----

func.func @negative_loop_scan_output_shape(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.loop' op expected scan output #0 to stack elements of type tensor<2xf32> along a new leading axis, found tensor<3x3xf32>
  %r = graph.loop (%m, %c) : (tensor<i64>, tensor<i1>) -> tensor<3x3xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>):
    graph.yield %ci, %x : tensor<i1>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_loop_scan_lengths(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) {
  // CHECK: 'graph.loop' op expected every scan output to have the same leading size, found [3, 4]
  %r:2 = graph.loop (%m, %c) : (tensor<i64>, tensor<i1>) -> (tensor<3x2xf32>, tensor<4x2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>):
    graph.yield %ci, %x, %x : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_recurrent_direction(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %b: tensor<1x6xf32>, %h0: tensor<1x2x3xf32>) {
  // CHECK: 'graph.rnn' op expected direction to be one of forward, reverse, bidirectional, found 'sideways'
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 {direction = "sideways", hidden_size = 3 : i64, activations = ["tanh"], activation_alpha = array<f64: 0.0>, activation_beta = array<f64: 0.0>} : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<1x6xf32>, tensor<1x2x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  func.return
}

// -----

func.func @negative_recurrent_weight_shape(%x: tensor<5x2x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>, %b: tensor<1x18xf32>, %h0: tensor<1x2x3xf32>) {
  // CHECK: 'graph.rnn' op expected w of type tensor<1x3x4xf32>, found tensor<1x9x4xf32>
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 {direction = "forward", hidden_size = 3 : i64, activations = ["tanh"], activation_alpha = array<f64: 0.0>, activation_beta = array<f64: 0.0>} : (tensor<5x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x2x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  func.return
}

// -----

func.func @negative_recurrent_activation_count(%x: tensor<5x2x4xf32>, %w: tensor<2x9x4xf32>, %r: tensor<2x9x3xf32>, %b: tensor<2x18xf32>, %h0: tensor<2x2x3xf32>) {
  // CHECK: 'graph.gru' op expected 4 activations for direction 'bidirectional', found 2
  %y, %yh = graph.gru %x, %w, %r, %b, %h0 {direction = "bidirectional", hidden_size = 3 : i64, activations = ["sigmoid", "tanh"], activation_alpha = array<f64: 0.0, 0.0>, activation_beta = array<f64: 0.0, 0.0>} : (tensor<5x2x4xf32>, tensor<2x9x4xf32>, tensor<2x9x3xf32>, tensor<2x18xf32>, tensor<2x2x3xf32>) -> (tensor<5x2x2x3xf32>, tensor<2x2x3xf32>)
  func.return
}

// -----

func.func @negative_recurrent_unknown_activation(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %b: tensor<1x6xf32>, %h0: tensor<1x2x3xf32>) {
  // CHECK: 'graph.rnn' op expected activations among relu, tanh, sigmoid, affine, leakyrelu, thresholdedrelu, scaledtanh, hardsigmoid, elu, softsign, softplus, found 'gelu'
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 {direction = "forward", hidden_size = 3 : i64, activations = ["gelu"], activation_alpha = array<f64: 0.0>, activation_beta = array<f64: 0.0>} : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<1x6xf32>, tensor<1x2x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  func.return
}

// -----

func.func @negative_recurrent_alpha_count(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %b: tensor<1x6xf32>, %h0: tensor<1x2x3xf32>) {
  // CHECK: 'graph.rnn' op expected activation_alpha to hold 1 f64 values, found array<f64: 0.000000e+00, 1.000000e+00>
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 {direction = "forward", hidden_size = 3 : i64, activations = ["tanh"], activation_alpha = array<f64: 0.0, 1.0>, activation_beta = array<f64: 0.0>} : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<1x6xf32>, tensor<1x2x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  func.return
}

// -----

func.func @negative_recurrent_clip(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %b: tensor<1x6xf32>, %h0: tensor<1x2x3xf32>) {
  // CHECK: 'graph.rnn' op expected a positive clip, found -1.0
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 {direction = "forward", hidden_size = 3 : i64, activations = ["tanh"], activation_alpha = array<f64: 0.0>, activation_beta = array<f64: 0.0>, clip = -1.0 : f64} : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<1x6xf32>, tensor<1x2x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  func.return
}

// -----

func.func @negative_recurrent_sequence_lens(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %b: tensor<1x6xf32>, %h0: tensor<1x2x3xf32>, %lens: tensor<2xi64>) {
  // CHECK: 'graph.rnn' op expected sequence_lens of type tensor<2xi32>, found tensor<2xi64>
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 seq_lens(%lens) {direction = "forward", hidden_size = 3 : i64, activations = ["tanh"], activation_alpha = array<f64: 0.0>, activation_beta = array<f64: 0.0>} : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<1x6xf32>, tensor<1x2x3xf32>, tensor<2xi64>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  func.return
}

// -----

func.func @negative_lstm_peepholes(%x: tensor<5x2x4xf32>, %w: tensor<1x12x4xf32>, %r: tensor<1x12x3xf32>, %b: tensor<1x24xf32>, %h0: tensor<1x2x3xf32>, %c0: tensor<1x2x3xf32>, %p: tensor<1x12xf32>) {
  // CHECK: 'graph.lstm' op expected p of type tensor<1x9xf32>, found tensor<1x12xf32>
  %y, %yh, %yc = graph.lstm %x, %w, %r, %b, %h0, %c0, %p {direction = "forward", hidden_size = 3 : i64, activations = ["sigmoid", "tanh", "tanh"], activation_alpha = array<f64: 0.0, 0.0, 0.0>, activation_beta = array<f64: 0.0, 0.0, 0.0>} : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x12xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  func.return
}

// -----

func.func @negative_recurrent_result(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>, %b: tensor<1x6xf32>, %h0: tensor<1x2x3xf32>) {
  // CHECK: 'graph.rnn' op expected result types tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, found tensor<5x2x3xf32>, tensor<1x2x3xf32>
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 {direction = "forward", hidden_size = 3 : i64, activations = ["tanh"], activation_alpha = array<f64: 0.0>, activation_beta = array<f64: 0.0>} : (tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32>, tensor<1x6xf32>, tensor<1x2x3xf32>) -> (tensor<5x2x3xf32>, tensor<1x2x3xf32>)
  func.return
}

// -----

func.func @broadcast_to_runtime_unsized(%t: tensor<1x?xi64>) {
  // CHECK: 'graph.broadcast_to' op expected an operand sizing the runtime dims of the target [1, -1], found none
  %r = graph.broadcast_to %t {shape = array<i64: 1, -1>} : (tensor<1x?xi64>) -> tensor<1x?xi64>
  func.return
}

// -----

func.func @broadcast_to_runtime_static_sizing(%t: tensor<1x1xi64>, %ids: tensor<2x7xi64>) {
  // CHECK: 'graph.broadcast_to' op expected a sizing operand of rank at most 2 with runtime dims where the target [2, -1] has -1 and the operand tensor<1x1xi64> has none, found tensor<2x7xi64>
  %r = graph.broadcast_to %t, %ids {shape = array<i64: 2, -1>} : (tensor<1x1xi64>, tensor<2x7xi64>) -> tensor<2x?xi64>
  func.return
}

// -----

func.func @broadcast_to_runtime_sized_by_a_higher_rank(%t: tensor<1x1xi64>, %ids: tensor<1x2x?xi64>) {
  // CHECK: 'graph.broadcast_to' op expected a sizing operand of rank at most 2 with runtime dims where the target [2, -1] has -1 and the operand tensor<1x1xi64> has none, found tensor<1x2x?xi64>
  %r = graph.broadcast_to %t, %ids {shape = array<i64: 2, -1>} : (tensor<1x1xi64>, tensor<1x2x?xi64>) -> tensor<2x?xi64>
  func.return
}

// -----

func.func @broadcast_to_runtime_moved(%t: tensor<?x1xi64>, %ids: tensor<2x?xi64>) {
  // CHECK: 'graph.broadcast_to' op expected tensor<?x1xi64> to have runtime dims only where the target [2, -1] has -1
  %r = graph.broadcast_to %t, %ids {shape = array<i64: 2, -1>} : (tensor<?x1xi64>, tensor<2x?xi64>) -> tensor<2x?xi64>
  func.return
}

// -----

func.func @resize_sized_by_another_rank(%y: tensor<?x2x?x?xf32>, %s: tensor<?x?xf32>) {
  // CHECK: 'graph.resize' op expected a sizing operand of rank 4, found tensor<?x?xf32>
  %u = graph.resize %y, %s {sizes = array<i64: -1, 2, -1, -1>, scales = array<f64: 1.0, 1.0, 1.0, 1.0>, mode = "linear"} : (tensor<?x2x?x?xf32>, tensor<?x?xf32>) -> tensor<?x2x?x?xf32>
  func.return
}

// -----

func.func @resize_sized_cubic(%y: tensor<1x2x4x4xf32>, %s: tensor<1x2x?x?xf32>) {
  // CHECK: 'graph.resize' op expected mode nearest or linear, without antialias, exclude_outside or a crop, for the axes [2, 3] sized by tensor<1x2x?x?xf32>, found mode 'cubic', coordinate mode 'half_pixel'
  %u = graph.resize %y, %s {sizes = array<i64: 1, 2, -1, -1>, scales = array<f64: 1.0, 1.0, 1.0, 1.0>, mode = "cubic"} : (tensor<1x2x4x4xf32>, tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  func.return
}

// -----

func.func @conv_transpose2d_runtime_channels(%x: tensor<1x?x4x4xf32>, %w: tensor<4x3x2x2xf32>) {
  // CHECK: 'graph.conv_transpose2d' op expected the channels to be a static dim of tensor<1x?x4x4xf32>, found axis 1
  %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x?x4x4xf32>, tensor<4x3x2x2xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

func.func @resize_sized_and_scaled(%y: tensor<1x2x4x5xf32>, %s: tensor<1x3x?x?xf32>) {
  // CHECK: 'graph.resize' op expected the axes not sized by tensor<1x3x?x?xf32> kept (their size x's, scale 1) beside the axes [2, 3] it sizes, found sizes [1, 4, -1, -1], scales [1.0, 2.0, 1.0, 1.0] for tensor<1x2x4x5xf32>
  %u = graph.resize %y, %s {sizes = array<i64: 1, 4, -1, -1>, scales = array<f64: 1.0, 2.0, 1.0, 1.0>, mode = "linear"} : (tensor<1x2x4x5xf32>, tensor<1x3x?x?xf32>) -> tensor<1x4x?x?xf32>
  func.return
}
