"""loop-fold-constant-nests: the packing of constant weights that the default schedules make
(GEMM's B panels, conv2d's OIHW panels, with zero past the last panel) is evaluated at compile
time, and the scheduled program computes the same with the packed constants as without them
(the loop interpreter runs both); whole-nest evaluation agrees with the scalar interpreter."""

from __future__ import annotations

import re

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop.evaluate import _distinct_addresses, evaluate_nest
from dlc.dialects.loop.interpreter import LoopInterpreter, run_function
from dlc.dialects.loop.ops import AllocOp, ForOp
from dlc.pipelines import parse_pipeline
from dlc.rewrites.loop_fold_constant_nests import LoopFoldConstantNestsPass
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

RNG = np.random.default_rng(20261129)

SCHEDULED = (
    "graph-fuse-ops,convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,"
    "loop-dedup-functions,loop-default-schedule{threads=1}"
)


def constant(array: np.ndarray) -> str:
    shape = "x".join(map(str, array.shape))
    return f'graph.constant dense<"0x{array.astype("<f4").tobytes().hex().upper()}"> : ' \
        f"tensor<{shape}xf32>"


def scheduled(text: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    PassPipeline(parse_pipeline(SCHEDULED)).apply(ctx, module)
    return module


def allocs(module: ModuleOp) -> int:
    return sum(1 for op in module.walk() if isinstance(op, AllocOp) and "packed" in (
        op.result.name_hint or ""))


def check_folding(text: str, inputs: list[np.ndarray]) -> ModuleOp:
    module = scheduled(text)
    assert allocs(module) > 0, "the schedule packs a weight"
    expected = run_function(module, "f", inputs)
    folded = module.clone()
    LoopFoldConstantNestsPass().apply(make_context(), folded)
    folded.verify()
    assert allocs(folded) == 0, "every packing of a constant is folded"
    for got, want in zip(run_function(folded, "f", inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    return folded


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 4), k=st.integers(2, 6), n=st.sampled_from([33, 40, 64]))
def test_gemm_weight_panels_fold(m: int, k: int, n: int) -> None:
    b = RNG.standard_normal((k, n), dtype=np.float32)
    a_type, c_type = f"tensor<{m}x{k}xf32>", f"tensor<{m}x{n}xf32>"
    text = f"""
func.func @f(%a: {a_type}) -> {c_type} {{
  %b = {constant(b)}
  %c = graph.matmul %a, %b : ({a_type}, tensor<{k}x{n}xf32>) -> {c_type}
  func.return %c : {c_type}
}}
"""
    a = RNG.standard_normal((m, k), dtype=np.float32)
    folded = check_folding(text, [a])
    (got,) = run_function(folded, "f", [a])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def conv_text(weight: np.ndarray, size: int, stride: int) -> str:
    oc, ic, kh, kw = weight.shape
    out = (size + 2 - kh) // stride + 1
    x_type, y_type = f"tensor<1x{ic}x{size}x{size}xf32>", f"tensor<1x{oc}x{out}x{out}xf32>"
    return f"""
func.func @f(%x: {x_type}) -> {y_type} {{
  %w = {constant(weight)}
  %c = graph.conv2d %x, %w {{strides = array<i64: {stride}, {stride}>,
      padding = array<i64: 1, 1, 1, 1>}} : ({x_type}, tensor<{oc}x{ic}x{kh}x{kw}xf32>) -> {y_type}
  %y = graph.relu %c : {y_type}
  func.return %y : {y_type}
}}
"""


def test_conv_channel_panels_fold() -> None:
    """A strided conv2d and a 7-wide one with enough input channels that its fuller lanes pay
    for the transposed epilogue (both vectorized over output channels, with the weight packed
    into [OC/NR][IC][KH][KW][NR] panels, the last one partly zero)."""
    for weight, size, stride in [
        (RNG.standard_normal((40, 3, 3, 3), dtype=np.float32), 9, 2),
        (RNG.standard_normal((48, 16, 3, 3), dtype=np.float32), 7, 1),
    ]:
        x = RNG.standard_normal((1, weight.shape[1], size, size), dtype=np.float32)
        check_folding(conv_text(weight, size, stride), [x])


def test_packing_of_a_reshaped_constant_folds() -> None:
    """A channels-last 1x1 conv packs its HWIO weight through a `memref.collapse_shape` of it
    (`[1, 1, IC, OC]` seen as `[IC, OC]`): the pack folds all the same (the view's array is
    the constant reshaped), and the view goes with it."""
    weight = RNG.standard_normal((1, 1, 12, 40), dtype=np.float32)
    x_type, y_type = "tensor<1x5x5x12xf32>", "tensor<1x5x5x40xf32>"
    text = f"""
func.func @f(%x: {x_type}) -> {y_type} {{
  %w = {constant(weight)}
  %c = graph.conv2d %x, %w {{layout = "NHWC", kernel_layout = "HWIO"}}
      : ({x_type}, tensor<1x1x12x40xf32>) -> {y_type}
  %y = graph.relu %c : {y_type}
  func.return %y : {y_type}
}}
"""
    x = RNG.standard_normal((1, 5, 5, 12), dtype=np.float32)
    assert "memref<1x1x12x40xf32> into memref<12x40xf32>" in str(scheduled(text))
    folded = check_folding(text, [x])
    assert "memref<1x1x12x40xf32> into" not in str(folded)
    (got,) = run_function(folded, "f", [x])
    expected = np.maximum(np.einsum("nhwc,co->nhwo", x, weight[0, 0]), 0)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_folded_packings_are_named_as_an_assembler_takes_them() -> None:
    """A folded packing's global is named after its weight, whose name comes from the ONNX
    model ('.', '-', '/' in it: RegNet's "trunk_output.block4.block4-1.f.se.fc2.weight"):
    only letters, digits and '_' remain, so that an exported library's weights assemble."""
    weight = RNG.standard_normal((40, 16, 3, 3), dtype=np.float32)
    text = conv_text(weight, 7, 1).replace("%w", "%block4-1.f.w")
    folded = check_folding(text, [RNG.standard_normal((1, 16, 7, 7), dtype=np.float32)])
    names = [op.sym_name.data for op in folded.walk() if isinstance(op, memref.GlobalOp)]
    assert any("block4_1_f_w" in name for name in names), names
    assert all(re.fullmatch(r"[A-Za-z_]\w*", name) for name in names), names


def test_kernel_with_a_non_constant_weight_keeps_its_packing() -> None:
    text = """
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x40xf32>) -> tensor<4x40xf32> {
  %c = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x40xf32>) -> tensor<4x40xf32>
  func.return %c : tensor<4x40xf32>
}
"""
    module = scheduled(text)
    before = allocs(module)
    LoopFoldConstantNestsPass().apply(make_context(), module)
    assert before > 0 and allocs(module) == before


_RUNNING_SUM = """
"memref.global"() <{sym_name = "w", type = memref<4xi32>,
                    initial_value = dense<[1, 2, 3, 4]> : tensor<4xi32>,
                    sym_visibility = "private", constant}> : () -> ()
func.func @f(%out: memref<4xi32>) attributes {dlc.num_outputs = 1 : i64} {
  %w = memref.get_global @w : memref<4xi32>
  func.call @k(%w, %out) : (memref<4xi32>, memref<4xi32>) -> ()
  func.return
}
func.func private @k(%w: memref<4xi32>, %out: memref<4xi32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = loop.alloc global : memref<4xi32>
  loop.for %z = %c0 to %c4 step %c1 axis "z" {
    loop.block "zero" reads() writes(%s : memref<4xi32>) {
      %zero = arith.constant 0 : i32
      loop.store %zero, %s[%z] : i32 -> memref<4xi32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "STEP" reads(%w, %s : memref<4xi32>, memref<4xi32>) writes(%s : memref<4xi32>) {
      BODY
    }
  }
  loop.for %j = %c0 to %c4 step %c1 axis "j" {
    loop.block "copy" reads(%s : memref<4xi32>) writes(%out : memref<4xi32>) {
      %v = loop.load %s[%j] : memref<4xi32> -> i32
      loop.store %v, %out[%j] : i32 -> memref<4xi32>
    }
  }
  loop.dealloc %s : memref<4xi32>
  func.return
}
"""


@pytest.mark.parametrize(("body", "folds"), [
    # s[0] = w[0] + ... : every step adds to the one element it loads (an accumulation)
    ("""%a = loop.load %s[%c0] : memref<4xi32> -> i32
      %b = loop.load %w[%i] : memref<4xi32> -> i32
      %t = arith.addi %a, %b : i32
      loop.store %t, %s[%c0] : i32 -> memref<4xi32>""", True),
    # s[i] = s[i - 1] + w[i]: a recurrence, which whole-nest evaluation cannot run
    ("""%p = arith.subi %i, %c1 : index
      %q = arith.maxsi %p, %c0 : index
      %a = loop.load %s[%q] : memref<4xi32> -> i32
      %b = loop.load %w[%i] : memref<4xi32> -> i32
      %t = arith.addi %a, %b : i32
      loop.store %t, %s[%i] : i32 -> memref<4xi32>""", False),
])
def test_only_accumulations_of_a_nest_into_its_own_buffer_fold(body: str, folds: bool) -> None:
    """A nest that reads the buffer it fills folds only where each such read feeds an add
    stored back at the same element (its serial result is the sum); a running sum over a
    constant (`s[i - 1]`) keeps its nest. Either way the function computes what it did."""
    text = _RUNNING_SUM.replace("BODY", body).replace("STEP", "step")
    module = Parser(make_context(), text).parse_module()
    before = run_function(module, "f", [])
    LoopFoldConstantNestsPass().apply(make_context(), module)
    module.verify()
    remaining = [op for op in module.walk() if isinstance(op, AllocOp)]
    assert (not remaining) == folds
    for got, want in zip(run_function(module, "f", []), before, strict=True):
        np.testing.assert_array_equal(got, want)


def index_constants(function: func.FuncOp) -> dict:
    """The values of the `index` constants at the top of `function`'s body."""
    return {op.results[0]: int(op.value.value.data)  # type: ignore[attr-defined]
            for op in function.body.block.ops if op.name == "arith.constant"}


def test_whole_nest_evaluation_matches_the_interpreter() -> None:
    """Each pack nest of a scheduled GEMM, run by `evaluate_nest` and by the scalar loop
    interpreter on the same weight, fills its buffer identically (zeros past the last column
    included)."""
    k, n = 5, 37
    b = RNG.standard_normal((k, n), dtype=np.float32)
    text = f"""
func.func @f(%a: tensor<3x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<3x{n}xf32> {{
  %c = graph.matmul %a, %b : (tensor<3x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<3x{n}xf32>
  func.return %c : tensor<3x{n}xf32>
}}
"""
    module = scheduled(text)
    kernel = next(op for op in module.ops if isinstance(op, func.FuncOp)
                  and op.sym_name.data != "f")
    (alloc,) = [op for op in kernel.body.block.ops if isinstance(op, AllocOp)
                and "packed" in (op.result.name_hint or "")]
    nests = [op for op in kernel.body.block.ops if isinstance(op, ForOp)
             and alloc.result in {v for o in op.walk() for v in getattr(o, "writes", ())}]
    assert len(nests) == 2, "whole panels and the partial last one"
    weight = kernel.body.block.args[1]
    env: dict = {weight: b, **index_constants(kernel)}
    shape = tuple(alloc.result.type.get_shape())  # type: ignore[attr-defined]
    whole = np.full(shape, np.nan, np.float32)
    scalar = np.full(shape, np.nan, np.float32)
    interpreter = LoopInterpreter(module)
    for nest in nests:
        evaluate_nest(nest, {**env, alloc.result: whole})
        step = interpreter._compile(nest)  # noqa: SLF001 - the interpreter's step for one op
        step({**env, alloc.result: scalar})
    assert not np.isnan(whole).any()
    np.testing.assert_array_equal(whole, scalar)


def evaluated_both_ways(text: str, weight: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """Runs the one nest of `@f(%W, %O)` in `text` by `evaluate_nest` and by the scalar loop
    interpreter on `weight` (O starts as NaN); asserts they agree and returns O."""
    module = Parser(make_context(), text).parse_module()
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    w_arg, out = function.body.block.args
    env = index_constants(function)
    (nest,) = [op for op in function.body.block.ops if isinstance(op, ForOp)]
    whole = np.full(out_shape, np.nan, np.float32)
    scalar = np.full(out_shape, np.nan, np.float32)
    evaluate_nest(nest, {**env, w_arg: weight, out: whole})
    step = LoopInterpreter(module)._compile(nest)  # noqa: SLF001 - the step for one op
    step({**env, w_arg: weight, out: scalar})
    np.testing.assert_array_equal(whole, scalar)
    return whole


def test_whole_nest_evaluation_broadcasts_like_serial_execution() -> None:
    """Values that depend on some of the loops only: a load at a fixed index, an index computed
    from two induction variables, and a store that every iteration of the inner loop overwrites
    (the last one wins, as when the nest runs serially); agrees with the scalar interpreter."""
    text = """
func.func @f(%W: memref<6x4xf32>, %O: memref<3x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  loop.for %i = %c0 to %c3 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.for %k = %c0 to %c2 step %c1 axis "k" {
        %fixed = loop.load %W[%c5, %c3] : memref<6x4xf32> -> f32
        %row = arith.muli %i, %c2 : index
        %r = arith.addi %row, %k : index
        %w = loop.load %W[%r, %j] : memref<6x4xf32> -> f32
        %s = arith.addf %w, %fixed : f32
        %col = arith.addi %j, %c4 : index
        loop.store %s, %O[%i, %col] : f32 -> memref<3x8xf32>
        loop.store %fixed, %O[%i, %j] : f32 -> memref<3x8xf32>
      }
    }
  }
  func.return
}
"""
    w = RNG.standard_normal((6, 4), dtype=np.float32)
    whole = evaluated_both_ways(text, w, (3, 8))
    expected_right = w.reshape(3, 2, 4)[:, 1, :] + w[5, 3]  # k = 1 stores last
    np.testing.assert_array_equal(whole[:, 4:], expected_right)
    np.testing.assert_array_equal(whole[:, :4], np.full((3, 4), w[5, 3]))


def test_whole_nest_evaluation_adds_up_an_accumulation() -> None:
    """A store `S[j] = S[j] + ext(W[k, j])` under a loop its index does not depend on (column
    sums of a packed int8 weight, zeroed in the same nest) adds every iteration's value, as
    the serial nest does, and agrees with the scalar interpreter."""
    text = """
func.func @f(%W: memref<5x3xi8>, %S: memref<3xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  loop.for %j = %c0 to %c3 step %c1 axis "j" {
    %zero = arith.constant 0 : i32
    loop.store %zero, %S[%j] : i32 -> memref<3xi32>
    loop.for %k = %c0 to %c5 step %c1 axis "k" {
      %w = loop.load %W[%k, %j] : memref<5x3xi8> -> i8
      %x = arith.extsi %w : i8 to i32
      %s = loop.load %S[%j] : memref<3xi32> -> i32
      %t = arith.addi %s, %x : i32
      loop.store %t, %S[%j] : i32 -> memref<3xi32>
    }
  }
  func.return
}
"""
    module = Parser(make_context(), text).parse_module()
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    w_arg, out = function.body.block.args
    (nest,) = [op for op in function.body.block.ops if isinstance(op, ForOp)]
    w = RNG.integers(-128, 128, (5, 3)).astype(np.int8)
    whole = np.full(3, 77, np.int32)
    scalar = np.full(3, 77, np.int32)
    env = index_constants(function)
    evaluate_nest(nest, {**env, w_arg: w, out: whole})
    step = LoopInterpreter(module)._compile(nest)  # noqa: SLF001 - the step for one op
    step({**env, w_arg: w, out: scalar})
    np.testing.assert_array_equal(whole, w.astype(np.int32).sum(axis=0))
    np.testing.assert_array_equal(whole, scalar)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(1, 6), cols=st.integers(1, 9), lb=st.integers(0, 2),
       step=st.integers(1, 3), scale=st.integers(1, 3))
def test_affine_accesses_evaluate_through_strided_views(
    rows: int, cols: int, lb: int, step: int, scale: int
) -> None:
    """Indices built from induction variables by `addi`, `subi` and `muli` (a reversed axis, a
    loop with a lower bound and a step, a scaled one) are read and written through strided views
    of the buffers, with the scalar interpreter's result."""
    n = lb + step * rows
    text = f"""
func.func @f(%W: memref<{cols}x{n * scale}xf32>, %O: memref<{cols}x{n}x2xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %lb = arith.constant {lb} : index
  %step = arith.constant {step} : index
  %n = arith.constant {n} : index
  %cols = arith.constant {cols} : index
  %last = arith.constant {cols - 1} : index
  %scale = arith.constant {scale} : index
  loop.for %i = %lb to %n step %step axis "i" {{
    loop.for %j = %c0 to %cols step %c1 axis "j" {{
      %reversed = arith.subi %last, %j : index
      %scaled = arith.muli %scale, %i : index
      %w = loop.load %W[%reversed, %scaled] : memref<{cols}x{n * scale}xf32> -> f32
      loop.store %w, %O[%j, %i, %c1] : f32 -> memref<{cols}x{n}x2xf32>
    }}
  }}
  func.return
}}
"""
    w = RNG.standard_normal((cols, n * scale), dtype=np.float32)
    w.flags.writeable = False
    whole = evaluated_both_ways(text, w, (cols, n, 2))
    expected = w[::-1, lb * scale:n * scale:step * scale].T  # O[j, i, 1] = W[cols-1-j, scale*i]
    np.testing.assert_array_equal(whole[:, lb:n:step, 1], expected.T)


def test_strided_views_are_used_only_where_every_address_is_distinct() -> None:
    """A store through a view is the serial loop's store only when no two iterations write the
    same element: a zero stride or strides that overlap fall back to index arrays."""
    buffer = np.zeros((4, 6), np.float32)
    strided = np.lib.stride_tricks.as_strided
    assert _distinct_addresses(buffer)
    assert _distinct_addresses(buffer.T)
    assert _distinct_addresses(buffer[::-1, ::2])
    assert not _distinct_addresses(strided(buffer, (3, 4), (0, 4)))  # broadcast along axis 0
    assert not _distinct_addresses(strided(buffer, (3, 4), (8, 4)))  # rows of 4 every 2
    assert _distinct_addresses(strided(buffer, (1, 3), (0, 4)))  # a size-1 axis: any stride
