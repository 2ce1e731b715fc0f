"""Tensor intrinsics: the library's entries, `tensorize`, the VNNI int8 GEMM default schedule.

Host-independent checks pass the target explicitly (cascadelake: AVX-512 VNNI, no BF16) and run
the scheduled loops in the loop interpreter; the JIT tests of the VNNI code skip on hosts without
avx512vnni. The oracle is NumPy's int32 GEMM (and the graph interpreter for the int8 conv).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_module
from dlc.dialects.loop.interpreter import run_function
from dlc.dialects.loop.ops import BlockOp, ForOp, IntrinsicOp, LoadOp
from dlc.frontends.onnx.importer import import_onnx
from dlc.pipelines import parse_pipeline
from dlc.rewrites.schedule import ScheduleError, tensorize
from dlc.target.intrinsics import INTRINSICS, VDPBF16PS, VPDPBUSD, get_intrinsic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument
from xdsl.parser import Parser

import dlc

VNNI_TARGET = "llvm -mcpu=cascadelake"
"""A target with avx512vnni (and not avx512bf16)."""

LOOPS = (
    "graph-opt,convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,"
    "loop-dedup-functions,loop-plan-memory"
)


def _host_has_vnni() -> bool:
    import llvmlite.binding as llvm

    return bool(llvm.get_host_cpu_features().get("avx512vnni", False))


needs_vnni = pytest.mark.skipif(not _host_has_vnni(), reason="the host lacks avx512_vnni")

_TYPES = {"ui8": np.uint8, "i8": np.int8}


def _gemm_module(m: int, k: int, n: int, a: str, b: str, per_column: bool) -> str:
    zb = f"tensor<{n}x{b}>" if per_column else f"tensor<{b}>"
    types = f"(tensor<{m}x{k}x{a}>, tensor<{k}x{n}x{b}>, tensor<{a}>, {zb})"
    return (
        f"func.func @mm(%a: tensor<{m}x{k}x{a}>, %b: tensor<{k}x{n}x{b}>, %az: tensor<{a}>, "
        f"%bz: {zb}) -> tensor<{m}x{n}xi32> {{\n"
        f"  %r = graph.matmul_integer %a, %b, %az, %bz : {types} -> tensor<{m}x{n}xi32>\n"
        f"  func.return %r : tensor<{m}x{n}xi32>\n}}\n"
    )


def _lower(text: str, target: str) -> ModuleOp:
    return _lower_module(Parser(make_context(), text).parse_module(), target)


def _lower_module(module: ModuleOp, target: str) -> ModuleOp:
    ctx = make_context()
    spec = f'{LOOPS},loop-default-schedule{{target="{target}"}}'
    for module_pass in parse_pipeline(spec):
        module_pass.apply(ctx, module)
    return module


def _integers(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def _case_inputs(rng: np.random.Generator, m: int, k: int, n: int, a: str, b: str,
                 per_column: bool) -> tuple[list[np.ndarray], np.ndarray]:
    x = _integers(rng, _TYPES[a], (m, k))
    w = _integers(rng, _TYPES[b], (k, n))
    xz = _integers(rng, _TYPES[a], ())
    wz = _integers(rng, _TYPES[b], (n,) if per_column else ())
    expected = (x.astype(np.int32) - np.int32(xz)) @ (w.astype(np.int32) - wz.astype(np.int32))
    return [x, w, xz, wz], expected


_shapes = st.tuples(st.integers(1, 19), st.integers(1, 37), st.integers(1, 70))
_signs = st.tuples(st.sampled_from(["ui8", "i8"]), st.sampled_from(["ui8", "i8"]), st.booleans())


# ---------------------------------------------------------------------------------------------
# The library
# ---------------------------------------------------------------------------------------------


def test_library_entries_describe_their_nests() -> None:
    assert [VPDPBUSD.lanes(op) for op in VPDPBUSD.operands] == [16, 4, 64]
    assert [VDPBF16PS.lanes(op) for op in VDPBF16PS.operands] == [16, 2, 32]
    assert VPDPBUSD.features == {"avx512vnni"} and VDPBF16PS.features == {"avx512bf16"}
    mma = get_intrinsic("ptx.mma.m16n8k32.s8")
    assert mma.extents == {"i": 16, "j": 8, "k": 32} and mma.warp_level
    assert {entry.arch for entry in INTRINSICS.values()} == {"x86_64", "nvptx"}
    with pytest.raises(ValueError, match="expected an intrinsic among .* found 'nope'"):
        get_intrinsic("nope")


@given(st.integers(0, 2**32 - 1))
def test_vpdpbusd_reference_is_the_u8_by_s8_dot(seed: int) -> None:
    rng = np.random.default_rng(seed)
    acc = rng.integers(-2**31, 2**31, 16).astype(np.int32)
    a = _integers(rng, np.int8, (4,))  # an i8 buffer: the reference reads it as u8
    b = _integers(rng, np.int8, (64,))
    expected = acc.astype(np.int64) + (b.reshape(16, 4).astype(np.int64)
                                       @ a.view(np.uint8).astype(np.int64))
    wrapped = ((expected + 2**31) % 2**32 - 2**31).astype(np.int32)
    np.testing.assert_array_equal(VPDPBUSD.reference(acc, a, b), wrapped)


# ---------------------------------------------------------------------------------------------
# The default schedule, host-independent: the IR and the loop interpreter
# ---------------------------------------------------------------------------------------------


def test_vnni_target_tensorizes_the_int8_gemm_and_others_do_not() -> None:
    text = _gemm_module(8, 12, 32, "ui8", "i8", False)
    vnni = _lower(text, VNNI_TARGET)
    calls = [op for op in vnni.walk() if isinstance(op, IntrinsicOp)]
    assert calls and {op.intrinsic.data for op in calls} == {VPDPBUSD.name}
    plain = _lower(text, "llvm -mcpu=skylake-avx512")
    assert not any(isinstance(op, IntrinsicOp) for op in plain.walk())


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.tuples(st.integers(1, 9), st.integers(1, 21), st.integers(1, 40)),
       signs=_signs, seed=st.integers(0, 2**32 - 1))
def test_vnni_schedule_in_the_loop_interpreter_matches_numpy(
        shape: tuple[int, int, int], signs: tuple[str, str, bool], seed: int) -> None:
    """Random shapes (remainders of 16 columns, 4-deep reductions and row blocks), every
    signedness of A and B, per-tensor or per-column zero points."""
    m, k, n = shape
    a, b, per_column = signs
    module = _lower(_gemm_module(m, k, n, a, b, per_column), VNNI_TARGET)
    assert any(isinstance(op, IntrinsicOp) for op in module.walk())
    inputs, expected = _case_inputs(np.random.default_rng(seed), m, k, n, a, b, per_column)
    # Loop-level buffers are signless: the interpreter takes bytes as int8.
    (got,) = run_function(module, "mm", [x.view(np.int8) for x in inputs])
    np.testing.assert_array_equal(got, expected)


def test_tensorize_refuses_a_target_without_the_feature() -> None:
    module = _lower(_gemm_module(4, 8, 16, "ui8", "i8", False), "llvm -mcpu=skylake-avx512")
    loop = next(op for op in module.walk() if isinstance(op, ForOp))
    with pytest.raises(ScheduleError, match='expected a target with avx512vnni'):
        tensorize(loop, VPDPBUSD.name, frozenset({"avx512f"}))


# ---------------------------------------------------------------------------------------------
# The JIT: the VNNI code on this host
# ---------------------------------------------------------------------------------------------


def _run_compiled(m: int, k: int, n: int, a: str, b: str, per_column: bool, seed: int,
                  tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / f"mm_{m}_{k}_{n}_{a}_{b}_{per_column}.mlir"
    path.write_text(_gemm_module(m, k, n, a, b, per_column))
    executable = dlc.compile(path, target=VNNI_TARGET, cache=False)
    inputs, expected = _case_inputs(np.random.default_rng(seed), m, k, n, a, b, per_column)
    np.testing.assert_array_equal(executable(*inputs), expected)


@needs_vnni
@pytest.mark.parametrize(("m", "k", "n", "a", "b", "per_column"), [
    (1, 1, 1, "ui8", "i8", False),     # everything a remainder
    (7, 13, 33, "ui8", "i8", True),    # odd sizes, per-column zero points
    (13, 64, 128, "ui8", "i8", False),  # whole panels and 4-blocks, a row tail
    (5, 9, 17, "i8", "ui8", False),    # both operands shifted (+-128)
    (64, 100, 200, "i8", "i8", True),  # several column groups and a column tail
])
def test_vnni_gemm_jit_matches_numpy(m: int, k: int, n: int, a: str, b: str, per_column: bool,
                                     tmp_path) -> None:  # type: ignore[no-untyped-def]
    _run_compiled(m, k, n, a, b, per_column, m * 1000 + k * 10 + n, tmp_path)


@needs_vnni
@settings(max_examples=5, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(shape=_shapes, signs=_signs, seed=st.integers(0, 2**32 - 1))
def test_vnni_gemm_jit_random_shapes(shape: tuple[int, int, int], signs: tuple[str, str, bool],
                                     seed: int, tmp_path) -> None:  # type: ignore
    _run_compiled(*shape, *signs, seed, tmp_path)


@needs_vnni
def test_matmul_integer_onnx_with_weight_runs_the_vnni_kernel() -> None:
    """ONNX MatMulInteger with a constant s8 weight (packed at compile time) and no zero
    points, as benchmarks/int8_gemm.py runs it."""
    rng = np.random.default_rng(3)
    x = _integers(rng, np.uint8, (37, 96))
    w = _integers(rng, np.int8, (96, 50))
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [37, 96])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [37, 50])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    got = dlc.compile(model, target=VNNI_TARGET, threads=2, cache=False)(x)
    np.testing.assert_array_equal(got, x.astype(np.int32) @ w.astype(np.int32))


@needs_vnni
@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
def test_int8_conv_on_a_vnni_target_matches_the_graph_interpreter(x_dtype: type) -> None:
    """ConvInteger compiled for a VNNI target (an implicit GEMM: the VNNI kernel) equals the
    graph interpreter."""
    rng = np.random.default_rng(4)
    x = _integers(rng, x_dtype, (1, 8, 9, 9))
    w = _integers(rng, np.int8, (16, 8, 3, 3))
    xz = _integers(rng, x_dtype, ())
    graph = helper.make_graph(
        [helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], pads=[1, 1, 1, 1])], "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8 if x_dtype is np.uint8
                                       else TensorProto.INT8, [1, 8, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 16, 9, 9])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(xz, "xz")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    (reference,) = run_module(import_onnx(model), [x])
    got = dlc.compile(model, target=VNNI_TARGET, cache=False)(x)
    np.testing.assert_array_equal(got, reference)


# ---------------------------------------------------------------------------------------------
# int8 convs as implicit GEMMs on the VNNI kernel
# ---------------------------------------------------------------------------------------------


def _conv_integer_module(n: int, c: int, size: int, o: int, kernel: int, stride: int, pad: int,
                         dilation: int, x: str, w: str, per_channel: bool) -> str:
    """`graph.conv2d_integer` of x [n, c, size, size] by w [o, c, kernel, kernel]; the weight
    and the zero points are arguments."""
    out = (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
    wz = f"tensor<{o}x{w}>" if per_channel else f"tensor<{w}>"
    x_type, w_type = f"tensor<{n}x{c}x{size}x{size}x{x}>", f"tensor<{o}x{c}x{kernel}x{kernel}x{w}>"
    y_type = f"tensor<{n}x{o}x{out}x{out}xi32>"
    attrs = (f"strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, "
             f"{pad}, {pad}>, dilation = array<i64: {dilation}, {dilation}>")
    return (
        f"func.func @conv(%x: {x_type}, %w: {w_type}, %xz: tensor<{x}>, %wz: {wz}) -> {y_type} {{\n"
        f"  %r = graph.conv2d_integer %x, %w, %xz, %wz {{{attrs}}} : "
        f"({x_type}, {w_type}, tensor<{x}>, {wz}) -> {y_type}\n"
        f"  func.return %r : {y_type}\n}}\n"
    )


@pytest.mark.parametrize(("n", "c", "size", "o", "kernel", "stride", "pad", "dilation", "x", "w",
                          "per_channel"), [
    (1, 3, 9, 24, 3, 2, 1, 1, "ui8", "i8", True),    # 3 input channels (K = 27), stride 2
    (1, 24, 5, 17, 1, 1, 0, 1, "i8", "i8", False),   # 1x1, s8 input (shifted), 17 outputs
    (2, 4, 7, 8, 3, 1, 2, 2, "ui8", "ui8", False),   # batch 2, dilation 2, u8 weight
    (1, 3, 11, 5, 7, 2, 3, 1, "ui8", "i8", True),    # 7x7 stride 2 (a stem)
])
def test_vnni_conv_in_the_loop_interpreter_matches_the_graph_interpreter(
        n: int, c: int, size: int, o: int, kernel: int, stride: int, pad: int, dilation: int,
        x: str, w: str, per_channel: bool) -> None:
    """Int8 convs (weights as arguments: the input takes the panels) scheduled as implicit
    GEMMs for a VNNI target, run in the loop interpreter: host independent."""
    text = _conv_integer_module(n, c, size, o, kernel, stride, pad, dilation, x, w, per_channel)
    rng = np.random.default_rng(n * 1000 + c * 10 + o)
    inputs = [_integers(rng, _TYPES[x], (n, c, size, size)),
              _integers(rng, _TYPES[w], (o, c, kernel, kernel)), _integers(rng, _TYPES[x], ()),
              _integers(rng, _TYPES[w], (o,) if per_channel else ())]
    (reference,) = run_module(Parser(make_context(), text).parse_module(), inputs)
    module = _lower(text, VNNI_TARGET)
    assert any(isinstance(op, IntrinsicOp) for op in module.walk())
    (got,) = run_function(module, "conv", [value.view(np.int8) for value in inputs])
    np.testing.assert_array_equal(got, reference)


def _conv_integer_model(x: np.ndarray, w: np.ndarray, xz: np.ndarray, stride: int, pad: int,
                        dilation: int, groups: int = 1,
                        wz: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    """ONNX ConvInteger with a constant weight and zero points."""
    n, c, size, _ = x.shape
    o, _, kernel, _ = w.shape
    out = (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
    x_type = TensorProto.UINT8 if x.dtype == np.uint8 else TensorProto.INT8
    inputs = ["x", "w", "xz"] + ([] if wz is None else ["wz"])
    node = helper.make_node("ConvInteger", inputs, ["y"], pads=[pad] * 4,
                            strides=[stride] * 2, dilations=[dilation] * 2, group=groups)
    initializers = {"w": w, "xz": xz} | ({} if wz is None else {"wz": wz})
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", x_type, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [n, o, out, out])],
        [numpy_helper.from_array(v, name) for name, v in initializers.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _nhwc_conv_integer_module(c: int, size: int, o: int, kernel: int, stride: int, pad: int,
                              groups: int, x: str) -> str:
    """`graph.conv2d_integer` in NHWC / HWIO (the layout graph-convert-layout gives int8
    regions) of x [1, size, size, c] by an s8 weight [kernel, kernel, c / groups, o] with
    per-output-channel zero points, all arguments."""
    out = (size + 2 * pad - kernel) // stride + 1
    x_type = f"tensor<1x{size}x{size}x{c}x{x}>"
    w_type = f"tensor<{kernel}x{kernel}x{c // groups}x{o}xi8>"
    y_type = f"tensor<1x{out}x{out}x{o}xi32>"
    attrs = (f"strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, "
             f"{pad}, {pad}>, groups = {groups} : i64, layout = \"NHWC\", "
             f"kernel_layout = \"HWIO\"")
    operands = f"({x_type}, {w_type}, tensor<{x}>, tensor<{o}xi8>)"
    return (
        f"func.func @conv(%x: {x_type}, %w: {w_type}, %xz: tensor<{x}>, %wz: tensor<{o}xi8>) "
        f"-> {y_type} {{\n"
        f"  %r = graph.conv2d_integer %x, %w, %xz, %wz {{{attrs}}} : {operands} -> {y_type}\n"
        f"  func.return %r : {y_type}\n}}\n"
    )


@pytest.mark.parametrize(("c", "size", "o", "kernel", "stride", "pad", "groups", "x"), [
    (16, 6, 24, 1, 1, 0, 1, "ui8"),    # 1x1: A the input's pixel rows, read in place
    (16, 5, 20, 1, 1, 0, 1, "i8"),     # 1x1, s8 input: its rows copied, flipped into u8
    (6, 5, 20, 1, 1, 0, 1, "ui8"),     # 1x1, 6 channels: rows copied, padded to 8 bytes
    (5, 7, 17, 3, 2, 1, 1, "i8"),      # 3x3 stride 2, s8 input, channels not multiples of 4
    (3, 9, 8, 3, 2, 1, 1, "ui8"),      # a stem: 3 input channels
    (12, 6, 12, 3, 1, 1, 12, "ui8"),   # depthwise: the generic schedule, along the channels
])
def test_nhwc_int8_conv_in_the_loop_interpreter_matches_the_graph_interpreter(
        c: int, size: int, o: int, kernel: int, stride: int, pad: int, groups: int,
        x: str) -> None:
    """Int8 convs in NHWC (as the cpu pipeline's graph-convert-layout{integer_only} leaves
    them) lowered for a VNNI target and run in the loop interpreter (host independent): a GEMM
    conv runs on the VNNI kernel, a depthwise one on the generic schedule, and both equal the
    graph interpreter."""
    text = _nhwc_conv_integer_module(c, size, o, kernel, stride, pad, groups, x)
    rng = np.random.default_rng(c * 100 + o + groups)
    inputs = [_integers(rng, _TYPES[x], (1, size, size, c)),
              _integers(rng, np.int8, (kernel, kernel, c // groups, o)),
              _integers(rng, _TYPES[x], ()), _integers(rng, np.int8, (o,))]
    (reference,) = run_module(Parser(make_context(), text).parse_module(), inputs)
    module = _lower(text, VNNI_TARGET)
    assert any(isinstance(op, IntrinsicOp) for op in module.walk()) == (groups == 1)
    # A depthwise conv reads its padded input inline (the bounds test is uniform along the
    # channels); a GEMM conv reads a stored pad (none for the 1x1 without padding).
    pads = _blocks_named(module, "pad")
    assert (not pads) == (groups > 1 or pad == 0)
    if kernel == 1:  # one group and a tail of output channels: the threads split the rows,
        parallel = [op.axis.data for op in module.walk()  # written back at (i / W, i % W)
                    if isinstance(op, ForOp) and op.kind.data == "parallel"]
        assert parallel[-1] == "i.o"
        # The input is the row-major [pixels, channels] matrix A: read through a view, and
        # copied only where vpdpbusd needs other bytes (s8, or channels not a multiple of 4).
        views = [op for op in module.walk() if isinstance(op, memref.CollapseShapeOp)]
        assert [view.result.type.get_shape() for view in views] == [(size * size, c)]
        copies = _blocks_named(module, "pack_a")
        assert bool(copies) == (x == "i8" or c % 4 != 0)
        assert all(list(copy.reads) == [views[0].result] for copy in copies)
    (got,) = run_function(module, "conv", [value.view(np.int8) for value in inputs])
    np.testing.assert_array_equal(got, reference)


def test_vnni_conv_with_a_constant_weight_packs_the_input_in_rows() -> None:
    """A constant weight takes the panels and the input the rows (a plain im2col copy), in
    the loop interpreter, equal to the graph interpreter."""
    rng = np.random.default_rng(8)
    x = _integers(rng, np.uint8, (1, 3, 7, 7))
    model = _conv_integer_model(x, _integers(rng, np.int8, (5, 3, 3, 3)), np.uint8(7), 2, 1, 1)
    (reference,) = run_module(import_onnx(model), [x])
    module = _lower_module(import_onnx(model), VNNI_TARGET)
    blocks = {op.block_name.data: op for op in module.walk() if isinstance(op, BlockOp)}
    assert [value.name_hint for value in blocks["conv2d.pack_a"].reads] == ["pad"]
    (got,) = run_function(module, "main", [x.view(np.int8)])
    np.testing.assert_array_equal(got, reference)


def _matmul_integer_model(x_shape: tuple[int, int], w: np.ndarray, xz: np.ndarray | None
                          ):  # type: ignore[no-untyped-def]
    """`MatMulInteger(x, w[, xz])`, w (and xz) constants."""
    inputs = ["x", "w"] + ([] if xz is None else ["xz"])
    inits = [numpy_helper.from_array(w, "w")]
    if xz is not None:
        inits.append(numpy_helper.from_array(xz, "xz"))
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", inputs, ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [x_shape[0], w.shape[1]])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _blocks_named(module: ModuleOp, suffix: str) -> list[BlockOp]:
    return [op for op in module.walk()
            if isinstance(op, BlockOp) and op.block_name.data.endswith(suffix)]


def test_column_sums_of_a_constant_weight_fold_at_compile_time() -> None:
    """With an input zero point, the write-back subtracts `za * colsum(B)`; for a constant
    weight the column sums are one scalar nest over the packed panels, which
    loop-fold-constant-nests evaluates (its evaluator adds the sums up) into a constant
    argument: no kernel computes them at run time, and the result is exact."""
    rng = np.random.default_rng(21)
    x = _integers(rng, np.uint8, (5, 40))
    w = _integers(rng, np.int8, (40, 70))
    xz = np.uint8(131)
    module = _lower_module(import_onnx(_matmul_integer_model((5, 40), w, xz)), VNNI_TARGET)
    assert _blocks_named(module, ".colsum")
    for module_pass in parse_pipeline("loop-fold-constant-nests"):
        module_pass.apply(make_context(), module)
    assert not _blocks_named(module, ".colsum")
    assert not _blocks_named(module, ".colsum_init")
    assert any("colsum" in (arg.name_hint or "") for op in module.walk()
               if isinstance(op, FuncOp) for arg in op.body.block.args)
    (got,) = run_function(module, "main", [x.view(np.int8)])
    expected = (x.astype(np.int32) - np.int32(xz)) @ w.astype(np.int32)
    np.testing.assert_array_equal(got, expected)


def test_no_column_sums_for_a_u8_input_without_zero_point() -> None:
    """A u8 A with no zero point (za' = 0): the column sums' term vanishes and is not
    computed (a GEMV on a constant weight spent most of its time on them)."""
    rng = np.random.default_rng(22)
    x = _integers(rng, np.uint8, (1, 48))
    w = _integers(rng, np.int8, (48, 40))
    module = _lower_module(import_onnx(_matmul_integer_model((1, 48), w, None)), VNNI_TARGET)
    assert not _blocks_named(module, ".colsum")
    assert not _blocks_named(module, ".colsum_init")
    (got,) = run_function(module, "main", [x.view(np.int8)])
    np.testing.assert_array_equal(got, x.astype(np.int32) @ w.astype(np.int32))


@pytest.mark.parametrize(("rows", "depth", "channels", "outermost"), [
    (49, 64, 96, "i.o"),     # one column group and a tail: the row blocks split, in one region
    (49, 64, 160, "i.o"),    # two groups and a serial tail: the row blocks balance better
    (12, 64, 1024, "j.o"),   # two row blocks, sixteen column groups
    (192, 64, 128, "i.o"),   # as balanced either way, and A larger than B: the rows
    (12, 256, 128, "j.o"),   # as balanced either way, and B larger than A: the columns
])
def test_vnni_threads_split_the_better_balanced_axis(rows: int, depth: int, channels: int,
                                                     outermost: str) -> None:
    """With 2 threads, the parallel loop of an int8 GEMM's micro-kernels is the row blocks
    when they balance the threads better than the column groups (and B fits half the L2), or
    about as well when A is the larger operand (each thread then reads its own rows of A),
    else the column groups (the conv case, whose rows are written back at a delinearized
    output point, is in the NHWC conv test above). Exact in the loop interpreter (the small
    cases)."""
    rng = np.random.default_rng(rows + channels)
    x = _integers(rng, np.uint8, (rows, depth))
    w = _integers(rng, np.int8, (depth, channels))
    module = import_onnx(_matmul_integer_model((rows, depth), w, None))
    module = _lower_module(module, "llvm -mcpu=cascadelake -num-cores=2")
    parallel = [op.axis.data for op in module.walk()
                if isinstance(op, ForOp) and op.kind.data == "parallel"]
    assert parallel and parallel[0] == outermost
    if rows * depth * channels <= 64 * 64 * 1024:
        (got,) = run_function(module, "main", [x.view(np.int8)])
        np.testing.assert_array_equal(got, x.astype(np.int32) @ w.astype(np.int32))


def test_vnni_column_chunks_run_the_row_blocks_over_their_groups() -> None:
    """Sixteen column groups on 2 threads: the parallel loop takes chunks of 4 groups (twice
    as many chunks as threads), and inside a chunk the row blocks are the outer loop, each over
    the chunk's groups (a block of A serves four groups from L1). The parallel primitive
    proves the chunks disjoint through the column index `64 (4 t + g)` (a constant multiple
    of a sum). Exact in the loop interpreter."""
    rng = np.random.default_rng(7)
    x = _integers(rng, np.uint8, (12, 64))
    w = _integers(rng, np.int8, (64, 1024))
    module = import_onnx(_matmul_integer_model((12, 64), w, None))
    module = _lower_module(module, "llvm -mcpu=cascadelake -num-cores=2")
    chunks = next(op for op in module.walk()
                  if isinstance(op, ForOp) and op.kind.data == "parallel")
    assert (chunks.axis.data, chunks.trip_count()) == ("j.o", 4)
    blocks = [op for op in chunks.body.block.ops if isinstance(op, ForOp)]
    assert [(op.axis.data, op.trip_count()) for op in blocks] == [("i.o", 2)]
    groups = [op for op in blocks[0].body.block.ops if isinstance(op, ForOp)]
    assert [(op.axis.data, op.trip_count()) for op in groups] == [("j.i", 4)]
    (got,) = run_function(module, "main", [x.view(np.int8)])
    np.testing.assert_array_equal(got, x.astype(np.int32) @ w.astype(np.int32))


@needs_vnni
@pytest.mark.parametrize(("c", "size", "o", "kernel", "stride", "pad", "dilation", "x_dtype"), [
    (8, 9, 16, 3, 1, 1, 1, np.uint8),
    (3, 17, 24, 7, 2, 3, 1, np.uint8),   # odd channels, 7x7 stride 2
    (24, 10, 13, 1, 1, 0, 1, np.int8),   # 1x1, s8 input
    (32, 7, 48, 1, 1, 0, 1, np.uint8),   # 1x1, u8 input: the kernels read its rows in place
    (16, 12, 32, 3, 2, 2, 2, np.uint8),  # stride 2, dilation 2
    (64, 14, 70, 3, 1, 1, 1, np.uint8),  # several column groups and a column tail
])
def test_vnni_conv_jit_matches_the_graph_interpreter(
        c: int, size: int, o: int, kernel: int, stride: int, pad: int, dilation: int,
        x_dtype: type) -> None:
    rng = np.random.default_rng(c * 100 + o)
    x = _integers(rng, x_dtype, (1, c, size, size))
    model = _conv_integer_model(x, _integers(rng, np.int8, (o, c, kernel, kernel)),
                                _integers(rng, x_dtype, ()), stride, pad, dilation)
    (reference,) = run_module(import_onnx(model), [x])
    got = dlc.compile(model, target=VNNI_TARGET, threads=2, cache=False)(x)
    np.testing.assert_array_equal(got, reference)


def _qlinear_conv_model(c: int, size: int, o: int, seed: int):  # type: ignore[no-untyped-def]
    """QLinearConv 3x3, padding 1, per-channel s8 weights and u8 activations."""
    rng = np.random.default_rng(seed)
    inits = {
        "xs": np.float32(0.02), "xz": np.uint8(rng.integers(0, 256)),
        "w": _integers(rng, np.int8, (o, c, 3, 3)),
        "ws": rng.uniform(0.002, 0.01, o).astype(np.float32), "wz": np.zeros(o, np.int8),
        "ys": np.float32(0.05), "yz": np.uint8(rng.integers(0, 256)),
    }
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                            ["y"], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, o, size, size])],
        [numpy_helper.from_array(np.asarray(v), name) for name, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_requantized_conv_keeps_its_fused_epilogue_in_the_vnni_kernel() -> None:
    """QLinearConv: the requantize tail runs in the VNNI kernel's write-back, equal to the
    graph interpreter (loop interpreter everywhere, the JIT on a VNNI host)."""
    model = _qlinear_conv_model(5, 6, 7, 9)
    x = _integers(np.random.default_rng(10), np.uint8, (1, 5, 6, 6))
    (reference,) = run_module(import_onnx(model), [x])
    lowered = _lower_module(import_onnx(model), VNNI_TARGET)
    assert any(isinstance(op, IntrinsicOp) for op in lowered.walk())
    (got,) = run_function(lowered, "main", [x.view(np.int8)])
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), reference)
    if _host_has_vnni():
        np.testing.assert_array_equal(
            dlc.compile(model, target=VNNI_TARGET, cache=False)(x), reference)


def test_requantize_scalars_become_constants_the_kernel_holds() -> None:
    """QLinearConv with several zero points: after loop-fold-constant-nests no kernel loads a
    one-element constant (the tail's scale of 1, the zero points are `arith.constant`s that LLVM
    folds), and the loop interpreter still equals the graph interpreter."""
    model = _qlinear_conv_model(6, 5, 9, 11)
    x = _integers(np.random.default_rng(12), np.uint8, (1, 6, 5, 5))
    (reference,) = run_module(import_onnx(model), [x])
    lowered = _lower_module(import_onnx(model), VNNI_TARGET)
    parse_pipeline("loop-fold-constant-nests")[0].apply(make_context(), lowered)
    kernels = [op for op in lowered.ops if isinstance(op, FuncOp) and op.sym_name.data != "main"]
    scalar_loads = [op for kernel in kernels for op in kernel.walk() if isinstance(op, LoadOp)
                    and isinstance(op.memref, BlockArgument)
                    and math.prod(op.memref.type.get_shape()) == 1]
    assert kernels and not scalar_loads
    (got,) = run_function(lowered, "main", [x.view(np.int8)])
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), reference)


@needs_vnni
@pytest.mark.parametrize(("c", "size", "stride", "x_type"), [
    (48, 9, 1, np.uint8),   # three whole 16-channel vectors: vpdpwssd
    (20, 8, 2, np.uint8),   # stride 2, a 4-channel rest (mul + add)
    (32, 6, 1, np.int8),    # s8 input
])
def test_depthwise_int8_conv_jit_matches_the_graph_interpreter(
        c: int, size: int, stride: int, x_type: type) -> None:
    """QLinearConv depthwise (the generic int8 schedule, whose products of 16-bit factors the
    vectorizer makes vpdpwssd on a VNNI target), zero points nonzero everywhere (per-channel
    weight zero points too), JIT-run: equal to the graph interpreter."""
    rng = np.random.default_rng(c + size)
    inits = {
        "xs": np.float32(0.02), "xz": _integers(rng, x_type, ()),
        "w": _integers(rng, np.int8, (c, 1, 3, 3)),
        "ws": rng.uniform(0.002, 0.01, c).astype(np.float32),
        "wz": _integers(rng, np.int8, (c,)),
        "ys": np.float32(0.5), "yz": np.uint8(rng.integers(0, 256)),
    }
    element = TensorProto.UINT8 if x_type == np.uint8 else TensorProto.INT8
    out = (size - 1) // stride + 1
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                            ["y"], pads=[1, 1, 1, 1], group=c, strides=[stride, stride])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", element, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, c, out, out])],
        [numpy_helper.from_array(np.asarray(v), name) for name, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = _integers(rng, x_type, (1, c, size, size))
    (reference,) = run_module(import_onnx(model), [x])
    got = dlc.compile(model, target=VNNI_TARGET, threads=1, cache=False)(x)
    np.testing.assert_array_equal(got, reference)


def _qlinear_matmul_model(m: int, k: int, n: int, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    inits = {
        "xs": np.float32(0.02), "xz": np.uint8(rng.integers(0, 256)),
        "w": _integers(rng, np.int8, (k, n)), "ws": np.float32(0.01), "wz": np.int8(0),
        "ys": np.float32(0.05), "yz": np.uint8(rng.integers(0, 256)),
    }
    node = helper.make_node("QLinearMatMul", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                            ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [m, n])],
        [numpy_helper.from_array(np.asarray(v), name) for name, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_requantized_gemm_keeps_its_fused_epilogue_in_the_vnni_kernel() -> None:
    """QLinearMatMul: the requantize tail fused into the integer GEMM's epilogue runs in the
    VNNI kernel's write-back (no int32 tensor in memory), equal to the graph interpreter."""
    model = _qlinear_matmul_model(11, 40, 35, 5)
    module = import_onnx(model)
    x = _integers(np.random.default_rng(6), np.uint8, (11, 40))
    (reference,) = run_module(module, [x])
    lowered = _lower_module(import_onnx(model), VNNI_TARGET)
    assert any(isinstance(op, IntrinsicOp) for op in lowered.walk())
    if _host_has_vnni():
        got = dlc.compile(model, target=VNNI_TARGET, cache=False)(x)
        np.testing.assert_array_equal(got, reference)


# ---------------------------------------------------------------------------------------------
# vdpbf16ps alone: the intrinsic's LLVM call on this host
# ---------------------------------------------------------------------------------------------

BF16_TARGET = "llvm -mcpu=cooperlake"
"""A target with avx512bf16 (and none of the later ISA extensions: sapphirerapids code may use
avx512fp16, which an AMD host with avx512_bf16 lacks)."""


def _host_has_bf16() -> bool:
    import llvmlite.binding as llvm

    return bool(llvm.get_host_cpu_features().get("avx512bf16", False))


needs_bf16 = pytest.mark.skipif(not _host_has_bf16(), reason="the host lacks avx512_bf16")

_BF16_DOT = """
func.func @dot(%A: memref<2xbf16>, %B: memref<32xbf16>, %C0: memref<16xf32>, %C: memref<16xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  loop.for %j = %c0 to %c16 step %c1 axis "j" {
    %v = loop.load %C0[%j] : memref<16xf32> -> f32
    loop.store %v, %C[%j] : f32 -> memref<16xf32>
  }
  loop.for %j = %c0 to %c16 step %c1 axis "j" {
    loop.for %k = %c0 to %c2 step %c1 axis "k" {
      loop.block "dot" reads(%A, %B : memref<2xbf16>, memref<32xbf16>)
          writes(%C : memref<16xf32>) spatial ["j"] reduction ["k"] {
        %l = arith.muli %j, %c2 : index
        %l2 = arith.addi %l, %k : index
        %a = loop.load %A[%k] : memref<2xbf16> -> bf16
        %ae = arith.extf %a : bf16 to f32
        %b = loop.load %B[%l2] : memref<32xbf16> -> bf16
        %be = arith.extf %b : bf16 to f32
        %p = arith.mulf %ae, %be : f32
        %c = loop.load %C[%j] : memref<16xf32> -> f32
        %s = arith.addf %c, %p : f32
        loop.store %s, %C[%j] : f32 -> memref<16xf32>
      }
    }
  }
  func.return
}
"""


def _bf16_bits(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random normal bf16 values as their bits (f32 values truncated to their top 16 bits)."""
    values = rng.standard_normal(shape).astype(np.float32)
    return (values.view(np.uint32) >> 16).astype(np.uint16)


@needs_bf16
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vdpbf16ps_alone_jit_matches_numpy(seed: int, tmp_path) -> None:  # type: ignore
    """The tensorized 16x2 nest compiled for a BF16 target: the call's operands reach LLVM as
    `<16 x i32>` words (xDSL prints no bfloat) and compute acc + a . b per lane."""
    module = Parser(make_context(), _BF16_DOT).parse_module()
    loop = next(op for op in module.walk()
                if isinstance(op, ForOp) and any(isinstance(o, ForOp) for o in op.body.walk()))
    tensorize(loop, VDPBF16PS.name, frozenset({"avx512bf16"}))
    assert any(isinstance(op, IntrinsicOp) for op in module.walk())
    path = tmp_path / "dot.mlir"
    path.write_text(str(module))
    executable = dlc.compile(path, target=BF16_TARGET, cache=False)
    rng = np.random.default_rng(seed)
    a, b = _bf16_bits(rng, (2,)), _bf16_bits(rng, (32,))
    acc = rng.standard_normal(16).astype(np.float32)
    expected = VDPBF16PS.reference(acc, a, b)
    exact = acc + (b.astype(np.uint32) << 16).view(np.float32).reshape(16, 2).astype(
        np.float64) @ (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    np.testing.assert_allclose(expected, exact, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(executable(a, b, acc), expected, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# The avx512bf16-gemm default rule: bf16 GEMMs as vdpbf16ps micro-kernels
# ---------------------------------------------------------------------------------------------


def _bf16_gemm_module(m: int, k: int, n: int, batch: str = "") -> str:
    """`graph.matmul` of bf16 A [batch..., m, k] by B [k, n] (`batch`: "1x" for a leading
    batch of 1, as ONNX MatMuls of [1, seq, hidden] activations have)."""
    a, y = f"tensor<{batch}{m}x{k}xbf16>", f"tensor<{batch}{m}x{n}xbf16>"
    types = f"({a}, tensor<{k}x{n}xbf16>)"
    return (
        f"func.func @mm(%a: {a}, %b: tensor<{k}x{n}xbf16>) -> {y} {{\n"
        f"  %r = graph.matmul %a, %b : {types} -> {y}\n"
        f"  func.return %r : {y}\n}}\n"
    )


def _bf16_case(rng: np.random.Generator, m: int, k: int, n: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A bits, B bits, the f64 product of their bf16 values)."""
    a, b = _bf16_bits(rng, (m, k)), _bf16_bits(rng, (k, n))
    return a, b, _bf16_values(a).astype(np.float64) @ _bf16_values(b).astype(np.float64)


def _bf16_values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _assert_bf16_product(got: np.ndarray, expected: np.ndarray, k: int) -> None:
    """The bf16 result within its final rounding (2^-8 relative) plus the f32 sums' error,
    which vdpbf16ps's pairwise rounding makes differ from the scalar nest's."""
    values = _bf16_values(np.asarray(got).view(np.uint16))
    scale = np.abs(expected).max() + 1e-30
    np.testing.assert_allclose(values, expected, rtol=2.0**-8, atol=scale * k * 2.0**-22)


def test_bf16_target_tensorizes_the_bf16_gemm_and_others_do_not() -> None:
    text = _bf16_gemm_module(8, 12, 32)
    bf16 = _lower(text, BF16_TARGET)
    calls = [op for op in bf16.walk() if isinstance(op, IntrinsicOp)]
    assert calls and {op.intrinsic.data for op in calls} == {VDPBF16PS.name}
    plain = _lower(text, VNNI_TARGET)  # cascadelake: no avx512bf16
    assert not any(isinstance(op, IntrinsicOp) for op in plain.walk())


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.tuples(st.integers(1, 9), st.integers(1, 21), st.integers(1, 40)),
       seed=st.integers(0, 2**32 - 1))
def test_bf16_schedule_in_the_loop_interpreter_matches_numpy(
        shape: tuple[int, int, int], seed: int) -> None:
    """Random shapes (remainders of 16 columns, pairs of k and row blocks) in the loop
    interpreter, whose vdpbf16ps is the library entry's reference: host independent."""
    import ml_dtypes

    m, k, n = shape
    module = _lower(_bf16_gemm_module(m, k, n), BF16_TARGET)
    assert any(isinstance(op, IntrinsicOp) for op in module.walk())
    a, b, expected = _bf16_case(np.random.default_rng(seed), m, k, n)
    (got,) = run_function(module, "mm", [a.view(ml_dtypes.bfloat16), b.view(ml_dtypes.bfloat16)])
    _assert_bf16_product(got, expected, k)


def _run_bf16_compiled(m: int, k: int, n: int, seed: int, tmp_path,  # type: ignore
                       batch: str = "") -> None:
    path = tmp_path / f"mm_bf16_{m}_{k}_{n}.mlir"
    path.write_text(_bf16_gemm_module(m, k, n, batch))
    executable = dlc.compile(path, target=BF16_TARGET, cache=False)
    a, b, expected = _bf16_case(np.random.default_rng(seed), m, k, n)
    a = a.reshape(1, m, k) if batch else a
    got = np.asarray(executable(a, b))
    assert got.shape == ((1, m, n) if batch else (m, n))
    _assert_bf16_product(got.reshape(m, n), expected, k)


def test_bf16_rule_takes_a_leading_batch_of_one_in_the_loop_interpreter() -> None:
    """`[1, M, K] x [K, N]` (a transformer's linear layers): the batch loop of one iteration
    is kept as index 0."""
    import ml_dtypes

    m, k, n = 7, 13, 20
    module = _lower(_bf16_gemm_module(m, k, n, "1x"), BF16_TARGET)
    assert any(isinstance(op, IntrinsicOp) for op in module.walk())
    a, b, expected = _bf16_case(np.random.default_rng(11), m, k, n)
    (got,) = run_function(module, "mm", [a.reshape(1, m, k).view(ml_dtypes.bfloat16),
                                         b.view(ml_dtypes.bfloat16)])
    _assert_bf16_product(np.asarray(got).reshape(m, n), expected, k)


@needs_bf16
def test_bf16_gemm_jit_with_a_leading_batch_of_one(tmp_path) -> None:  # type: ignore
    _run_bf16_compiled(9, 31, 40, 12, tmp_path, "1x")


@needs_bf16
@pytest.mark.parametrize(("m", "k", "n"), [
    (1, 1, 1),       # everything a remainder (odd K padded)
    (7, 13, 33),     # odd sizes
    (12, 64, 128),   # whole panels and pairs, whole row blocks
    (64, 101, 200),  # several column groups, a column tail, odd K
])
def test_bf16_gemm_jit_matches_numpy(m: int, k: int, n: int, tmp_path) -> None:  # type: ignore
    _run_bf16_compiled(m, k, n, m * 1000 + k * 10 + n, tmp_path)


@needs_bf16
@settings(max_examples=5, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(shape=st.tuples(st.integers(1, 19), st.integers(1, 37), st.integers(1, 70)),
       seed=st.integers(0, 2**32 - 1))
def test_bf16_gemm_jit_random_shapes(shape: tuple[int, int, int], seed: int,
                                     tmp_path) -> None:  # type: ignore
    _run_bf16_compiled(*shape, seed, tmp_path)


@needs_bf16
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_bf16_matmul_onnx_with_weight_runs_the_vdpbf16ps_kernel(precision: str) -> None:
    """ONNX MatMul with a constant weight (B packed at compile time): a bf16 model as it is,
    and an f32 model compiled with precision="bf16" (MatMul, Relu, MatMul: the first is a bf16
    GEMM, the second the output layer, which stays f32)."""
    import ml_dtypes

    rng = np.random.default_rng(5)
    m, k, n = 37, 95, 50
    a, b, _ = _bf16_case(rng, m, k, n)
    x, w = _bf16_values(a), _bf16_values(b)
    if precision == "bf16":
        kind = TensorProto.FLOAT
        w2 = rng.standard_normal((n, 6)).astype(np.float32)
        weights = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w2, "w2")]
        nodes = [helper.make_node("MatMul", ["x", "w"], ["t"]),
                 helper.make_node("Relu", ["t"], ["r"]),
                 helper.make_node("MatMul", ["r", "w2"], ["y"])]
        hidden = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)
        expected = hidden @ w2.astype(np.float64)
        # The hidden layer is rounded to bf16 once (2^-8 relative), then summed in f32.
        bound = 2.0**-7 * (hidden @ np.abs(w2.astype(np.float64))).max()
        inputs = x
        n_out = 6
    else:
        kind = TensorProto.BFLOAT16
        weights = [helper.make_tensor("w", kind, [k, n], b.tobytes(), raw=True)]
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
        expected = x.astype(np.float64) @ w.astype(np.float64)
        inputs = a.view(ml_dtypes.bfloat16)
        n_out = n
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", kind, [m, k])],
        [helper.make_tensor_value_info("y", kind, [m, n_out])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    executable = dlc.compile(model, target=BF16_TARGET, cache=False, precision=precision)
    got = np.asarray(executable(inputs))
    if precision == "bf16":
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=0, atol=bound)
    else:
        _assert_bf16_product(got.view(np.uint16), expected, k)


_BF16_NEST_FROM_ONE = """
func.func @mm(%a: memref<6x8xbf16>, %b: memref<8x16xbf16>, %out: memref<6x16xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %i0 = %c1 to %c6 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c16 step %c1 axis "i1" {
      loop.block "matmul_init" reads() writes(%out : memref<6x16xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %out[%i0, %i1] : f32 -> memref<6x16xf32>
      }
      loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %b : memref<6x8xbf16>, memref<8x16xbf16>)
            writes(%out : memref<6x16xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<6x8xbf16> -> bf16
          %1 = loop.load %b[%r0, %i1] : memref<8x16xbf16> -> bf16
          %2 = arith.extf %0 : bf16 to f32
          %3 = arith.extf %1 : bf16 to f32
          %4 = arith.mulf %2, %3 : f32
          %acc = loop.load %out[%i0, %i1] : memref<6x16xf32> -> f32
          %5 = arith.addf %acc, %4 : f32
          loop.store %5, %out[%i0, %i1] : f32 -> memref<6x16xf32>
        }
      }
    }
  }
  func.return
}
"""


@pytest.mark.parametrize("lower_bound", ["%c0", "%c1"])
def test_bf16_rule_takes_nests_counting_from_zero_only(lower_bound: str) -> None:
    """The rule's schedule indexes rows from 0: a nest over rows 1..5 keeps the generic one.
    (Its sum goes straight to an f32 output: the rule stores it at [i, j].)"""
    text = _BF16_NEST_FROM_ONE.replace("%i0 = %c1", f"%i0 = {lower_bound}")
    module = Parser(make_context(), text).parse_module()
    for module_pass in parse_pipeline(f'loop-default-schedule{{target="{BF16_TARGET}"}}'):
        module_pass.apply(make_context(), module)
    tensorized = any(isinstance(op, IntrinsicOp) for op in module.walk())
    assert tensorized == (lower_bound == "%c0")
    if tensorized:
        import ml_dtypes

        a, b, expected = _bf16_case(np.random.default_rng(13), 6, 8, 16)
        (got,) = run_function(module, "mm", [a.view(ml_dtypes.bfloat16),
                                             b.view(ml_dtypes.bfloat16)])
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
