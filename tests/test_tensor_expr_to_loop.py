"""convert-tensor-expr-to-loop, run: tensor_expr functions lowered to loops and executed by the loop
interpreter (and JIT-compiled through convert-loop-to-llvm) against NumPy and the tensor_expr
evaluator; the structure epilogue fusion promises; the loop interpreter's own checks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop import AllocOp, BlockOp, ForOp
from dlc.dialects.loop.interpreter import LoopInterpreter, LoopInterpreterError, run_function
from dlc.dialects.tensor_expr import ComputeOp
from dlc.rewrites.convert_tensor_expr_to_loop import ConvertTensorExprToLoopPass, axis_names
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

import dlc

RNG = np.random.default_rng(20261129)


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def to_loops(module: ModuleOp, fuse_epilogue: bool = True) -> ModuleOp:
    """A lowered, verified copy of `module` that also survives printing and parsing again."""
    lowered = module.clone()
    ConvertTensorExprToLoopPass(fuse_epilogue=fuse_epilogue).apply(make_context(), lowered)
    lowered.verify()
    leftovers = {op.name for op in lowered.walk() if op.name.startswith("tensor_expr.")}
    assert not leftovers, leftovers
    parse(str(lowered))
    return lowered


def function(module: ModuleOp, name: str) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == name)


def tensor_expr_reference(module: ModuleOp, name: str, inputs: Sequence[np.ndarray]) -> list:
    """The tensor_expr evaluator's results, when that evaluator is in this checkout."""
    evaluator = pytest.importorskip("dlc.dialects.tensor_expr.interpreter")
    return evaluator.run_module(module, list(inputs), name)


def random(shape: Sequence[int], dtype: type = np.float32) -> np.ndarray:
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-5, 6, size=tuple(shape)).astype(dtype)
    return RNG.standard_normal(tuple(shape)).astype(dtype)


# ------------------------------------------------------------------------------------------
# tensor_expr functions
# ------------------------------------------------------------------------------------------


def matmul_bias_relu(m: int, n: int, k: int) -> str:
    return f"""
func.func @f(%A: tensor<{m}x{k}xf32>, %B: tensor<{k}x{n}xf32>, %bias: tensor<{n}xf32>)
    -> tensor<{m}x{n}xf32> {{
  %c = tensor_expr.compute "matmul" reduce [{k}] sum init 0.0 : f32 -> tensor<{m}x{n}xf32> {{
  ^bb0(%i: index, %j: index, %k: index):
    %a = tensor_expr.read %A[%i, %k] : tensor<{m}x{k}xf32>
    %b = tensor_expr.read %B[%k, %j] : tensor<{k}x{n}xf32>
    %p = arith.mulf %a, %b : f32
    tensor_expr.yield %p : f32
  }}
  %r = tensor_expr.compute "bias_relu" -> tensor<{m}x{n}xf32> {{
  ^bb0(%i: index, %j: index):
    %x = tensor_expr.read %c[%i, %j] : tensor<{m}x{n}xf32>
    %b = tensor_expr.read %bias[%j] : tensor<{n}xf32>
    %s = arith.addf %x, %b : f32
    %zero = arith.constant 0.0 : f32
    %y = arith.maximumf %s, %zero : f32
    tensor_expr.yield %y : f32
  }}
  func.return %r : tensor<{m}x{n}xf32>
}}
"""


def conv_bias_relu(c: int, h: int, w: int, f: int, kh: int, kw: int) -> str:
    """A 3x3-style NCHW conv with padding 1 (clamped reads and a select), bias and relu."""
    oh, ow = h + 2 - kh + 1, w + 2 - kw + 1
    x, wt, out = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<{f}x{c}x{kh}x{kw}xf32>", \
        f"tensor<1x{f}x{oh}x{ow}xf32>"
    return f"""
func.func @f(%X: {x}, %W: {wt}, %bias: tensor<{f}xf32>) -> {out} {{
  %conv = tensor_expr.compute "conv2d" tag "conv2d_nchw" reduce [{c}, {kh}, {kw}] sum init 0.0 : f32
      -> {out} {{
  ^bb0(%n: index, %o: index, %y: index, %x: index, %rc: index, %ry: index, %rx: index):
    %c1 = arith.constant 1 : index
    %ys = arith.addi %y, %ry : index
    %xs = arith.addi %x, %rx : index
    %ylo = arith.cmpi uge, %ys, %c1 : index
    %xlo = arith.cmpi uge, %xs, %c1 : index
    %ch = arith.constant {h} : index
    %cw = arith.constant {w} : index
    %yhi = arith.cmpi ule, %ys, %ch : index
    %xhi = arith.cmpi ule, %xs, %cw : index
    %in1 = arith.andi %ylo, %xlo : i1
    %in2 = arith.andi %yhi, %xhi : i1
    %in = arith.andi %in1, %in2 : i1
    %c0 = arith.constant 0 : index
    %ym = arith.maxsi %ys, %c1 : index
    %xm = arith.maxsi %xs, %c1 : index
    %yc = arith.minsi %ym, %ch : index
    %xc = arith.minsi %xm, %cw : index
    %yi = arith.subi %yc, %c1 : index
    %xi = arith.subi %xc, %c1 : index
    %v = tensor_expr.read %X[%n, %rc, %yi, %xi] : {x}
    %zero = arith.constant 0.0 : f32
    %vp = arith.select %in, %v, %zero : f32
    %k = tensor_expr.read %W[%o, %rc, %ry, %rx] : {wt}
    %p = arith.mulf %vp, %k : f32
    tensor_expr.yield %p : f32
  }}
  %relu = tensor_expr.compute "bias_relu" tag "injective" -> {out} {{
  ^bb0(%n: index, %o: index, %y: index, %x: index):
    %v = tensor_expr.read %conv[%n, %o, %y, %x] : {out}
    %b = tensor_expr.read %bias[%o] : tensor<{f}xf32>
    %s = arith.addf %v, %b : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %zero : f32
    tensor_expr.yield %r : f32
  }}
  func.return %relu : {out}
}}
"""


def conv_reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    _, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = h + 3 - kh, wd + 3 - kw
    out = np.zeros((1, f, oh, ow))
    for ry in range(kh):
        for rx in range(kw):
            window = padded[:, :, ry:ry + oh, rx:rx + ow]
            out += np.einsum("nchw,fc->nfhw", window, w[:, :, ry, rx].astype(np.float64))
    return np.maximum(out + bias[None, :, None, None], 0)


def reduction(combiner: str, element: str, init: str) -> str:
    return f"""
func.func @f(%x: tensor<3x5x{element}>) -> tensor<3x{element}> {{
  %r = tensor_expr.compute "{combiner}" reduce [5] {combiner} init {init} : {element}
      -> tensor<3x{element}> {{
  ^bb0(%i: index, %k: index):
    %v = tensor_expr.read %x[%i, %k] : tensor<3x5x{element}>
    tensor_expr.yield %v : {element}
  }}
  func.return %r : tensor<3x{element}>
}}
"""


CALLS_CONSTANTS_OUTPUTS = """
func.func private @affine(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %w = arith.constant dense<[[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]]> : tensor<2x3xf32>
  %y = tensor_expr.compute "scale" -> tensor<2x3xf32> {
  ^bb0(%i: index, %j: index):
    %a = tensor_expr.read %x[%i, %j] : tensor<2x3xf32>
    %b = tensor_expr.read %w[%i, %j] : tensor<2x3xf32>
    %c = arith.mulf %a, %b : f32
    tensor_expr.yield %c : f32
  }
  %s = tensor_expr.compute "colsum" reduce [2] sum init 0.0 : f32 -> tensor<3xf32> {
  ^bb0(%j: index, %i: index):
    %a = tensor_expr.read %y[%i, %j] : tensor<2x3xf32>
    tensor_expr.yield %a : f32
  }
  func.return %y, %s : tensor<2x3xf32>, tensor<3xf32>
}

func.func @main(%x: tensor<2x3xf32>, %t: tensor<f32>)
    -> (tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>) {
  %y, %s = func.call @affine(%x) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  %y2, %s2 = func.call @affine(%y) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  %shifted = tensor_expr.compute "shift" -> tensor<3xf32> {
  ^bb0(%j: index):
    %a = tensor_expr.read %s2[%j] : tensor<3xf32>
    %u = tensor_expr.read %t[] : tensor<f32>
    %b = arith.addf %a, %u : f32
    tensor_expr.yield %b : f32
  }
  func.return %shifted, %x, %y2, %s : tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
      tensor<3xf32>
}
"""

W_AFFINE = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], dtype=np.float32)


def affine_reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = x * W_AFFINE
    return y, y.sum(axis=0)


# ------------------------------------------------------------------------------------------
# Results: loop interpreter vs NumPy and the tensor_expr evaluator
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fuse", [True, False])
def test_matmul_bias_relu(fuse: bool) -> None:
    module = parse(matmul_bias_relu(3, 5, 4))
    a, b, bias = random((3, 4)), random((4, 5)), random((5,))
    (out,) = run_function(to_loops(module, fuse), "f", [a, b, bias])
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-6)
    (expected,) = tensor_expr_reference(module, "f", [a, b, bias])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_conv_bias_relu_fused_equals_unfused_and_numpy() -> None:
    module = parse(conv_bias_relu(2, 5, 4, 3, 3, 3))
    x, w, bias = random((1, 2, 5, 4)), random((3, 2, 3, 3)), random((3,))
    (fused,) = run_function(to_loops(module, True), "f", [x, w, bias])
    (unfused,) = run_function(to_loops(module, False), "f", [x, w, bias])
    np.testing.assert_array_equal(fused, unfused)  # same operations in the same order
    np.testing.assert_allclose(fused, conv_reference(x, w, bias), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("combiner", "element", "init", "reference"),
    [
        ("sum", "f32", "0.5", lambda x: 0.5 + x.sum(axis=1)),
        ("prod", "f32", "2.0", lambda x: 2.0 * x.prod(axis=1)),
        ("max", "f32", "0xFF800000", lambda x: x.max(axis=1)),
        ("min", "f32", "0.0", lambda x: np.minimum(0.0, x.min(axis=1))),
        ("sum", "i32", "7", lambda x: 7 + x.sum(axis=1)),
        ("prod", "i32", "1", lambda x: x.prod(axis=1)),
        ("max", "i32", "-3", lambda x: np.maximum(-3, x.max(axis=1))),
        ("min", "i32", "2", lambda x: np.minimum(2, x.min(axis=1))),
    ],
)
def test_reduction_combiners(combiner: str, element: str, init: str, reference) -> None:
    dtype = np.float32 if element == "f32" else np.int32
    x = random((3, 5), dtype)
    (out,) = run_function(to_loops(parse(reduction(combiner, element, init))), "f", [x])
    assert out.dtype == dtype
    np.testing.assert_allclose(out, reference(x).astype(dtype), rtol=1e-5)


def test_calls_constants_and_outputs() -> None:
    module = parse(CALLS_CONSTANTS_OUTPUTS)
    x, t = random((2, 3)), np.array(0.75, dtype=np.float32)
    outputs = run_function(to_loops(module), "main", [x, t])
    y, s = affine_reference(x)
    y2, s2 = affine_reference(y)
    expected = [s2 + t, x, y2, s]
    assert [o.shape for o in outputs] == [e.shape for e in expected]
    for out, want in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(out, want, rtol=1e-6)


def test_calls_allocate_and_free_the_callee_outputs() -> None:
    lowered = to_loops(parse(CALLS_CONSTANTS_OUTPUTS))
    main = function(lowered, "main")
    allocs = [op for op in main.walk() if isinstance(op, AllocOp)]
    assert [a.scope.data for a in allocs] == ["global"] * len(allocs)
    # the caller allocates y (first call) and s2 (second call); s, y2 are returned: outputs
    assert len(allocs) == 2
    deallocated = {op.operands[0] for op in main.walk() if op.name == "loop.dealloc"}
    assert deallocated == {a.result for a in allocs}
    assert main.attributes["dlc.num_outputs"].value.data == 4  # type: ignore[attr-defined]
    globals_ = [op for op in lowered.ops if op.name == "memref.global"]
    assert len(globals_) == 1  # the constant of @affine, once


# ------------------------------------------------------------------------------------------
# Structure: one nest per compute, epilogue fusion
# ------------------------------------------------------------------------------------------


def top_level_nests(module: ModuleOp, name: str) -> list[ForOp]:
    return [op for op in function(module, name).body.block.ops if isinstance(op, ForOp)]


def test_conv_bias_relu_is_one_nest_writing_one_buffer() -> None:
    lowered = to_loops(parse(conv_bias_relu(2, 4, 4, 3, 3, 3)))
    (nest,) = top_level_nests(lowered, "f")
    allocs = [op for op in function(lowered, "f").walk() if isinstance(op, AllocOp)]
    assert [(a.scope.data, a.result.type.get_shape()) for a in allocs] == [("local", (1,))]
    blocks = [op for op in nest.walk() if isinstance(op, BlockOp)]
    assert [b.block_name.data for b in blocks] == ["conv2d_init", "conv2d", "bias_relu"]
    out = function(lowered, "f").body.block.args[-1]
    global_writes = {w for b in blocks for w in b.writes if w.owner is not allocs[0]}
    assert global_writes == {out}


def test_fusion_off_keeps_two_nests() -> None:
    lowered = to_loops(parse(conv_bias_relu(2, 4, 4, 3, 3, 3)), fuse_epilogue=False)
    assert len(top_level_nests(lowered, "f")) == 2
    allocs = [op for op in function(lowered, "f").walk() if isinstance(op, AllocOp)]
    assert [a.scope.data for a in allocs] == ["global"]


def test_scalar_arguments_stay_scalars() -> None:
    text = """
func.func @f(%x: tensor<3xf32>, %alpha: f32) -> tensor<3xf32> {
  %two = arith.constant 2.0 : f32
  %scale = arith.mulf %alpha, %two : f32
  %y = tensor_expr.compute "scale" -> tensor<3xf32> {
  ^bb0(%i: index):
    %a = tensor_expr.read %x[%i] : tensor<3xf32>
    %b = arith.mulf %a, %scale : f32
    tensor_expr.yield %b : f32
  }
  func.return %y : tensor<3xf32>
}
"""
    x = random((3,))
    (out,) = run_function(to_loops(parse(text)), "f", [x, np.float32(1.5)])
    np.testing.assert_allclose(out, x * np.float32(3.0), rtol=1e-6)


def test_axis_names_come_from_the_body_or_are_generic() -> None:
    unnamed = reduction("sum", "f32", "0.0").replace("@f", "@g").replace(
        "^bb0(%i: index, %k: index)", "^bb0(%0: index, %1: index)").replace("[%i, %k]", "[%0, %1]")
    module = parse(matmul_bias_relu(2, 2, 2) + unnamed)
    computes = [op for op in module.walk() if isinstance(op, ComputeOp)]
    assert axis_names(computes[0]) == (["i", "j"], ["k"])
    assert axis_names(computes[2]) == (["i0"], ["r0"])
    lowered = to_loops(module)
    loops = [op.axis.data for op in function(lowered, "g").walk() if isinstance(op, ForOp)]
    assert loops == ["i0", "r0"]


# ------------------------------------------------------------------------------------------
# Property tests on random shapes
# ------------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 4), n=st.integers(1, 4), k=st.integers(1, 5), fuse=st.booleans())
def test_random_matmul_shapes_interpreted(m: int, n: int, k: int, fuse: bool) -> None:
    a, b, bias = random((m, k)), random((k, n)), random((n,))
    (out,) = run_function(to_loops(parse(matmul_bias_relu(m, n, k)), fuse), "f", [a, b, bias])
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-6)


@settings(max_examples=6, deadline=None)
@given(c=st.integers(1, 3), h=st.integers(2, 5), w=st.integers(2, 5), f=st.integers(1, 3),
       kh=st.integers(1, 3), kw=st.integers(1, 3))
def test_random_conv_shapes_interpreted(c: int, h: int, w: int, f: int, kh: int, kw: int) -> None:
    x, wt, bias = random((1, c, h, w)), random((f, c, kh, kw)), random((f,))
    (out,) = run_function(to_loops(parse(conv_bias_relu(c, h, w, f, kh, kw))), "f", [x, wt, bias])
    np.testing.assert_allclose(out, conv_reference(x, wt, bias), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------
# JIT: the lowered functions through convert-loop-to-llvm and the runtime
# ------------------------------------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, 24), n=st.integers(1, 24), k=st.integers(1, 40), fuse=st.booleans())
def test_random_matmul_shapes_jit(m: int, n: int, k: int, fuse: bool) -> None:
    a, b, bias = random((m, k)), random((k, n)), random((n,))
    run = dlc.compile(to_loops(parse(matmul_bias_relu(m, n, k)), fuse))
    np.testing.assert_allclose(run(a, b, bias), np.maximum(a @ b + bias, 0), rtol=1e-4,
                               atol=1e-5)


@settings(max_examples=6, deadline=None)
@given(c=st.integers(1, 4), h=st.integers(2, 9), w=st.integers(2, 9), f=st.integers(1, 5),
       kh=st.integers(1, 3), kw=st.integers(1, 3), fuse=st.booleans())
def test_random_conv_shapes_jit(
    c: int, h: int, w: int, f: int, kh: int, kw: int, fuse: bool
) -> None:
    x, wt, bias = random((1, c, h, w)), random((f, c, kh, kw)), random((f,))
    run = dlc.compile(to_loops(parse(conv_bias_relu(c, h, w, f, kh, kw)), fuse))
    np.testing.assert_allclose(run(x, wt, bias), conv_reference(x, wt, bias), rtol=1e-4,
                               atol=1e-5)


def test_calls_constants_and_outputs_jit() -> None:
    x, t = random((2, 3)), np.array(-1.5, dtype=np.float32)
    lowered = to_loops(parse(CALLS_CONSTANTS_OUTPUTS))
    interpreted = run_function(lowered, "main", [x, t])
    for got, want in zip(dlc.compile(lowered, entry="main")(x, t), interpreted, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(("combiner", "init"), [("sum", "3"), ("max", "-100"), ("min", "100"),
                                                 ("prod", "1")])
def test_integer_reductions_jit(combiner: str, init: str) -> None:
    x = random((3, 5), np.int32)
    lowered = to_loops(parse(reduction(combiner, "i32", init)))
    (expected,) = run_function(lowered, "f", [x])
    np.testing.assert_array_equal(dlc.compile(lowered)(x), expected)


# ------------------------------------------------------------------------------------------
# Diagnostics
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("func.func @f(%x: tensor<*xf32>) -> tensor<4xf32> {\n"
         "  %c = arith.constant dense<0.0> : tensor<4xf32>\n  func.return %c : tensor<4xf32>\n}",
         "'func.func' op expected ranked tensors or scalars as the arguments of @f, found "
         "tensor<*xf32>"),
        ("func.func @f(%x: tensor<4xf32>) -> f32 {\n  %c = arith.constant 0.0 : f32\n"
         "  func.return %c : f32\n}",
         "'func.func' op expected ranked tensors as the results of @f, found f32"),
        ("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %y = tensor.empty() : tensor<4xf32>\n  func.return %y : tensor<4xf32>\n}",
         "'tensor.empty' op expected one of tensor_expr.compute"),
        ('"memref.global"() <{sym_name = "g", sym_visibility = "private", '
         'type = memref<4xf32>, initial_value = unit}> : () -> ()',
         "'memref.global' op expected only func.func at the top level of the module"),
    ],
)
def test_bad_input_fails_naming_the_op(text: str, message: str) -> None:
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(PassFailedException) as info:
        ConvertTensorExprToLoopPass().apply(make_context(), module)
    assert message in str(info.value)


# ------------------------------------------------------------------------------------------
# The loop interpreter's own checks
# ------------------------------------------------------------------------------------------

LOOP_FUNCTION = """
memref.global "private" constant @k : memref<2xf32> = dense<[1.0, 2.0]>
func.func @f(%x: memref<4xf32>, %out: memref<4xf32>) attributes {{dlc.num_outputs = 1 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %k = memref.get_global @k : memref<2xf32>
  %t = loop.alloc global : memref<4xf32>
  {body}
  func.return
}}
"""


def run_loop_body(body: str) -> np.ndarray:
    text = LOOP_FUNCTION.format(body=body).replace(
        'memref.global "private" constant @k : memref<2xf32> = dense<[1.0, 2.0]>',
        '"memref.global"() <{sym_name = "k", sym_visibility = "private", type = memref<2xf32>, '
        "initial_value = dense<[1.0, 2.0]> : tensor<2xf32>, constant}> : () -> ()",
    )
    (out,) = run_function(parse(text), "f", [np.arange(4, dtype=np.float32)])
    return out


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("loop.for %i = %c0 to %c4 step %c1 axis \"i\" {\n"
         "  %v = loop.load %k[%i] : memref<2xf32> -> f32\n}",
         "out of bounds: index #0 is 2, expected [0, 1]"),
        ("%v = loop.load %x[%c1] : memref<4xf32> -> vector<4xf32>", "index #0 is 1..4"),
        ("%v = loop.load %x[%c0] : memref<4xf32> -> f32\n"
         "loop.store %v, %k[%c0] : f32 -> memref<2xf32>", "stores into a constant"),
        ("loop.dealloc %t : memref<4xf32>\n%v = loop.load %t[%c0] : memref<4xf32> -> f32",
         "after its dealloc"),
        ("loop.dealloc %t : memref<4xf32>\nloop.dealloc %t : memref<4xf32>", "twice"),
    ],
)
def test_interpreter_reports_undefined_behaviour(body: str, error: str) -> None:
    with pytest.raises(LoopInterpreterError, match=error.replace("[", r"\[").replace("]", r"\]")
                       .replace(".", r"\.")):
        run_loop_body(body)


def test_interpreter_unwritten_output_reads_nan_and_vectors_work() -> None:
    out = run_loop_body(
        "%v = loop.load %x[%c0] : memref<4xf32> -> vector<2xf32>\n"
        "%w = loop.load %k[%c0] : memref<2xf32> -> vector<2xf32>\n"
        "%s = arith.mulf %v, %w : vector<2xf32>\n"
        "loop.store %s, %out[%c1] : vector<2xf32> -> memref<4xf32>"
    )
    np.testing.assert_array_equal(out, [np.nan, 0.0, 2.0, np.nan])


def test_interpreter_integer_semantics() -> None:
    text = """
func.func @f(%a: i8, %b: i8) -> (i8, i8, i8, i8, i1, i32) {
  %sum = arith.addi %a, %b : i8
  %q = arith.divsi %a, %b : i8
  %r = arith.remsi %a, %b : i8
  %u = arith.divui %a, %b : i8
  %lt = arith.cmpi ult, %a, %b : i8
  %e = arith.extsi %lt : i1 to i32
  func.return %sum, %q, %r, %u, %lt, %e : i8, i8, i8, i8, i1, i32
}
"""
    results = LoopInterpreter(parse(text)).call("f", [np.int8(-7), np.int8(2)])
    # -7 + 2 wraps nowhere; -7 / 2 rounds toward zero; 249 / 2 = 124 unsigned; 249 <u 2 is false
    assert [int(v) for v in results] == [-5, -3, -1, 124, 0, 0]
    wrapped = LoopInterpreter(parse(text)).call("f", [np.int8(127), np.int8(1)])
    assert int(wrapped[0]) == -128
