"""loop-default-schedule: graph-level programs compiled by `dlc.compile` (the `cpu` pipeline, which
applies the default schedules) on 1 and 2 threads give NumPy's results, on shapes that are and
are not multiples of the tile sizes; the rules pick the expected schedule. No timing here."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop.ops import AllocOp, ForOp
from dlc.rewrites.convert_tensor_expr_to_loop import ConvertTensorExprToLoopPass
from dlc.rewrites.loop_default_schedule import LoopDefaultSchedulePass
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.parser import Parser

import dlc

RNG = np.random.default_rng(20261129)


def module(text: str) -> ModuleOp:
    parsed = Parser(make_context(), text).parse_module()
    parsed.verify()
    return parsed


def compiled(text: str, threads: int) -> dlc.Executable:
    # No compile cache: each case compiles what this checkout's schedules make of it.
    return dlc.compile(module(text), threads=threads, cache=False)


def matmul_text(m: int, k: int, n: int) -> str:
    a, b, c = (f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>")
    return f"""
func.func @mm(%a: {a}, %b: {b}, %bias: tensor<{n}xf32>) -> {c} {{
  %m = graph.matmul %a, %b : ({a}, {b}) -> {c}
  %s = graph.add %m, %bias : ({c}, tensor<{n}xf32>) -> {c}
  %y = graph.relu %s : {c}
  func.return %y : {c}
}}
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("m", "k", "n"), [(16, 8, 32), (19, 7, 45), (1, 33, 17), (9, 3, 3)])
def test_matmul_bias_relu(m: int, k: int, n: int, threads: int) -> None:
    a = RNG.standard_normal((m, k), dtype=np.float32)
    b = RNG.standard_normal((k, n), dtype=np.float32)
    bias = RNG.standard_normal(n, dtype=np.float32)
    result = compiled(matmul_text(m, k, n), threads)(a, b, bias)
    np.testing.assert_allclose(result, np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-4)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=st.integers(1, 20), k=st.integers(1, 20), n=st.integers(1, 70),
    threads=st.sampled_from([1, 2]),
)
def test_matmul_random_shapes(m: int, k: int, n: int, threads: int) -> None:
    a = RNG.standard_normal((m, k), dtype=np.float32)
    b = RNG.standard_normal((k, n), dtype=np.float32)
    bias = RNG.standard_normal(n, dtype=np.float32)
    result = compiled(matmul_text(m, k, n), threads)(a, b, bias)
    np.testing.assert_allclose(result, np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-4)


def conv_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = padded.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            window = padded[:, :, i : i + out.shape[2], j : j + out.shape[3]]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, i, j])
    return (out + b[None, :, None, None]).astype(np.float32)


def conv3x3_text(c: int, o: int, size: int, relu: bool = False) -> str:
    """A stride-1 3x3 conv2d with bias (and a ReLU) over a `size` x `size` plane, padding 1."""
    x_t, w_t = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<{o}x{c}x3x3xf32>"
    y_t = f"tensor<1x{o}x{size}x{size}xf32>"
    tail = f"%y = graph.relu %r : {y_t}\n  func.return %y" if relu else "func.return %r"
    return f"""
func.func @conv(%x: {x_t}, %w: {w_t}, %b: tensor<{o}xf32>) -> {y_t} {{
  %r = graph.conv2d %x, %w, %b {{padding = array<i64: 1, 1, 1, 1>}}
      : ({x_t}, {w_t}, tensor<{o}xf32>) -> {y_t}
  {tail} : {y_t}
}}
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("c", "o", "size"), [(3, 8, 9), pytest.param(4, 10, 20, marks=pytest.mark.slow)]
)
def test_conv2d_bias_relu(c: int, o: int, size: int, threads: int) -> None:
    text = conv3x3_text(c, o, size, relu=True)
    x = RNG.standard_normal((1, c, size, size), dtype=np.float32)
    w = RNG.standard_normal((o, c, 3, 3), dtype=np.float32)
    b = RNG.standard_normal(o, dtype=np.float32)
    result = compiled(text, threads)(x, w, b)
    expected = np.maximum(conv_reference(x, w, b, 1), 0)
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2])
def test_elementwise_chain_and_reductions(threads: int) -> None:
    text = """
func.func @f(%x: tensor<5x7x37xf32>, %y: tensor<37xf32>)
    -> (tensor<5x7x37xf32>, tensor<5x37xf32>, tensor<5x7xf32>) {
  %s = graph.add %x, %y : (tensor<5x7x37xf32>, tensor<37xf32>) -> tensor<5x7x37xf32>
  %e = graph.exp %s : tensor<5x7x37xf32>
  %r = graph.reduce %x {axes = array<i64: 1>, keepdims = false, kind = "sum"}
      : (tensor<5x7x37xf32>) -> tensor<5x37xf32>
  %q = graph.reduce %x {axes = array<i64: 2>, keepdims = false, kind = "max"}
      : (tensor<5x7x37xf32>) -> tensor<5x7xf32>
  func.return %e, %r, %q : tensor<5x7x37xf32>, tensor<5x37xf32>, tensor<5x7xf32>
}
"""
    x = RNG.standard_normal((5, 7, 37), dtype=np.float32)
    y = RNG.standard_normal(37, dtype=np.float32)
    e, r, q = compiled(text, threads)(x, y)
    np.testing.assert_allclose(e, np.exp(x + y), rtol=1e-5)
    np.testing.assert_allclose(r, x.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(q, x.max(axis=2))


@pytest.mark.parametrize("threads", [1, 2])
def test_max_pool(threads: int) -> None:
    text = """
func.func @pool(%x: tensor<1x3x10x10xf32>) -> tensor<1x3x5x5xf32> {
  %p = graph.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x3x10x10xf32>) -> tensor<1x3x5x5xf32>
  func.return %p : tensor<1x3x5x5xf32>
}
"""
    x = RNG.standard_normal((1, 3, 10, 10), dtype=np.float32)
    expected = x.reshape(1, 3, 5, 2, 5, 2).max(axis=(3, 5))
    np.testing.assert_allclose(compiled(text, threads)(x), expected)


def pool_text(op: str, c: int, size: int, k: int, stride: int, pad: int) -> str:
    out = (size + 2 * pad - k) // stride + 1
    x_t, y_t = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<1x{c}x{out}x{out}xf32>"
    return f"""
func.func @pool(%x: {x_t}) -> {y_t} {{
  %p = graph.{op} %x {{kernel = array<i64: {k}, {k}>, strides = array<i64: {stride}, {stride}>,
      padding = array<i64: {pad}, {pad}, {pad}, {pad}>}} : ({x_t}) -> {y_t}
  func.return %p : {y_t}
}}
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("op", "c", "size", "k", "stride", "pad"),
    [("max_pool2d", 4, 23, 3, 2, 1), ("max_pool2d", 3, 75, 3, 2, 1),
     ("max_pool2d", 2, 20, 3, 3, 0), ("max_pool2d", 2, 33, 5, 4, 2),
     ("max_pool2d", 2, 19, 2, 5, 0), ("avg_pool2d", 3, 30, 3, 2, 1)],
)
def test_strided_pools_match_the_interpreter(op: str, c: int, size: int, k: int, stride: int,
                                             pad: int, threads: int) -> None:
    """Pools whose windows move by 2-4 input columns per output column (read as vectors and
    shuffled; 5: gathered), padded (through a "pad" compute) or not, with output rows of
    12, 38, 7, 9, 4 and 15 columns, vs the graph dialect's interpreter."""
    from dlc.dialects.graph.interpreter import run_module

    text = pool_text(op, c, size, k, stride, pad)
    x = RNG.standard_normal((1, c, size, size), dtype=np.float32)
    expected = run_module(module(text), [x])[0]
    np.testing.assert_allclose(compiled(text, threads)(x), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_max_pool_keeps_nans_and_infinities_in_its_windows(threads: int) -> None:
    """The window's `maximumf`, marked `nsz` (lowered as a NaN test and `maxps`, not
    `llvm.maximum`), keeps a NaN wherever it is in the window (first, middle, last tap; the
    NaN test is on the new value), -inf and +inf, and returns zero for windows of signed
    zeros, in the vector columns and the tail."""
    text = pool_text("max_pool2d", 3, 41, 3, 2, 1)
    x = RNG.standard_normal((1, 3, 41, 41), dtype=np.float32)
    x[0, 0, 0, 0] = np.nan    # the first tap of window (0, 0)
    x[0, 0, 10, 11] = np.nan  # a middle tap
    x[0, 1, 40, 40] = np.nan  # the last tap of the last window (the tail columns)
    x[0, 2, 5, 7] = np.inf
    x[0, 2, 21:24, 21:24] = -np.inf  # the whole window of output (11, 11)
    x[0, 1, 21:24, 21:24] = np.where(RNG.random((3, 3)) < 0.5, -0.0, 0.0)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    expected = windows[:, :, ::2, ::2].max(axis=(4, 5))
    actual = compiled(text, threads)(x)
    np.testing.assert_array_equal(actual, expected)
    assert np.isnan(actual[0, 0, 0, 0]) and np.isnan(actual[0, 0, 5, 5])
    assert np.isnan(actual[0, 1, 20, 20])
    assert actual[0, 2, 11, 11] == -np.inf and actual[0, 1, 11, 11] == 0.0


def test_strided_max_pool_schedule_structure() -> None:
    """ResNet's 3x3/2 max pool (padding 1) reads a -inf padded copy of its input; its window
    loop gets the register tile of a reduction, rows unrolled and the output columns vectorized
    (the input read two columns apart per lane), output channels in parallel."""
    loops, parsed = scheduled_loops(pool_text("max_pool2d", 8, 32, 3, 2, 1))
    kinds = {(loop.axis.data, loop.kind.data) for loop in loops}
    assert {("i3.i", "vectorized"), ("i2.i", "unrolled"), ("i1", "parallel")} <= kinds
    buffers = {str(op.result.type) for op in parsed.walk() if isinstance(op, AllocOp)}
    assert "memref<1x8x33x33xf32>" in buffers  # the padded input
    assert any(b.startswith("memref<") and b.endswith("x16xf32>") for b in buffers)  # the tile


def test_lane_stride() -> None:
    from dlc.rewrites.schedule_rules.nest import lane_stride
    from xdsl.builder import Builder
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IndexType
    from xdsl.ir import Block
    from xdsl.rewriter import InsertPoint

    block = Block(arg_types=[IndexType(), IndexType()])
    iv, other = block.args
    builder = Builder(InsertPoint.at_end(block))

    def const(value: int):  # noqa: ANN202
        return builder.insert(arith.ConstantOp.from_int_and_width(value, IndexType())).result

    two, three = const(2), const(3)
    doubled = builder.insert(arith.MuliOp(iv, two)).result
    window = builder.insert(arith.AddiOp(doubled, other)).result
    shifted = builder.insert(arith.SubiOp(window, three)).result
    tripled = builder.insert(arith.MuliOp(three, shifted)).result
    assert lane_stride(iv, iv) == 1
    assert lane_stride(doubled, iv) == 2
    assert lane_stride(shifted, iv) == 2
    assert lane_stride(tripled, iv) == 6
    assert lane_stride(builder.insert(arith.SubiOp(other, iv)).result, iv) is None
    assert lane_stride(builder.insert(arith.MuliOp(iv, other)).result, iv) is None
    assert lane_stride(builder.insert(arith.AddiOp(iv, iv)).result, iv) is None


AVX512 = "llvm -mcpu=skylake-avx512"
"""An AVX-512 target (16 f32 lanes, 32 vector registers, 1 MiB L2): the schedules below are for
it, or for `AVX2`, whatever the host is."""

AVX2 = "llvm -mcpu=znver3"
"""An AVX2 target (8 f32 lanes, 16 vector registers, 512 KiB L2)."""

TARGETS = {512: AVX512, 256: AVX2}
"""The targets by vector width."""


def scheduled_loops(text: str, threads: int = 2, target: str = AVX512, l2_bytes: int = 0
                    ) -> list[ForOp]:
    from dlc.rewrites import get_all_passes
    from xdsl.passes import PassPipeline

    parsed = module(text)
    PassPipeline.parse_spec(
        get_all_passes(), "convert-graph-to-tensor-expr,tensor-expr-inline"
    ).apply(make_context(), parsed)
    ConvertTensorExprToLoopPass().apply(make_context(), parsed)
    LoopDefaultSchedulePass(target=target, threads=threads, l2_bytes=l2_bytes).apply(
        make_context(), parsed)
    parsed.verify()
    return [op for op in parsed.walk() if isinstance(op, ForOp)], parsed  # type: ignore[return-value]


def test_gemm_schedule_structure() -> None:
    """GEMM gets packed B panels (one per 32-column tile), an 8x32 register tile (rows unrolled,
    columns vectorized) with the reduction loop around it, and a parallel outer loop; one
    thread: no parallel loop."""
    loops, parsed = scheduled_loops(matmul_text(64, 32, 64))
    kinds = {loop.axis.data: loop.kind.data for loop in loops}
    assert kinds["i0.i"] == "unrolled" and kinds["i1.l"] == "vectorized"
    assert "parallel" in kinds.values()
    tiles = [op.result.type for op in parsed.walk() if isinstance(op, AllocOp)]
    assert any(str(t) == "memref<8x32xf32>" for t in tiles)
    assert any(str(t) == "memref<2x32x32xf32>" for t in tiles)
    loops_1, _ = scheduled_loops(matmul_text(64, 32, 64), threads=1)
    assert all(loop.kind.data != "parallel" for loop in loops_1)


def test_a_gemm_whose_weight_outweighs_its_rows_splits_the_weight_between_threads() -> None:
    """A packed GEMM whose B (K x N) is larger than its A (K x M) has a column group per
    thread, and the parallel loop runs over them: each thread packs and streams its part of
    B and reads all of the small A, rather than splitting the rows and each streaming all of
    B (16 x 784 x 512, an MLP layer on a block of 16 rows: 0.039 -> 0.035 ms with 2 threads,
    whose one group, all 16 panels of B in half a 2 MB L2, left the rows to split). Where A
    is the larger, or B is small (a quarter of the L2 or less), the rows are split."""
    for threads in (2, 4):
        loops, _ = scheduled_loops(matmul_text(16, 784, 512), threads=threads,
                                   l2_bytes=2 << 20)
        split = [(loop.axis.data, loop.trip_count()) for loop in loops
                 if loop.kind.data == "parallel" and loop.axis.data != "k"]
        assert split == [("i1.g", threads)], (threads, split)
    for m, k, n in ((256, 64, 32), (16, 8, 64)):
        loops, _ = scheduled_loops(matmul_text(m, k, n), l2_bytes=2 << 20)
        assert [loop.axis.data for loop in loops if loop.kind.data == "parallel"
                and loop.axis.data != "k"] == ["i0.o"], (m, k, n)


def test_gemm_tile_fits_the_registers_of_the_vector_width() -> None:
    """The register tile takes three quarters of the ISA's vector registers: 8x2 vectors of 16
    lanes with AVX-512 (32 registers), at most 12 vectors of 8 lanes with AVX2 (16 registers;
    24 accumulators would spill)."""
    for vector_bits, lanes, most in ((512, 16, 24), (256, 8, 12)):
        _, parsed = scheduled_loops(matmul_text(64, 32, 64), target=TARGETS[vector_bits])
        tiles = [op.result.type for op in parsed.walk()
                 if isinstance(op, AllocOp) and op.scope.data == "local"]
        assert tiles
        for tile in tiles:
            rows, columns = tile.get_shape()
            assert rows * -(-columns // lanes) <= most, (vector_bits, tile)
    _, parsed = scheduled_loops(matmul_text(64, 32, 64), target=AVX2)
    assert any(str(op.result.type) == "memref<6x16xf32>" for op in parsed.walk()
               if isinstance(op, AllocOp))


MORE_OPS = {
    "depthwise_conv2d": """
func.func @f(%x: tensor<1x8x9x9xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x9x9xf32> {
  %r = graph.conv2d %x, %w {groups = 8 : i64, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<1x8x9x9xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x9x9xf32>
  func.return %r : tensor<1x8x9x9xf32>
}""",
    "batch_matmul": """
func.func @f(%a: tensor<3x5x7xf32>, %b: tensor<3x7x33xf32>) -> tensor<3x5x33xf32> {
  %r = graph.matmul %a, %b : (tensor<3x5x7xf32>, tensor<3x7x33xf32>) -> tensor<3x5x33xf32>
  func.return %r : tensor<3x5x33xf32>
}""",
    "strided_conv2d": """
func.func @f(%x: tensor<1x4x11x11xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32> {
  %r = graph.conv2d %x, %w {strides = array<i64: 2, 2>}
      : (tensor<1x4x11x11xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32>
  func.return %r : tensor<1x6x5x5xf32>
}""",
    "softmax": """
func.func @f(%x: tensor<4x37xf32>) -> tensor<4x37xf32> {
  %r = graph.softmax %x {axis = 1 : i64} : tensor<4x37xf32>
  func.return %r : tensor<4x37xf32>
}""",
}


@pytest.mark.parametrize("name", sorted(MORE_OPS))
def test_more_ops_match_the_graph_interpreter(name: str) -> None:
    """Depthwise and strided conv2d, batch matmul, softmax on 2 threads vs the graph
    dialect's NumPy interpreter."""
    from dlc.dialects.graph.interpreter import run_module
    from xdsl.dialects.func import FuncOp

    parsed = module(MORE_OPS[name])
    function = next(op for op in parsed.body.block.ops if isinstance(op, FuncOp))
    inputs = [
        RNG.standard_normal(type_.get_shape()).astype(np.float32)  # type: ignore[union-attr]
        for type_ in function.function_type.inputs.data
    ]
    expected = run_module(parsed, inputs)[0]
    result = dlc.compile(parsed, threads=2, cache=False)(*inputs)
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-5)


def strided_conv_text(c: int, o: int, size: int, k: int, pad: int) -> str:
    out = (size + 2 * pad - k) // 2 + 1
    x_t, w_t = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<{o}x{c}x{k}x{k}xf32>"
    y_t = f"tensor<1x{o}x{out}x{out}xf32>"
    return f"""
func.func @conv(%x: {x_t}, %w: {w_t}, %b: tensor<{o}xf32>) -> {y_t} {{
  %r = graph.conv2d %x, %w, %b {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>,
      strides = array<i64: 2, 2>}} : ({x_t}, {w_t}, tensor<{o}xf32>) -> {y_t}
  %y = graph.relu %r : {y_t}
  func.return %y : {y_t}
}}
"""


@pytest.mark.parametrize(
    ("vector_bits", "rows", "panel", "tile"),
    [(256, 7, 512 * 9, (7, 8)), (256, 14, 256 * 9, (7, 8)), (256, 28, 128 * 9, (6, 16)),
     (256, 14, 1024, (5, 16)), (256, 7, 2048, (4, 16)), (256, 13, 9, (5, 16)),
     (512, 7, 512 * 9, (7, 32)), (512, 28, 128 * 9, (7, 32)), (512, 56, 64 * 9, (8, 32)),
     (512, 13, 9, (8, 32)), (512, 169, 512, (8, 32)), (512, 196, 256, (8, 32))],
)
def test_channel_tile(vector_bits: int, rows: int, panel: int, tile: tuple[int, int]) -> None:
    """The channel kernel's tile (512 output channels, a 512 KiB L2, `panel` weights per output
    channel): a 3x3 conv whose weight panel would crowd the L2 gets the dividing tile with the
    most accumulators (7x8 with AVX2 for 7 and 14 rows, no 1-row tail); otherwise two vectors
    and the rows with the fewest cycles, each step's FMA cycles plus its overhead (4 + 3 for 7
    rows of a 1x1 conv, 5 + 5 + 4 for 14, 6 x 4 + 4 for 28); AVX-512 keeps its two-vector
    tiles, 8 rows for a merged plane's 169 or 196 (not 5 or 7: as many FMA cycles, more
    steps)."""
    from dlc.rewrites.schedule_rules import CpuConfig
    from dlc.rewrites.schedule_rules.reduction import channel_tile
    from dlc.target import parse_cpu_target

    config = CpuConfig.for_target(parse_cpu_target(TARGETS[vector_bits]), threads=2,
                                  l2_bytes=512 * 1024)
    assert channel_tile(rows, 512, vector_bits // 32, config, panel * 4) == tile


@pytest.mark.parametrize(("rows", "most", "mr"), [
    (49, 8, 7), (49, 12, 10), (20, 8, 7), (28, 12, 10), (14, 6, 5),  # tails made even
    (64, 8, 8), (197, 12, 12), (13, 8, 7), (5, 8, 5), (1, 12, 1), (24, 12, 12),
])
def test_balanced_rows(rows: int, most: int, mr: int) -> None:
    """As few row tiles as `most` allows, as even as they can be: never more tiles than
    `ceil(rows / most)`, never a tile above `most`, and the tail within a tile count of MR."""
    from dlc.rewrites.schedule_rules.reduction import balanced_rows

    assert balanced_rows(rows, most) == mr
    tiles = -(-rows // mr)
    assert mr <= most and tiles == -(-rows // min(rows, most))
    assert rows - (tiles - 1) * mr > mr - tiles


def test_seven_wide_conv_gets_one_tile_per_row() -> None:
    """ResNet-18's last stage (3x3 conv, 512 channels, 7x7): one 7-row tile per output row, no
    1-row tail tile, at both vector widths."""
    x_t, w_t, y_t = ("tensor<1x512x7x7xf32>", "tensor<512x512x3x3xf32>", "tensor<1x512x7x7xf32>")
    text = f"""
func.func @conv(%x: {x_t}, %w: {w_t}) -> {y_t} {{
  %r = graph.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>}} : ({x_t}, {w_t}) -> {y_t}
  func.return %r : {y_t}
}}"""
    for vector_bits, tile in ((256, "memref<7x8xf32>"), (512, "memref<7x32xf32>")):
        _, parsed = scheduled_loops(text, target=TARGETS[vector_bits], l2_bytes=512 * 1024)
        tiles = {str(op.result.type) for op in parsed.walk()
                 if isinstance(op, AllocOp) and op.scope.data == "local"}
        assert tiles == {tile}, (vector_bits, tiles)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("c", "o", "size", "k", "pad"),
    [(3, 20, 18, 7, 3), (5, 37, 13, 3, 1), (4, 6, 9, 1, 0), (2, 32, 8, 3, 1), (4, 32, 55, 3, 1),
     (3, 24, 31, 3, 1)],
)
def test_strided_conv2d_bias_relu(c: int, o: int, size: int, k: int, pad: int,
                                  threads: int) -> None:
    """Strided conv2d (vectorized over output channels) vs the graph dialect's interpreter:
    7x7/2 and 3x3/2 and 1x1/2, output channels that are and are not multiples of 16, output rows
    with and without a tail tile (28 wide: 4 tiles of 7); a 3x3/2 stem of 3 channels
    vectorized over its 16-wide output rows instead (`_strided_channel_kernel_pays`)."""
    from dlc.dialects.graph.interpreter import run_module

    text = strided_conv_text(c, o, size, k, pad)
    x = RNG.standard_normal((1, c, size, size), dtype=np.float32)
    w = RNG.standard_normal((o, c, k, k), dtype=np.float32)
    b = RNG.standard_normal(o, dtype=np.float32)
    expected = run_module(module(text), [x, w, b])[0]
    result = compiled(text, threads)(x, w, b)
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


def test_strided_conv_schedule_structure() -> None:
    """A stride-2 conv2d is vectorized over 32 output channels: the OIHW weight is packed into
    [OC/32][IC][KH][KW][32] panels, an 8 (ow) x 32 (oc) register tile, the channel lanes
    vectorized and the ow rows unrolled (the epilogue transposed: a serial loop over channels, the
    contiguous ow vectorized); a stride-1 conv2d keeps the ow-vectorized kernel."""
    loops, parsed = scheduled_loops(strided_conv_text(3, 64, 32, 7, 3))
    kinds = {loop.axis.data: loop.kind.data for loop in loops}
    assert kinds["i1.l"] == "vectorized"
    assert {loop.kind.data for loop in loops if loop.axis.data == "i3.i"} == {
        "unrolled", "vectorized"}  # the tile's rows; the epilogue's contiguous ow
    assert {loop.kind.data for loop in loops if loop.axis.data == "i1.i"} == {
        "vectorized", "serial"}  # the init's channel lanes; the epilogue's channels
    assert "parallel" in kinds.values()
    tiles = {str(op.result.type) for op in parsed.walk() if isinstance(op, AllocOp)}
    assert "memref<8x32xf32>" in tiles and "memref<2x3x7x7x32xf32>" in tiles
    # 16-wide rows fill whole vectors: the ow-vectorized kernel stays (an 18-wide row, 18 of
    # 32 lanes, would go to the channel kernel, which fills all lanes of 32 channels)
    x_t, w_t = "tensor<1x4x18x18xf32>", "tensor<32x4x3x3xf32>"
    stride_one = f"""
func.func @conv(%x: {x_t}, %w: {w_t}) -> tensor<1x32x16x16xf32> {{
  %r = graph.conv2d %x, %w : ({x_t}, {w_t}) -> tensor<1x32x16x16xf32>
  func.return %r : tensor<1x32x16x16xf32>
}}"""
    loops_1, parsed_1 = scheduled_loops(stride_one)
    kinds_1 = {loop.axis.data: loop.kind.data for loop in loops_1}
    assert kinds_1.get("i3.i") == "vectorized" and "i1.l" not in kinds_1


@pytest.mark.parametrize("vector_bits", [512, 256])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_conv_on_planes_too_small_to_vectorize_takes_the_channel_kernel(
    vector_bits: int, size: int
) -> None:
    """A stride-1 3x3 conv on ResNet-18's last planes at a small input (2x2, 1x1): rows too
    short to vectorize (below `min_vector_extent`) go to the channel kernel, vectorized over
    output channels with the weight packed, not to a scalar nest (which ran at 1 GFLOP/s:
    ResNet-18 at 64x64 spent 93% of its time in three such convs); it matches NumPy."""
    c, o = 64, 96
    text = conv3x3_text(c, o, size)
    loops, parsed = scheduled_loops(text, threads=1, target=TARGETS[vector_bits])
    assert "conv2d.pack" in str(parsed)
    assert any(loop.axis.data == "i1.l" and loop.kind.data == "vectorized" for loop in loops)
    x = RNG.standard_normal((1, c, size, size), dtype=np.float32)
    w = RNG.standard_normal((o, c, 3, 3), dtype=np.float32)
    b = RNG.standard_normal(o, dtype=np.float32)
    result = compiled(text, 1)(x, w, b)
    np.testing.assert_allclose(result, conv_reference(x, w, b, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_with_a_large_weight_loops_over_panels_outermost(threads: int) -> None:
    """A strided conv2d whose packed weight (256x64x3x3: 590 KB) exceeds half the L2 loops over
    its 32-channel weight panels outermost (in parallel), so that each panel is read into L2
    once for the whole output, and still matches the graph interpreter."""
    from dlc.dialects.graph.interpreter import run_module

    text = strided_conv_text(64, 256, 8, 3, 1)
    loops, _ = scheduled_loops(text, threads=2)
    (panels,) = [loop for loop in loops if loop.axis.data == "i1.o"]
    assert panels.kind.data == "parallel"
    assert any(isinstance(op, ForOp) and op.axis.data == "i2" for op in panels.walk())
    x = RNG.standard_normal((1, 64, 8, 8), dtype=np.float32)
    w = RNG.standard_normal((256, 64, 3, 3), dtype=np.float32)
    b = RNG.standard_normal(256, dtype=np.float32)
    expected = run_module(module(text), [x, w, b])[0]
    result = compiled(text, threads)(x, w, b)
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("c", "o", "size", "k", "pad"), [(3, 20, 18, 7, 3), (8, 40, 9, 3, 1)])
def test_strided_conv_without_fused_epilogue_uses_the_channel_kernel(
    c: int, o: int, size: int, k: int, pad: int
) -> None:
    """Lowered with epilogues unfused (as tuning lowers kernels), a strided conv2d accumulates
    straight into its output: the channel kernel still applies (its tile is written back lane by
    lane) and the loop interpreter gives the graph interpreter's result."""
    from dlc.dialects.graph.interpreter import run_module
    from dlc.dialects.loop.interpreter import run_function
    from dlc.rewrites import get_all_passes
    from xdsl.passes import PassPipeline

    text = strided_conv_text(c, o, size, k, pad)
    x = RNG.standard_normal((1, c, size, size), dtype=np.float32)
    w = RNG.standard_normal((o, c, k, k), dtype=np.float32)
    b = RNG.standard_normal(o, dtype=np.float32)
    expected = run_module(module(text), [x, w, b])[0]
    lowered = module(text)
    PassPipeline.parse_spec(
        get_all_passes(),
        "convert-graph-to-tensor-expr,tensor-expr-inline,"
        "convert-tensor-expr-to-loop{fuse-epilogue=false},loop-default-schedule{threads=2}",
    ).apply(make_context(), lowered)
    lowered.verify()
    assert "conv2d.pack" in str(lowered) and "conv2d.write" in str(lowered)
    (function,) = [op for op in lowered.ops if hasattr(op, "sym_name")]
    result = run_function(lowered, function.sym_name.data, [x, w, b])[0]  # type: ignore[attr-defined]
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("extent", "most", "rows"),
    [(28, 8, 7), (14, 8, 7), (56, 8, 8), (7, 8, 7), (30, 8, 8), (29, 8, 8), (3, 1, 1)],
)
def test_channel_kernel_rows_by_fma_cycles(extent: int, most: int, rows: int) -> None:
    """With 16-lane vectors and 24 accumulators (at most `most` rows): the rows with the fewest
    cycles, FMA cycles plus each step's overhead (30 = 3 x 8 + 6 rather than 5 x 6), a tile
    without a tail on a tie (28 = 4 x 7 rather than 3 x 8 + 4)."""
    from dlc.rewrites.schedule_rules import CpuConfig
    from dlc.rewrites.schedule_rules.reduction import channel_tile
    from dlc.target import parse_cpu_target

    config = CpuConfig.for_target(parse_cpu_target(AVX512), max_rows=most)
    assert channel_tile(extent, 64, 16, config) == (rows, 32)


def test_short_strided_reduction_keeps_the_row_kernel() -> None:
    """A 3x3/2 conv of 3 input channels (a MobileNet or SqueezeNet stem: 27 reduction steps)
    over 16-wide output rows: the row kernel, its output channels the unrolled rows of the tile
    and its output columns vectorized (the input read two columns apart per lane, shared by the
    rows), the output stored as it is laid out; a 7x7/2 one (147 steps) keeps the channel kernel
    (`test_strided_conv_schedule_structure`)."""
    loops, parsed = scheduled_loops(strided_conv_text(3, 24, 31, 3, 1))
    kinds = {(loop.axis.data, loop.kind.data) for loop in loops}
    assert ("i1.i", "unrolled") in kinds and ("i3.i", "vectorized") in kinds, kinds
    assert not any(axis == "i1.l" for axis, _ in kinds)  # no lanes over the output channels
    assert not any(kind == "serial" and axis == "i1.i" for axis, kind in kinds)  # no transpose


def test_channel_kernel_without_a_tail() -> None:
    """A stride-2 conv2d with 28-wide output rows gets 7-row tiles (28 = 4 x 7) and no tail
    tile: one copy of the micro-kernel."""
    loops, parsed = scheduled_loops(strided_conv_text(4, 32, 55, 3, 1))
    tiles = {str(op.result.type) for op in parsed.walk()
             if isinstance(op, AllocOp) and op.scope.data == "local"}
    assert tiles == {"memref<7x32xf32>"}


def concat_text(shapes: list[tuple[int, ...]], axis: int) -> str:
    out = list(shapes[0])
    out[axis] = sum(shape[axis] for shape in shapes)
    types = [f"tensor<{'x'.join(map(str, shape))}xf32>" for shape in shapes]
    out_type = f"tensor<{'x'.join(map(str, out))}xf32>"
    args = ", ".join(f"%x{i}: {t}" for i, t in enumerate(types))
    names = ", ".join(f"%x{i}" for i in range(len(shapes)))
    return f"""
func.func @cat({args}) -> {out_type} {{
  %c = graph.concat {names} {{axis = {axis} : i64}} : ({", ".join(types)}) -> {out_type}
  %y = graph.relu %c : {out_type}
  func.return %y : {out_type}
}}
"""


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    sizes=st.lists(st.integers(1, 40), min_size=2, max_size=5),
    axis=st.integers(0, 2),
    threads=st.sampled_from([1, 2]),
)
def test_concat_parts_match_numpy(
    base: list[int], sizes: list[int], axis: int, threads: int
) -> None:
    """A concat (+ relu) of 2-5 inputs along any axis, split by the `concat` rule into one nest
    per input, gives NumPy's result."""
    axis = min(axis, len(base) - 1)
    shapes = [tuple(size if d == axis else n for d, n in enumerate(base)) for size in sizes]
    inputs = [RNG.standard_normal(shape, dtype=np.float32) for shape in shapes]
    got = compiled(concat_text(shapes, axis), threads)(*inputs)
    np.testing.assert_array_equal(got, np.maximum(np.concatenate(inputs, axis=axis), 0))


def test_concat_schedule_structure() -> None:
    """Two inputs concatenated along the innermost axis: one parallel loop over the rows around
    two vectorized parts, each loading one input at contiguous indices (no select, no clamp)."""
    from dlc.dialects.loop.ops import LoadOp
    from xdsl.dialects import arith

    loops, scheduled = scheduled_loops(concat_text([(8, 24), (8, 40)], 1))
    kinds = [loop.kind.data for loop in loops]
    assert kinds == ["parallel", "vectorized", "vectorized"], kinds
    assert [loop.trip_count() for loop in loops] == [8, 24, 40]
    assert not any(isinstance(op, arith.SelectOp | arith.MinUIOp) for op in scheduled.walk())
    loads = [op for op in scheduled.walk() if isinstance(op, LoadOp)]
    assert [load.memref.name_hint for load in loads] == ["x0", "x1"]


def test_concat_of_many_channel_blocks_shares_one_parallel_loop() -> None:
    """A DenseNet concat (NCHW, along the channels, batch 1): one parallel loop over 8 slices
    of the channels (the parts' sizes' common divisor 32, at most 4 slices per thread) around
    the four parts (one parallel region, not four), each part's slice its 64 / 8 or 32 / 8
    channels of whole 7x7 planes, one run of 49 (`merge_rows`); single-threaded, no loop is
    parallel and each part is its own elementwise nest."""
    shapes = [(1, 64, 7, 7)] + [(1, 32, 7, 7)] * 3
    loops, _ = scheduled_loops(concat_text(shapes, 1))
    assert [(loop.axis.data, loop.kind.data, loop.trip_count()) for loop in loops] == [
        ("i1.s", "parallel", 8),
        ("i0", "serial", 1), ("i1.c", "serial", 8), ("i2.i3.fused", "vectorized", 49),
        *[("i0", "serial", 1), ("i1.c", "serial", 4), ("i2.i3.fused", "vectorized", 49)] * 3]
    loops, _ = scheduled_loops(concat_text(shapes, 1), threads=1)
    assert [loop.kind.data for loop in loops].count("parallel") == 0
    assert [loop.axis.data for loop in loops] == ["i0", "i1", "i2.i3.fused"] * 4


def test_concat_without_a_common_divisor_shares_the_rows() -> None:
    """Parts whose sizes share no divisor (3 and 5 channels) are not sliced: the rows' loop
    moves above the channel loop and runs in parallel around the parts."""
    loops, _ = scheduled_loops(concat_text([(1, 3, 7, 7), (1, 5, 7, 7)], 1))
    assert [(loop.axis.data, loop.kind.data) for loop in loops][:2] == [
        ("i0", "serial"), ("i2", "parallel")]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    divisor=st.integers(2, 8),
    multiples=st.lists(st.integers(1, 5), min_size=2, max_size=5),
    plane=st.tuples(st.integers(1, 9), st.integers(1, 20)),
    batch=st.integers(1, 2),
)
def test_sliced_concat_matches_numpy(divisor: int, multiples: list[int],
                                     plane: tuple[int, int], batch: int) -> None:
    """A concat (+ relu) along the channels of NCHW inputs whose channel counts share a
    divisor, on 2 threads (sliced where the batch is 1), gives NumPy's result."""
    shapes = [(batch, divisor * m, *plane) for m in multiples]
    inputs = [RNG.standard_normal(shape, dtype=np.float32) for shape in shapes]
    got = compiled(concat_text(shapes, 1), 2)(*inputs)
    np.testing.assert_array_equal(got, np.maximum(np.concatenate(inputs, axis=1), 0))


def pad_model(shape: tuple[int, ...], pads: list[int]) -> object:
    """An ONNX model (opset 13) of one constant `Pad` of `x` by `pads` (begins, then ends),
    the pads an initializer: the importer makes a negative pad a `graph.slice`."""
    from onnx import TensorProto, helper, numpy_helper

    rank = len(shape)
    out_shape = [dim + pads[axis] + pads[rank + axis] for axis, dim in enumerate(shape)]
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["y"], mode="constant")], "pad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        initializer=[numpy_helper.from_array(np.array(pads, dtype=np.int64), "pads")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def pad_reference(x: np.ndarray, pads: list[int]) -> np.ndarray:
    """ONNX Pad (constant 0): slice away the negative pads, then `np.pad` by the positive ones."""
    rank = x.ndim
    begins, ends = pads[:rank], pads[rank:]
    window = tuple(slice(-min(b, 0), dim + min(e, 0))
                   for b, e, dim in zip(begins, ends, x.shape, strict=True))
    return np.pad(x[window], [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends, strict=True)])


def test_pad_of_slice_copies_only_the_slice() -> None:
    """The issue's case: Pad [0,1,1, 0,0,-1] of arange(6).reshape(1,2,3) (a slice, then a pad,
    inlined into one "pad" nest) gives [[0,0,0],[0,0,1],[0,3,4]]: the interior copy runs over
    the sliced extent (2), not over the unsliced buffer's (3), which wrote 2 into the padding."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    got = dlc.compile(pad_model(x.shape, [0, 1, 1, 0, 0, -1]), cache=False)(x)
    np.testing.assert_array_equal(got, [[[0, 0, 0], [0, 0, 1], [0, 3, 4]]])


@st.composite
def shapes_and_pads(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int]]:
    """A shape of rank 1-3 and ONNX pads, each in [-2, 2], that keep every axis non-empty."""
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    begins: list[int] = []
    ends: list[int] = []
    for dim in shape:
        begin = draw(st.integers(max(-2, 1 - dim), 2))
        end = draw(st.integers(max(-2, 1 - dim - min(begin, 0)), 2))
        begins.append(begin)
        ends.append(end)
    return shape, begins + ends


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=shapes_and_pads(), threads=st.sampled_from([1, 2]))
def test_pad_with_negative_pads_matches_numpy(
    case: tuple[tuple[int, ...], list[int]], threads: int
) -> None:
    """Mixed positive and negative pads on several axes give NumPy's slice-then-pad."""
    shape, pads = case
    x = RNG.standard_normal(shape, dtype=np.float32)
    got = dlc.compile(pad_model(shape, pads), threads=threads, cache=False)(x)
    np.testing.assert_array_equal(got, pad_reference(x, pads))


@pytest.mark.parametrize(
    ("shape", "pads"),
    [((1, 2, 3), [0, 1, 1, 0, 0, -1]), ((2, 5, 7), [0, 2, 0, 0, -2, -3]),
     ((3, 6, 40), [0, 0, 1, 0, 1, -20])],
)
def test_pad_interior_copy_stays_inside_the_slice(shape: tuple[int, ...], pads: list[int]
                                                  ) -> None:
    """In the scheduled IR, the interior copy ("pad" block) of a slice-then-pad runs over no
    more than the slice on each axis and stores inside the padded buffer."""
    from dlc.dialects.loop.ops import BlockOp, LoadOp, StoreOp
    from dlc.frontends.onnx.importer import import_onnx
    from dlc.rewrites.schedule.common import constant_value
    from xdsl.dialects import arith

    rank = len(shape)
    sliced = [dim + min(b, 0) + min(e, 0)
              for b, e, dim in zip(pads[:rank], pads[rank:], shape, strict=True)]
    loops, scheduled = scheduled_loops(str(import_onnx(pad_model(shape, pads))))
    extents = {loop.induction_var: loop.trip_count() for loop in loops}
    copies = [op for op in scheduled.walk() if isinstance(op, BlockOp)
              and op.block_name.data == "pad"]
    assert copies
    for copy in copies:
        load = next(op for op in copy.walk() if isinstance(op, LoadOp))
        store = next(op for op in copy.walk() if isinstance(op, StoreOp))
        for axis, index in enumerate(load.indices):
            # A leading axis of one iteration is indexed by the constant 0, not a loop.
            extent = extents.get(index, None if constant_value(index) is None
                                 else constant_value(index) + 1)
            assert extent is not None and extent <= sliced[axis], (axis, sliced)
        padded = store.memref.type.get_shape()  # type: ignore[attr-defined]
        for axis, index in enumerate(store.indices):
            shift = 0
            if isinstance(index.owner, arith.AddiOp):
                shift = constant_value(index.owner.rhs) or 0
                index = index.owner.lhs
            stored = extents.get(index, (constant_value(index) or 0) + 1)
            assert stored + shift <= padded[axis], (axis, padded)  # type: ignore[operator]


# -- long float sums: vector partial sums over blocks, combined pairwise ------------------------


def reduce_text(shape: tuple[int, ...], axes: tuple[int, ...], kind: str = "sum") -> str:
    kept = [size for axis, size in enumerate(shape) if axis not in axes]
    source = f"tensor<{'x'.join(map(str, shape))}xf32>"
    result = f"tensor<{''.join(f'{size}x' for size in kept)}f32>"
    return f"""
func.func @r(%x: {source}) -> {result} {{
  %r = graph.reduce %x {{axes = array<i64: {', '.join(map(str, axes))}>, keepdims = false,
      kind = "{kind}"}} : ({source}) -> {result}
  func.return %r : {result}
}}
"""


def test_sum_of_ones_beyond_f32_integers_is_exact() -> None:
    """2**25 ones: a single f32 accumulator stops at 2**24 (16,777,216); partial sums do not."""
    n = 2**25
    result = compiled(reduce_text((n,), (0,)), 1)(np.ones(n, np.float32))
    assert float(result) == float(n)


@pytest.mark.parametrize("log2n", [20, 22, 24])
def test_long_sum_is_as_accurate_as_pairwise_summation(log2n: int) -> None:
    """Uniform [0, 1) inputs of 2**20..2**24 values sum within 1e-6 of the float64 sum (a single
    f32 accumulator was 2.7e-5..6.5e-5 off at 2**24)."""
    x = RNG.random(2**log2n, dtype=np.float32)
    result = compiled(reduce_text(x.shape, (0,)), 1)(x)
    expected = x.astype(np.float64).sum()
    assert abs(float(result) - expected) / expected < 1e-6


def test_long_row_sums_and_means_are_accurate() -> None:
    """Rows of 2**18 values (a row reduction with spatial loops, its mean's epilogue fused)."""
    x = RNG.random((3, 2**18), dtype=np.float32) + np.float32(1.0)
    for kind, reference in (("sum", np.sum), ("mean", np.mean)):
        result = compiled(reduce_text(x.shape, (1,), kind), 2)(x)
        expected = reference(x.astype(np.float64), axis=1)
        np.testing.assert_allclose(result, expected, rtol=1e-6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.lists(st.integers(1, 300), min_size=2, max_size=3).map(tuple),
    data=st.data(), kind=st.sampled_from(["sum", "mean"]), threads=st.sampled_from([1, 2]),
)
def test_reductions_over_inner_and_outer_axes_match_numpy(
    shape: tuple[int, ...], data: st.DataObject, kind: str, threads: int
) -> None:
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    x = RNG.standard_normal(shape, dtype=np.float32)
    result = compiled(reduce_text(shape, axes, kind), threads)(x)
    reference = np.sum if kind == "sum" else np.mean
    expected = reference(x.astype(np.float64), axis=axes)
    # A sum that cancels to near zero has an error relative to its terms, not to itself: bound
    # the error by the terms' magnitude (float32 blocked accumulation: well under 1e-6 of it).
    scale = reference(np.abs(x.astype(np.float64)), axis=axes)
    assert np.all(np.abs(result - expected) <= 1e-6 * scale + 1e-6)


@pytest.mark.parametrize("shape", [(5, 7), (2, 1, 9), (3, 4, 1)])
@pytest.mark.parametrize("kind", ["sum", "max"])
def test_a_reduction_to_a_scalar_has_no_parallel_loop_to_mark(shape: tuple[int, ...],
                                                              kind: str) -> None:
    """Reducing every axis leaves no spatial loop: the short merged row is scheduled without
    one (differential fuzz cases 273 and 288 of seed 2 crashed here)."""
    x = np.random.default_rng(7).standard_normal(shape, dtype=np.float32)
    result = compiled(reduce_text(shape, tuple(range(len(shape))), kind), 2)(x)
    if kind == "max":
        np.testing.assert_array_equal(result, np.max(x))
        return
    # A sum that cancels to near zero has an error relative to its terms, not to itself (the
    # module's RNG once drew 35 terms summing to 0.025: 3.6e-7 off, 1.5e-5 of the sum).
    expected = np.sum(x.astype(np.float64))
    assert abs(float(result) - expected) <= 1e-6 * np.sum(np.abs(x.astype(np.float64)))


def test_long_row_sum_is_scheduled_in_partial_sums() -> None:
    """The partial-sums rule keys on the axis's extent: a row of at least a block (16 lanes x
    8 accumulators with AVX-512, 8 x 8 with AVX2) gets a `UxL` tile of partials, a row of at
    least two vectors one accumulator per whole vector up to U; a shorter one keeps the
    reassociating fallback."""
    for target, lanes, extent, vectors in ((AVX512, 16, 1000, 8), (AVX2, 8, 1000, 8),
                                           (AVX512, 16, 128, 8), (AVX2, 8, 65, 8),
                                           (AVX512, 16, 40, 2), (AVX512, 16, 31, 0)):
        loops, parsed = scheduled_loops(reduce_text((4, extent), (1,)), target=target)
        tiles = [op for op in parsed.walk() if isinstance(op, AllocOp)]  # type: ignore[attr-defined]
        shapes = [tuple(tile.result.type.get_shape()) for tile in tiles]
        split = vectors > 0
        assert ((vectors, lanes) in shapes) == split and len(shapes) == split, (
            target, extent, shapes)
        if split:
            # the first block fills the tile (its rows unrolled, lanes vectorized); the blocks
            # after it, if any, accumulate in a loop from the second block on
            first = next(loop for loop in loops if loop.axis.data == "r0.v")
            assert first.trip_count() == vectors
            assert [loop.kind.data for loop in first.walk() if isinstance(loop, ForOp)] == [
                "unrolled", "vectorized"]
            outer = [loop for loop in loops if loop.axis.data == "r0.o"]
            assert len(outer) == (extent >= 2 * vectors * lanes)
            if outer:
                assert outer[0].constant_bounds() == (
                    vectors * lanes, extent - extent % (vectors * lanes), vectors * lanes)
                inner = [op for op in outer[0].walk() if isinstance(op, ForOp)][1:]
                assert [loop.kind.data for loop in inner] == ["unrolled", "vectorized"]


@pytest.mark.parametrize(("target", "vectors"), [
    ("llvm -mcpu=znver4", 8),  # one 512-bit FMA port, 4 cycles: 4 would do for speed
    ("llvm -mcpu=sapphirerapids", 8),  # two ports, 4 cycles
    ("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", 14),  # two ports, 7 cycles
])
def test_a_long_sum_has_as_many_partials_on_every_core(target: str, vectors: int) -> None:
    """The partial sums' count bounds a long sum's rounding error (n / B values into each):
    a core with one FMA port keeps as many as one with two (the 2**24 sum above was 1.1e-6 off
    with 4 vectors on a one-port host), and more where its adders need more."""
    from dlc.rewrites.schedule_rules.config import CpuConfig
    from dlc.rewrites.schedule_rules.partial_sums import block_size
    from dlc.target import parse_target

    config = CpuConfig.for_target(parse_target(target))
    assert block_size(config, f32) == (vectors, config.lanes(f32))


@given(count=st.integers(1, 40))
def test_halvings_fold_every_partial_into_the_first_once(count: int) -> None:
    """Each step adds partial `v + offset` into `v` for `v < folded`, never reading a partial
    already folded away: any count (14 on cortex-a72) ends with every value in partial 0."""
    from dlc.rewrites.schedule_rules.partial_sums import halvings

    partials = [{index} for index in range(count)]
    alive = count
    for folded, offset in halvings(count):
        assert folded + offset == alive and 0 < folded <= offset
        for v in range(folded):
            assert not partials[v] & partials[v + offset]
            partials[v] |= partials[v + offset]
        alive = offset
    assert alive == 1 and partials[0] == set(range(count))


AARCH64 = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"
"""2 FMA units x 7 cycles: 14 partial-sum vectors of 4 lanes, not a power of two."""


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extent=st.integers(57, 400), kind=st.sampled_from(["sum", "max"]))
def test_partials_of_a_target_with_14_accumulators_in_the_loop_interpreter(
    extent: int, kind: str
) -> None:
    """Rows longer than cortex-a72's block (14 x 4) combine all 14 partials (the fold once
    dropped the odd ones: a 64-value window summed 56 of them, found by the AArch64 build of
    the C example)."""
    from dlc.dialects.loop.interpreter import run_function

    _, parsed = scheduled_loops(reduce_text((3, extent), (1,), kind), target=AARCH64)
    shapes = [tuple(op.result.type.get_shape()) for op in parsed.walk()
              if isinstance(op, AllocOp)]
    assert (14, 4) in shapes, shapes
    x = RNG.standard_normal((3, extent), dtype=np.float32)
    (result,) = run_function(parsed, "r", [x])
    expected = x.astype(np.float64).sum(axis=1) if kind == "sum" else x.max(axis=1)
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_long_row_max_and_min_in_partials_are_exact(kind: str) -> None:
    """A max or min over rows longer than a block runs in vector partials that start at the
    combiner's identity: results equal NumPy's exactly, an infinity or a NaN in a row kept."""
    x = RNG.standard_normal((5, 1003), dtype=np.float32)
    x[1, 700] = np.inf
    x[2, 5] = -np.inf
    x[3, 999] = np.nan  # in the scalar tail
    x[4, 17] = np.nan   # in the vector blocks
    text = reduce_text(x.shape, (1,), kind)
    loops, _ = scheduled_loops(text, target=AVX512)
    assert any(loop.axis.data == "r0.o" for loop in loops)
    result = compiled(text, 1)(x)
    expected = np.max(x, axis=1) if kind == "max" else np.min(x, axis=1)
    np.testing.assert_array_equal(result, expected)


def global_avg_pool_text(c: int, h: int, w: int) -> str:
    x_t, y_t = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<1x{c}x1x1xf32>"
    return f"""
func.func @gap(%x: {x_t}) -> {y_t} {{
  %r = graph.global_avg_pool2d %x : ({x_t}) -> {y_t}
  func.return %r : {y_t}
}}
"""


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.integers(1, 40), h=st.integers(1, 20), w=st.integers(1, 20),
       threads=st.sampled_from([1, 2]))
def test_global_avg_pool_matches_numpy(c: int, h: int, w: int, threads: int) -> None:
    """Windows of every size: merged into one contiguous reduction (in partial sums when longer
    than a block of 128, else one loop LLVM vectorizes), or left as two loops (one row)."""
    x = RNG.standard_normal((1, c, h, w), dtype=np.float32)
    got = compiled(global_avg_pool_text(c, h, w), threads)(x)
    np.testing.assert_allclose(got, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


def test_global_avg_pool_window_is_one_reduction_in_the_interpreter() -> None:
    """The scheduled 14x14 window reads a collapsed view over 196 elements in partial sums;
    the loop interpreter runs the schedule (the view shares the input's buffer) and agrees with
    NumPy."""
    from dlc.dialects.loop.interpreter import run_function
    from xdsl.dialects import memref

    loops, scheduled = scheduled_loops(global_avg_pool_text(6, 14, 14))  # type: ignore[misc]
    views = [op for op in scheduled.walk() if isinstance(op, memref.CollapseShapeOp)]
    assert [tuple(view.result.type.get_shape()) for view in views] == [(1, 6, 196)]
    assert any(loop.axis.data == "r0.r1.fused.v" for loop in loops)
    x = RNG.standard_normal((1, 6, 14, 14), dtype=np.float32)
    (out,) = run_function(scheduled, "gap", [x])
    np.testing.assert_allclose(out, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


def depthwise_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, pad: int
                        ) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[2]
    out_h = (padded.shape[2] - k) // stride + 1
    out_w = (padded.shape[3] - k) // stride + 1
    out = np.zeros((1, x.shape[1], out_h, out_w), dtype=np.float64)
    for i in range(k):
        for j in range(k):
            window = padded[:, :, i: i + stride * out_h: stride, j: j + stride * out_w: stride]
            out += window * w[None, :, 0, i, j, None, None]
    return (out + b[None, :, None, None]).astype(np.float32)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.integers(1, 24), size=st.integers(3, 30), k=st.sampled_from([3, 5]),
       stride=st.sampled_from([1, 2]), threads=st.sampled_from([1, 2]))
def test_padded_depthwise_conv_matches_numpy(c: int, size: int, k: int, stride: int,
                                             threads: int) -> None:
    """A depthwise conv with 'same' padding: its pad nest runs in the conv's channel loop
    (loop-fuse-nests) on a padded plane private to the iteration, border filled, interior
    copied."""
    pad = k // 2
    out = (size + 2 * pad - k) // stride + 1
    x_t, w_t = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<{c}x1x{k}x{k}xf32>"
    y_t = f"tensor<1x{c}x{out}x{out}xf32>"
    text = f"""
func.func @dw(%x: {x_t}, %w: {w_t}, %b: tensor<{c}xf32>) -> {y_t} {{
  %y = graph.conv2d %x, %w, %b {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>,
      strides = array<i64: {stride}, {stride}>, groups = {c} : i64}}
      : ({x_t}, {w_t}, tensor<{c}xf32>) -> {y_t}
  func.return %y : {y_t}
}}
"""
    x = RNG.standard_normal((1, c, size, size), dtype=np.float32)
    w = RNG.standard_normal((c, 1, k, k), dtype=np.float32)
    b = RNG.standard_normal(c, dtype=np.float32)
    got = compiled(text, threads)(x, w, b)
    np.testing.assert_allclose(got, depthwise_reference(x, w, b, stride, pad),
                               rtol=1e-4, atol=1e-4)


def depthwise_text(c: int, size: int, k: int, stride: int, pad: int) -> str:
    out = (size + 2 * pad - k) // stride + 1
    x_t, w_t = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<{c}x1x{k}x{k}xf32>"
    y_t = f"tensor<1x{c}x{out}x{out}xf32>"
    return f"""
func.func @dw(%x: {x_t}, %w: {w_t}, %b: tensor<{c}xf32>) -> {y_t} {{
  %y = graph.conv2d %x, %w, %b {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>,
      strides = array<i64: {stride}, {stride}>, groups = {c} : i64}}
      : ({x_t}, {w_t}, tensor<{c}xf32>) -> {y_t}
  func.return %y : {y_t}
}}
"""


@st.composite
def depthwise_shapes(draw: st.DrawFn) -> tuple[int, int, int, int, int]:
    """(channels, plane size 1..20, window 3, 5 or 7, stride 1 or 2, padding that leaves at
    least one output)."""
    k = draw(st.sampled_from([3, 5, 7]))
    size = draw(st.integers(1, 20))
    pad = draw(st.integers(max(0, -(-(k - size) // 2)), k // 2))
    return draw(st.integers(1, 70)), size, k, draw(st.sampled_from([1, 2])), pad


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=depthwise_shapes(), threads=st.sampled_from([1, 2]))
@example(shape=(40, 7, 5, 1, 2), threads=1)   # a full panel and a 8-channel one; 121 = 7 * 16 + 9
@example(shape=(33, 14, 5, 2, 2), threads=2)  # 324 = 20 * 16 + 4 points per plane
@example(shape=(64, 5, 7, 1, 3), threads=1)   # 121 points again, two full panels
@example(shape=(32, 2, 3, 1, 1), threads=1)   # a 16-point plane: blocks only, no last points
@example(shape=(32, 14, 5, 2, 2), threads=2)  # read through its pad: 196 = 12 * 16 + 4 points
@example(shape=(96, 9, 3, 1, 1), threads=2)   # through its pad, three panels, 81 points
def test_depthwise_channel_kernel_matches_numpy(shape: tuple[int, int, int, int, int],
                                                threads: int) -> None:
    """A depthwise conv with its input plane packed channel-last for the channel kernel
    (`plane_packing`: blocks of 16 points transposed in registers, the last points one by
    one, a partial panel of channels point by point), taken wherever it fits (its cost model
    bypassed), against NumPy."""
    from dlc.rewrites.schedule_rules import reduction

    c, size, k, stride, pad = shape
    x = RNG.standard_normal((1, c, size, size), dtype=np.float32)
    w = RNG.standard_normal((c, 1, k, k), dtype=np.float32)
    b = RNG.standard_normal(c, dtype=np.float32)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reduction, "_plane_kernel_pays", lambda *args: True)
        got = compiled(depthwise_text(c, size, k, stride, pad), threads)(x, w, b)
    np.testing.assert_allclose(got, depthwise_reference(x, w, b, stride, pad),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("c", "size", "k", "stride", "plane"), [
    (64, 7, 5, 1, True),     # 7 of 16 lanes, a 5x5 window: the pack pays
    (64, 7, 7, 1, True),
    (960, 7, 3, 1, True),    # a 3x3 window too: each row-kernel FMA has its own input load
    (40, 7, 5, 1, True),     # 40 channels fill 40 of 48 lanes
    (672, 14, 5, 2, True),   # 6.6 packed inputs per output, but stride-2 rows shuffle
    (576, 14, 3, 1, False),  # 14-wide rows fill more than half of 16 lanes
    (672, 14, 5, 1, False),
    (120, 28, 5, 1, False),  # 28-wide rows: two vectors a row
    (144, 56, 3, 2, False),  # 28 of 32 lanes, 4.3 packed inputs per output
    (96, 56, 7, 1, False),   # 56 of 64 lanes; the packed plane (1.5 MB) exceeds the L2
    (64, 16, 5, 1, False),   # 16-wide rows fill their lanes
])
def test_depthwise_channel_kernel_by_window_and_plane(c: int, size: int, k: int, stride: int,
                                                      plane: bool) -> None:
    """The depthwise channel kernel (its input plane packed, `conv2d.pack_plane`) is chosen by
    the lanes it fills against the row kernel's, the window, the row kernel's input reads
    (`row_input_cost`: strided rows shuffle) and the packed inputs per output
    (`PLANE_PACK_COST`), when the packed plane fits the L2."""
    from dlc.dialects.loop.ops import BlockOp

    _, parsed = scheduled_loops(depthwise_text(c, size, k, stride, k // 2), threads=1)
    names = {op.block_name.data for op in parsed.walk() if isinstance(op, BlockOp)}
    assert ("conv2d.pack_plane" in names) == plane


@pytest.mark.parametrize(("c", "through"), [(672, True), (64, True), (40, False)])
def test_depthwise_plane_pack_reads_through_the_pad(c: int, through: bool) -> None:
    """With whole panels of channels (NR = 32 divides them), the plane pack reads the
    unpadded input and zero-fills the border of the packed plane, and the pad nest (its buffer
    and its blocks) is gone; with a partial panel the pad stays and the pack reads it."""
    from dlc.dialects.loop.ops import AllocOp, BlockOp

    _, parsed = scheduled_loops(depthwise_text(c, 14, 5, 2, 2), threads=2)
    names = {op.block_name.data for op in parsed.walk() if isinstance(op, BlockOp)}
    assert "conv2d.pack_plane" in names
    assert ("conv2d.pack_plane.fill" in names) == through
    assert ("pad" in names) != through
    padded = [op for op in parsed.walk() if isinstance(op, AllocOp)
              and op.result.type.get_shape()[-2:] == (18, 18)]  # type: ignore[union-attr]
    assert bool(padded) != through


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.integers(1, 300), o=st.integers(1, 40), threads=st.sampled_from([1, 2]))
def test_conv1x1_on_one_pixel_matches_numpy(c: int, o: int, threads: int) -> None:
    """A squeeze-excite GEMV (1x1 conv on a 1x1 image, then hard sigmoid): the channel loop,
    its unit kernel loops dropped and unit axes folded into views, in partial sums when long."""
    x_t, w_t, y_t = (f"tensor<1x{c}x1x1xf32>", f"tensor<{o}x{c}x1x1xf32>",
                     f"tensor<1x{o}x1x1xf32>")
    text = f"""
func.func @se(%x: {x_t}, %w: {w_t}, %b: tensor<{o}xf32>) -> {y_t} {{
  %r = graph.conv2d %x, %w, %b : ({x_t}, {w_t}, tensor<{o}xf32>) -> {y_t}
  %y = graph.relu %r : {y_t}
  func.return %y : {y_t}
}}
"""
    x = RNG.standard_normal((1, c, 1, 1), dtype=np.float32)
    w = RNG.standard_normal((o, c, 1, 1), dtype=np.float32)
    b = RNG.standard_normal(o, dtype=np.float32)
    got = compiled(text, threads)(x, w, b)
    expected = np.maximum(np.einsum("oc,c->o", w[:, :, 0, 0].astype(np.float64),
                                    x[0, :, 0, 0].astype(np.float64)) + b, 0)
    np.testing.assert_allclose(got[0, :, 0, 0], expected, rtol=1e-4, atol=1e-4)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.integers(1, 20), h=st.integers(1, 12), w=st.integers(1, 20),
       threads=st.sampled_from([1, 2]))
def test_broadcast_scale_of_planes_matches_numpy(c: int, h: int, w: int, threads: int) -> None:
    """x * s (s per channel) + x: planes whose rows merge into one run (`merge_rows`, rows
    not a whole number of vectors) or stay rows, vs NumPy."""
    x_t, s_t = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<1x{c}x1x1xf32>"
    text = f"""
func.func @scale(%x: {x_t}, %s: {s_t}) -> {x_t} {{
  %m = graph.mul %x, %s : ({x_t}, {s_t}) -> {x_t}
  %y = graph.add %m, %x : ({x_t}, {x_t}) -> {x_t}
  func.return %y : {x_t}
}}
"""
    x = RNG.standard_normal((1, c, h, w), dtype=np.float32)
    s = RNG.standard_normal((1, c, 1, 1), dtype=np.float32)
    np.testing.assert_allclose(compiled(text, threads)(x, s), x * s + x, rtol=1e-6, atol=1e-6)


def resize_text(shape: list[int], sizes: list[int], scales: list[float], attrs: str) -> str:
    x_t, y_t = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (shape, sizes))
    return f"""
func.func @resize(%x: {x_t}) -> {y_t} {{
  %y = graph.resize %x {{sizes = array<i64: {', '.join(map(str, sizes))}>,
    scales = array<f64: {', '.join(map(repr, scales))}>, {attrs}}} : ({x_t}) -> {y_t}
  func.return %y : {y_t}
}}
"""


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    c=st.integers(1, 3), h=st.integers(1, 9), w=st.integers(2, 23),
    scales=st.tuples(*[st.sampled_from([0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0])] * 2),
    mode=st.sampled_from(["nearest", "linear"]),
    coordinates=st.sampled_from(["half_pixel", "align_corners", "asymmetric",
                                 "pytorch_half_pixel", "tf_half_pixel_for_nn"]),
    rounding=st.sampled_from(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]),
    threads=st.sampled_from([1, 2]),
)
def test_resize_gathers_match_the_graph_interpreter(
    c: int, h: int, w: int, scales: tuple[float, float], mode: str, coordinates: str,
    rounding: str, threads: int,
) -> None:
    """Resize compiled with the default schedule (rows vectorized, the source columns gathered
    at indices read from the tap tables: nearest by the elementwise rule, linear by the
    register-tile kernel, one tap sum per axis) vs the graph interpreter, at random shapes and
    integer and non-integer (also shrinking) scales."""
    from dlc.dialects.graph.interpreter import run_module

    if mode == "linear" and coordinates == "tf_half_pixel_for_nn":
        coordinates = "half_pixel"
    shape = [1, c, h, w]
    sizes = [1, c, max(1, int(h * scales[0])), max(1, int(w * scales[1]))]
    attrs = (f'mode = "{mode}", coordinate_transformation_mode = "{coordinates}", '
             f'nearest_mode = "{rounding}"')
    text = resize_text(shape, sizes, [1.0, 1.0, *scales], attrs)
    x = RNG.standard_normal(shape, dtype=np.float32)
    (expected,) = run_module(module(text), [x])
    np.testing.assert_allclose(compiled(text, threads)(x), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_rows_are_vectorized_with_gathers(mode: str) -> None:
    """The source column of each output is read from a tap table contiguously along the row:
    nearest's row loop is vectorized (elementwise rule); linear is one tap sum per axis (the
    columns first, gathered, then whole rows mixed), each a register-tile kernel with
    vectorized columns."""
    text = resize_text([1, 4, 8, 12], [1, 4, 16, 24], [1.0, 1.0, 2.0, 2.0],
                       f'mode = "{mode}"')
    loops, parsed = scheduled_loops(text, threads=1, target=AVX2)
    kinds = {loop.axis.data: loop.kind.data for loop in loops}
    assert kinds["i3" if mode == "nearest" else "i3.i"] == "vectorized"
    if mode == "linear":
        assert len([op for op in parsed.walk() if isinstance(op, AllocOp)]) >= 2
        assert all(loop.kind.data == "vectorized" for loop in loops if loop.axis.data == "i3.i")


def conv1x1_text(c: int, o: int, h: int, w: int, residual: bool = False) -> str:
    x_t, w_t, y_t = (f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<{o}x{c}x1x1xf32>",
                     f"tensor<1x{o}x{h}x{w}xf32>")
    add = (f"%s = graph.add %y, %z : ({y_t}, {y_t}) -> {y_t}" if residual
           else f"%s = graph.relu %y : {y_t}")
    return f"""
func.func @pw(%x: {x_t}, %w: {w_t}, %b: tensor<{o}xf32>, %z: {y_t}) -> {y_t} {{
  %r = graph.conv2d %x, %w, %b : ({x_t}, {w_t}, tensor<{o}xf32>) -> {y_t}
  %y = graph.relu %r : {y_t}
  {add}
  func.return %s : {y_t}
}}
"""


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.integers(1, 70), o=st.integers(1, 40), h=st.integers(1, 16), w=st.integers(1, 20),
       residual=st.booleans(), threads=st.sampled_from([1, 2]))
@example(c=64, o=48, h=7, w=7, residual=True, threads=2)  # the channel kernel on merged rows
@example(c=64, o=48, h=7, w=7, residual=False, threads=1)
def test_pointwise_conv_matches_numpy(c: int, o: int, h: int, w: int, residual: bool,
                                      threads: int) -> None:
    """1x1 convs (bias, ReLU, maybe a residual add: a second buffer read by whole rows) over
    planes whose rows merge into one run (`merge_rows`, few input channels) or stay rows for
    the channel kernel (many), vs NumPy."""
    x = RNG.standard_normal((1, c, h, w), dtype=np.float32)
    wt = RNG.standard_normal((o, c, 1, 1), dtype=np.float32)
    b = RNG.standard_normal(o, dtype=np.float32)
    z = RNG.standard_normal((1, o, h, w), dtype=np.float32)
    got = compiled(conv1x1_text(c, o, h, w, residual), threads)(x, wt, b, z)
    y = np.maximum(np.einsum("oc,nchw->nohw", wt[:, :, 0, 0].astype(np.float64), x)
                   + b[None, :, None, None], 0)
    expected = y + z if residual else np.maximum(y, 0)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def conv1x1_nhwc_text(n: int, c: int, o: int, h: int, w: int, epilogue: bool) -> str:
    x_t, w_t, y_t = (f"tensor<{n}x{h}x{w}x{c}xf32>", f"tensor<1x1x{c}x{o}xf32>",
                     f"tensor<{n}x{h}x{w}x{o}xf32>")
    conv = (f"%r = graph.conv2d %x, %w, %b {{layout = \"NHWC\", kernel_layout = \"HWIO\"}} : "
            f"({x_t}, {w_t}, tensor<{o}xf32>) -> {y_t}")
    tail = f"%y = graph.relu %r : {y_t}\n  func.return %y" if epilogue else "func.return %r"
    return f"""
func.func @pw_nhwc(%x: {x_t}, %w: {w_t}, %b: tensor<{o}xf32>) -> {y_t} {{
  {conv}
  {tail} : {y_t}
}}
"""


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 2), c=st.integers(1, 70), o=st.integers(1, 80), h=st.integers(1, 9),
       w=st.integers(1, 15), epilogue=st.booleans(), threads=st.sampled_from([1, 2]))
def test_channels_last_pointwise_conv_matches_numpy(n: int, c: int, o: int, h: int, w: int,
                                                    epilogue: bool, threads: int) -> None:
    """Channels-last 1x1 convs (bias, maybe a fused ReLU), whose pixel rows
    merge into one axis (`merge_axes`) and whose HWIO weight is packed as a 2-D B
    (`drop_unit_heads`), vs NumPy."""
    x = RNG.standard_normal((n, h, w, c), dtype=np.float32)
    wt = RNG.standard_normal((1, 1, c, o), dtype=np.float32)
    b = RNG.standard_normal(o, dtype=np.float32)
    got = compiled(conv1x1_nhwc_text(n, c, o, h, w, epilogue), threads)(x, wt, b)
    r = np.einsum("nhwc,co->nhwo", x.astype(np.float64), wt[0, 0]) + b
    np.testing.assert_allclose(got, np.maximum(r, 0) if epilogue else r, rtol=1e-4, atol=1e-4)


def test_channels_last_pointwise_conv_is_a_packed_gemm_over_pixels() -> None:
    """The schedule of a channels-last 1x1 conv on a 7x7 plane: one loop over the 49 pixels'
    row blocks and the packed weight (what the CPU pipeline makes of a MobileNet's pointwise
    convs in their depthwise regions)."""
    from dlc.pipelines import parse_pipeline

    text = conv1x1_nhwc_text(1, 192, 1152, 7, 7, True)
    scheduled = module(text)
    for module_pass in parse_pipeline(
            "convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,"
            "loop-default-schedule{target=\"llvm -mcpu=skylake-avx512 -num-cores=2\"}"):
        module_pass.apply(make_context(), scheduled)
    printed = str(scheduled)
    assert "memref<1x7x7x192xf32> into memref<1x49x192xf32>" in printed
    assert "memref<1x1x192x1152xf32> into memref<192x1152xf32>" in printed
    assert "loop.block \"conv2d.pack\"" in printed


@pytest.mark.parametrize(
    ("c", "o", "size", "threads", "merged", "columns_first"),
    [(16, 64, 55, 1, True, False), (16, 64, 55, 2, True, True), (256, 64, 56, 1, True, True),
     (256, 1024, 16, 2, True, False)],
)
def test_pointwise_conv_kernel_choice(c: int, o: int, size: int, threads: int, merged: bool,
                                      columns_first: bool) -> None:
    """A 1x1 conv's plane merges into one run, for the row kernel over (output channels x
    plane), when the channel kernel's fuller lanes would not pay for its transposed epilogue
    over the input channels (16 or 256 of them against rows of 55 or 56 lanes); when the input
    (K x plane) exceeds half the L2, or, with threads to share the work, exceeds the weight (K
    x output channels: each thread would read all of it), the loop over the plane's column
    blocks is outermost (and parallel), each block's input reused by every row block."""
    from xdsl.dialects import memref

    loops, scheduled = scheduled_loops(  # type: ignore[misc]
        conv1x1_text(c, o, size, size), threads=threads, l2_bytes=1 << 20)
    views = [op for op in scheduled.walk() if isinstance(op, memref.CollapseShapeOp)]
    assert bool(views) == merged
    if merged:
        assert {tuple(view.result.type.get_shape()) for view in views} >= {
            (1, c, size * size), (1, o, size * size)}
        outer = next(loop for loop in loops if loop.axis.data in ("i2.i3.fused.o", "i1.o"))
        assert outer.axis.data == ("i2.i3.fused.o" if columns_first else "i1.o")
        assert (outer.kind.data == "parallel") == (threads > 1)


@pytest.mark.parametrize(("c", "o", "size"), [(960, 32, 7), (512, 256, 14), (512, 1000, 13)])
def test_pointwise_channel_kernel_rows(c: int, o: int, size: int) -> None:
    """A 1x1 conv over rows that fill few lanes of many input channels gets the channel kernel
    (lanes over the output channels). Its rows are the plane's points, merged into one run, in
    tiles over the whole plane (8 rows of 169 for 512 -> 1000 on 13x13, not 8 + 5 of each
    row), with the loop over the output channels' weight panels outside them (each panel read
    once, not once per output row: 960 -> 32 on 7x7, 512 -> 256 on 14x14; 512 -> 1000, a
    weight larger than half the L2, has them outermost already)."""
    from xdsl.dialects import memref

    loops, scheduled = scheduled_loops(  # type: ignore[misc]
        conv1x1_text(c, o, size, size), threads=2, l2_bytes=1 << 20)
    axes = {(loop.axis.data, loop.kind.data) for loop in loops}
    assert ("i1.l", "vectorized") in axes  # lanes over the output channels
    views = [op for op in scheduled.walk() if isinstance(op, memref.CollapseShapeOp)]
    assert {tuple(view.result.type.get_shape()) for view in views} >= {
        (1, c, size * size), (1, o, size * size)}
    assert ("i2.i3.fused.i", "unrolled") in axes
    first = next(loop for loop in loops if loop.axis.data in ("i1.o", "i2", "i2.i3.fused.o"))
    assert first.axis.data == ("i1.o" if o > 32 else "i2.i3.fused.o")


def grouped_text(groups: int, cg: int, og: int, size: int, k: int, stride: int) -> str:
    pad = k // 2
    out = (size + 2 * pad - k) // stride + 1
    c, o = groups * cg, groups * og
    x_t, w_t = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<{o}x{cg}x{k}x{k}xf32>"
    y_t = f"tensor<1x{o}x{out}x{out}xf32>"
    return f"""
func.func @g(%x: {x_t}, %w: {w_t}, %b: tensor<{o}xf32>) -> {y_t} {{
  %c = graph.conv2d %x, %w, %b {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>,
      strides = array<i64: {stride}, {stride}>, groups = {groups} : i64}}
      : ({x_t}, {w_t}, tensor<{o}xf32>) -> {y_t}
  %y = graph.relu %c : {y_t}
  func.return %y : {y_t}
}}
"""


def grouped_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, groups: int, stride: int
                      ) -> np.ndarray:
    k = w.shape[2]
    pad = k // 2
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out_h = (padded.shape[2] - k) // stride + 1
    cg, og = w.shape[1], w.shape[0] // groups
    out = np.zeros((1, w.shape[0], out_h, out_h))
    for g in range(groups):
        for i in range(k):
            for j in range(k):
                window = padded[0, g * cg:(g + 1) * cg,
                                i: i + stride * out_h: stride, j: j + stride * out_h: stride]
                out[0, g * og:(g + 1) * og] += np.einsum(
                    "chw,oc->ohw", window, w[g * og:(g + 1) * og, :, i, j])
    return np.maximum(out + b[None, :, None, None], 0).astype(np.float32)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.integers(2, 4), cg=st.integers(2, 9), og=st.sampled_from([4, 16, 32, 48]),
       size=st.integers(3, 15), k=st.sampled_from([1, 3]), stride=st.sampled_from([1, 2]),
       threads=st.sampled_from([1, 2]))
def test_grouped_conv_matches_numpy(groups: int, cg: int, og: int, size: int, k: int,
                                    stride: int, threads: int) -> None:
    """Grouped convs (several input channels per group): with 16 or more outputs per group
    the channel kernel reads the input at the tile's group (`channel_group`), else the row
    kernel; both against NumPy."""
    x = RNG.standard_normal((1, groups * cg, size, size), dtype=np.float32)
    w = RNG.standard_normal((groups * og, cg, k, k), dtype=np.float32)
    b = RNG.standard_normal(groups * og, dtype=np.float32)
    got = compiled(grouped_text(groups, cg, og, size, k, stride), threads)(x, w, b)
    np.testing.assert_allclose(got, grouped_reference(x, w, b, groups, stride),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("og", "channel_kernel"), [(32, True), (16, True), (8, False)])
def test_grouped_conv_takes_the_channel_kernel_when_a_tile_fits_a_group(
        og: int, channel_kernel: bool) -> None:
    """A 3x3 conv in 8 groups over 28-wide rows (28 of 32 lanes): the channel kernel (its weight
    packed, `conv2d.pack`) when NR (16 lanes or a multiple) divides the outputs per group;
    with 8 outputs per group its tiles would span groups, and the row kernel stays."""
    from dlc.dialects.loop.ops import BlockOp

    _, parsed = scheduled_loops(grouped_text(8, 32, og, 28, 3, 1), threads=1)
    names = {op.block_name.data for op in parsed.walk() if isinstance(op, BlockOp)}
    assert ("conv2d.pack" in names) == channel_kernel


def transpose_text(shape: tuple[int, ...], perm: tuple[int, ...]) -> str:
    source = f"tensor<{'x'.join(map(str, shape))}xf32>"
    result = f"tensor<{'x'.join(str(shape[p]) for p in perm)}xf32>"
    return f"""
func.func @t(%x: {source}) -> {result} {{
  %y = graph.transpose %x {{perm = array<i64: {', '.join(map(str, perm))}>}}
      : ({source}) -> {result}
  func.return %y : {result}
}}
"""


@pytest.mark.parametrize("target, lanes, plane, parallel", [
    (AVX512, 16, "i1.i2.fused", ("i1.i2.fused.0", 3136 // 16)),
    (AVX2, 8, "i2", ("i1", 56)),
])
def test_transposing_copy_is_tiled_by_lanes_on_both_axes(
        target: str, lanes: int, plane: str, parallel: tuple[str, int]) -> None:
    """NCHW -> NHWC over a 56 x 56 plane: with 16 lanes (56 not a multiple) the plane's axes
    merge into one of 3136 first, with 8 they do not; then the read's axis (w, or the merged
    plane) and the channels are split by the lanes, the channels' inner loop vectorized around
    the read axis's inner loop of `lanes` iterations (the shape the vectorizer transposes in
    registers), the outermost loop of several iterations parallel."""
    loops, _ = scheduled_loops(transpose_text((1, 64, 56, 56), (0, 2, 3, 1)), target=target)
    kinds = {loop.axis.data: (loop.kind.data, loop.trip_count()) for loop in loops}
    assert kinds[parallel[0]] == ("parallel", parallel[1])
    assert kinds["i3.0"] == ("serial", 64 // lanes)
    assert kinds["i3.1"] == ("vectorized", lanes)
    assert kinds[f"{plane}.1"] == ("serial", lanes)
    order = [loop.axis.data for loop in loops]
    assert order.index(f"{plane}.0") < order.index("i3.0") < order.index("i3.1") < order.index(
        f"{plane}.1")
    vectorized = next(loop for loop in loops if loop.axis.data == "i3.1")
    inner = [op for op in vectorized.walk() if isinstance(op, ForOp) and op is not vectorized]
    assert [loop.axis.data for loop in inner] == [f"{plane}.1"]


@pytest.mark.parametrize("shape, perm", [
    ((1, 64, 56, 56), (0, 2, 3, 1)),   # merged plane, in-register blocks
    ((3, 32, 48), (0, 2, 1)),          # blocks without a merge
    ((2, 40, 24), (0, 2, 1)),          # 40 channels: not whole vectors, left to elementwise
    ((16, 7, 9), (2, 0, 1)),           # a 7 x 9 plane cannot merge to whole vectors
])
def test_transposing_copies_match_numpy(shape: tuple[int, ...], perm: tuple[int, ...]) -> None:
    x = RNG.standard_normal(shape, dtype=np.float32)
    for threads in (1, 2):
        got = compiled(transpose_text(shape, perm), threads)(x)
        np.testing.assert_array_equal(got, np.transpose(x, perm))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.lists(st.sampled_from([1, 3, 8, 16, 24, 32]), min_size=2, max_size=4),
       data=st.data())
def test_transposes_of_any_permutation_match_numpy(shape: list[int], data: st.DataObject
                                                   ) -> None:
    """Every permutation of small shapes whose sizes are and are not multiples of the lanes:
    the transposed-copy rule where it applies, the elementwise one elsewhere."""
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x = RNG.standard_normal(shape, dtype=np.float32)
    got = compiled(transpose_text(tuple(shape), perm), 1)(x)
    np.testing.assert_array_equal(got, np.transpose(x, perm))


def inverted_residuals_model(blocks: int, inputs: int, expanded: int, outputs: int,
                             size: int) -> object:
    """An ONNX model of `blocks` MobileNetV2-style blocks without shortcuts over `size` x
    `size`: a 1x1 conv onto `expanded` channels, a 3x3 depthwise conv, both with relu, a 1x1
    projection onto `outputs` channels (random weights). Two blocks make a depthwise region
    that the `cpu` pipeline runs channels-last."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    nodes, weights = [], []
    value, channels = "x", inputs
    for b in range(blocks):
        shapes = {f"e{b}": (expanded, channels, 1, 1), f"d{b}": (expanded, 1, 3, 3),
                  f"p{b}": (outputs, expanded, 1, 1)}
        weights += [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32)
                                            * 0.3, name) for name, shape in shapes.items()]
        nodes += [helper.make_node("Conv", [value, f"e{b}"], [f"ec{b}"]),
                  helper.make_node("Relu", [f"ec{b}"], [f"er{b}"]),
                  helper.make_node("Conv", [f"er{b}", f"d{b}"], [f"dc{b}"], group=expanded,
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"dc{b}"], [f"dr{b}"]),
                  helper.make_node("Conv", [f"dr{b}", f"p{b}"], [f"y{b}"])]
        value, channels = f"y{b}", outputs
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes, "blocks",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, inputs, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, outputs, size, size])],
        initializer=weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_channels_last_projection_keeps_the_row_kernel() -> None:
    """A channels-last 1x1 conv onto few channels (MobileNetV2's 96 -> 24 projections; here
    48 -> 24 on 8x8, in a depthwise region's NHWC) whose input is an activation: the row
    kernel over the pixels, whose 24 channels fill 3/4 of two vectors, beats the channel kernel
    with the input packed channel-first on every call (`_plane_kernel_pays` counts that pack).
    The kernel reads the input through the view that merges its pixels, which the check for a
    runtime input must see through (it did not: MobileNetV2's 96 -> 24 projection at 56x56 took
    0.198 ms, 0.088 ms with the row kernel, 2 threads). The compiled model matches ONNX's
    reference evaluator."""
    from dlc.dialects.loop.ops import BlockOp
    from dlc.frontends.onnx.importer import import_onnx
    from dlc.pipelines import named_pipeline, with_options
    from dlc.rewrites.schedule.common import base_buffer
    from onnx.reference import ReferenceEvaluator
    from xdsl.dialects import func

    model = inverted_residuals_model(2, 24, 48, 24, 8)
    parsed = import_onnx(model)
    for module_pass in with_options(named_pipeline("cpu"), target=f"{AVX512} -num-cores=2"):
        module_pass.apply(make_context(), parsed)
        if module_pass.name == "loop-default-schedule":
            break
    projections = [op for op in parsed.ops if isinstance(op, func.FuncOp)
                   and op.sym_name.data.startswith("fused_conv2d_") and op.body.blocks
                   and "relu" not in op.sym_name.data]  # the projections (no relu)
    assert projections
    for kernel in projections:
        activation = kernel.body.block.args[0]
        assert str(activation.type) == "memref<1x8x8x48xf32>", "channels-last"
        packs = [block for block in kernel.walk() if isinstance(block, BlockOp)
                 and block.block_name.data.endswith(".pack")]
        assert not any(base_buffer(read) is activation for block in packs
                       for read in block.reads), "the input packed on every call"

    x = RNG.standard_normal((1, 24, 8, 8), dtype=np.float32)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = dlc.compile(model, threads=2, cache=False)(x)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
