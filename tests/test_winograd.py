"""Winograd F(m, 3) along the rows: the algorithm (`dialects/graph/winograd.py`), the pass
`graph-winograd-conv` (results kept, by the graph interpreter) and the compiled
`graph.conv2d_winograd` (against a direct conv in NumPy, in float64)."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.ops import Conv2DOp, Conv2DWinogradOp
from dlc.dialects.graph.winograd import TILES, conv_rows, transform_matrices, transform_weight
from dlc.driver.build import lower
from dlc.rewrites.graph_winograd_conv import choose_tile, multiply_ratio
from dlc.rewrites.tuning.workload import Workload
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import dlc
from tests.test_graph_passes import apply

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def direct_conv(x: np.ndarray, w: np.ndarray, padding: tuple[int, ...]) -> np.ndarray:
    """NCHW / OIHW stride-1 correlation in float64."""
    top, left, bottom, right = padding
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3))
    return np.einsum("ncyxij,kcij->nkyx", windows, w.astype(np.float64))


@pytest.mark.parametrize("tile", TILES)
def test_matrices_compute_a_3_tap_correlation(tile: int) -> None:
    b_t, g, a_t = transform_matrices(tile)
    rng = np.random.default_rng(tile)
    d, taps = rng.standard_normal(tile + 2), rng.standard_normal(3)
    expected = [sum(taps[r] * d[i + r] for r in range(3)) for i in range(tile)]
    np.testing.assert_allclose(a_t @ ((g @ taps) * (b_t @ d)), expected, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(
    tile=st.sampled_from(TILES), n=st.integers(1, 2), c=st.integers(1, 4), k=st.integers(1, 4),
    h=st.integers(3, 11), w=st.integers(1, 9), kw=st.sampled_from([1, 3, 5]),
    padding=st.tuples(*[st.integers(0, 2)] * 4), seed=st.integers(0, 1 << 16),
)
def test_conv_rows_is_the_direct_conv(
    tile: int, n: int, c: int, k: int, h: int, w: int, kw: int, padding: tuple[int, ...],
    seed: int,
) -> None:
    top, left, bottom, right = padding
    if h + top + bottom < 3 or w + left + right < kw:
        return
    rng = np.random.default_rng(seed)
    x, weight = rng.standard_normal((n, c, h, w)), rng.standard_normal((k, c, 3, kw))
    actual = conv_rows(x, transform_weight(weight, tile), padding, tile)
    np.testing.assert_allclose(actual, direct_conv(x, weight, padding), rtol=1e-9, atol=1e-9)


def test_tile_choice() -> None:
    assert multiply_ratio(56, 4) == pytest.approx(0.5)
    assert multiply_ratio(56, 2) == pytest.approx(2 / 3)
    assert choose_tile(56) == 4 and choose_tile(7) == 4  # 2 tiles of 6 beat 4 of 4
    assert choose_tile(6, 2) == 2
    assert choose_tile(1) is None  # 4 or 6 products for 3 direct
    assert choose_tile(2) == 2  # 4 of 6
    assert choose_tile(3) == 4  # 6 of 9; F(2, 3)'s 2 tiles of 4 would save too little
    assert choose_tile(3, 2) is None
    with pytest.raises(ValueError, match="expected a Winograd tile"):
        transform_matrices(3)


# ---------------------------------------------------------------------------------------------
# The pass and the compiled op
# ---------------------------------------------------------------------------------------------


def conv_text(c: int, k: int, h: int, w: int, padding: tuple[int, ...], weight: np.ndarray,
              epilogue: bool) -> str:
    """`relu(conv2d(x, weight, bias) + x)` (or the bare conv), the weight a constant."""
    top, left, bottom, right = padding
    oh, ow = h + top + bottom - 2, w + left + right - weight.shape[3] + 1
    x_t, y_t = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<1x{k}x{oh}x{ow}xf32>"
    w_t = f"tensor<{k}x{c}x3x{weight.shape[3]}xf32>"
    hex_weight = weight.astype("<f4").tobytes().hex()
    body = f"""
  %w = graph.constant dense<"0x{hex_weight}"> : {w_t}
  %r = graph.conv2d %x, %w, %b {{padding = array<i64: {top}, {left}, {bottom}, {right}>}}
      : ({x_t}, {w_t}, tensor<{k}xf32>) -> {y_t}"""
    result = "%r"
    if epilogue:
        body += f"""
  %s = graph.add %r, %x : ({y_t}, {x_t}) -> {y_t}
  %y = graph.relu %s : {y_t}"""
        result = "%y"
    return f"""func.func @main(%x: {x_t}, %b: tensor<{k}xf32>) -> {y_t} {{{body}
  func.return {result} : {y_t}
}}"""


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def graph_level(text: str) -> ModuleOp:
    module = parse(text)
    lower(module, "graph-opt")
    return module


CASES = [
    # channels, height, width, kernel width, padding, tile option, epilogue
    (16, 14, 14, 3, (1, 1, 1, 1), 0, True),    # ResNet's layer3 shape, scaled: 4 tiles of 4
    (16, 9, 10, 3, (1, 1, 1, 1), 0, False),    # a partial last tile (9 = 2 x 4 + 1)
    (16, 7, 12, 3, (0, 2, 1, 0), 2, False),    # asymmetric padding, F(2, 3)
    (16, 8, 16, 1, (1, 0, 1, 0), 4, True),     # a 3x1 kernel
    (16, 6, 9, 5, (1, 2, 1, 2), 4, True),      # a 3x5 kernel
]


@pytest.mark.parametrize(("c", "h", "w", "kw", "padding", "tile", "epilogue"), CASES)
def test_compiled_winograd_conv_matches_the_direct_conv(
    c: int, h: int, w: int, kw: int, padding: tuple[int, ...], tile: int, epilogue: bool,
) -> None:
    rng = np.random.default_rng(c * h * w + kw)
    weight = rng.standard_normal((c, c, 3, kw)).astype(np.float32) / np.sqrt(9 * c)
    text = conv_text(c, c, h, w, padding, weight, epilogue)
    x = rng.standard_normal((1, c, h, w)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    expected = direct_conv(x, weight, padding) + bias.reshape(1, -1, 1, 1)
    if epilogue:
        expected = np.maximum(expected + x, 0)

    module = parse(text)
    apply(module, f"graph-fold-constants,graph-winograd-conv{{tile={tile} min-width=1}}")
    assert [op.tile_value() for op in module.walk() if isinstance(op, Conv2DWinogradOp)] == [
        tile or choose_tile(h + padding[0] + padding[2] - 2)]
    assert not any(isinstance(op, Conv2DOp) for op in module.walk())
    executable = dlc.compile(module, threads=2, cache=False)
    actual = executable(x, bias)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


def test_the_cpu_pipeline_takes_winograd_and_fuses_its_epilogue() -> None:
    from dlc.dialects.graph.ops import AddOp, FusedOp, ReluOp
    from dlc.pipelines import PIPELINES

    weight = np.full((16, 16, 3, 3), 0.01, np.float32)
    module = graph_level(conv_text(16, 16, 14, 14, (1, 1, 1, 1), weight, True))
    assert not any(isinstance(op, Conv2DWinogradOp) for op in module.walk())  # graph-opt: no
    cpu = parse(conv_text(16, 16, 14, 14, (1, 1, 1, 1), weight, True))
    apply(cpu, PIPELINES["cpu"].spec.split(",convert-graph-to-tensor-expr")[0])
    (fused,) = [op for op in cpu.walk() if isinstance(op, FusedOp)]
    assert [type(op) for op in fused.walk() if type(op) in (Conv2DWinogradOp, AddOp, ReluOp)] == [
        Conv2DWinogradOp, AddOp, ReluOp]


def test_bad_tile_option_is_a_pass_error() -> None:
    from xdsl.utils.exceptions import PassFailedException

    with pytest.raises(PassFailedException, match="expected tile 0 or one of"):
        apply(parse(conv_text(16, 16, 8, 8, (1, 1, 1, 1), np.ones((16, 16, 3, 3)), False)),
              "graph-winograd-conv{tile=3}")


def test_narrow_rows_get_the_channel_kernel_with_the_weight_packed_per_transform_row() -> None:
    """The products `M[n, a, k, t, w] = sum U[a, k, c, j] * V[n, a, c, t, w + j]` on 14-wide
    rows (14 of 16 lanes): vectorized over the output channels k, `U` packed into
    `[a][k / NR][c][j][NR]` panels, and the packing folded into a constant at compile time."""
    from dlc.dialects.loop.ops import AllocOp, BlockOp
    from dlc.pipelines import PIPELINES

    weight = np.random.default_rng(3).standard_normal((16, 16, 3, 3)).astype(np.float32)
    module = parse(conv_text(16, 16, 14, 14, (1, 1, 1, 1), weight, False))
    spec = PIPELINES["cpu"].spec
    apply(module, spec[: spec.index(",loop-fold-constant-nests")])
    packed = [op.result.type.get_shape() for op in module.walk()
              if isinstance(op, AllocOp) and (op.result.name_hint or "").endswith("_packed")]
    assert packed == [(6, 16 // min(16, packed[0][-1]), 16, 3, packed[0][-1])], packed
    apply(module, "loop-fold-constant-nests")
    assert not [op for op in module.walk()
                if isinstance(op, BlockOp) and op.block_name.data.endswith(".pack")]


def test_tuning_tasks_are_the_kernels_the_cpu_pipeline_compiles() -> None:
    """`dlc tune` extracts Winograd tasks, as `dlc.compile` makes them; `graph-opt` keeps the
    direct conv (the benchmark's task next to MetaSchedule's)."""
    from dlc.autotune.tasks import extract_tasks

    weight = np.full((16, 16, 3, 3), 0.01, np.float32)
    module = parse(conv_text(16, 16, 14, 14, (1, 1, 1, 1), weight, True))
    (winograd,) = extract_tasks(module, fuse_epilogue=True)
    (direct,) = extract_tasks(module, fuse_epilogue=True, graph_passes="graph-opt")
    assert winograd.name.startswith("fused_conv2d_winograd_add_relu")
    assert direct.name.startswith("fused_conv2d_add_relu")
    # F(4, 3): 4 tiles x 6 transform rows x 3 taps = 72 products per column and channel pair;
    # the direct conv: 14 rows x 9 taps = 126 (the transforms add a few)
    assert winograd.flops < direct.flops


# ---------------------------------------------------------------------------------------------
# compute_inline of the input transform (it read the padded input after its dealloc)
# ---------------------------------------------------------------------------------------------


def winograd_workload() -> Workload:
    """The loop-level kernel the `cpu` pipeline's graph passes make of a 16->16 3x3 conv on
    10-wide rows (padded to 12): pad, `winograd_input`, the products, the output transform."""
    from dlc.autotune.tasks import extract_tasks

    weight = np.random.default_rng(5).standard_normal((16, 16, 3, 3)).astype(np.float32)
    (task,) = extract_tasks(parse(conv_text(16, 16, 10, 10, (1, 1, 1, 1), weight, False)))
    assert task.name.startswith("fused_conv2d_winograd")
    return task.workload


def test_compute_inline_of_the_winograd_input_transform_never_miscompiles() -> None:
    """Regression: inlining `winograd_input` into the products used to succeed, and the copies
    read the padded input after the `loop.dealloc` that follows the transform (compiled: values
    ~5e25 or NaN; the loop interpreter: a use after free). `compute_inline` must refuse before
    changing anything, and the kernel must still compute what the un-inlined one computes."""
    from dlc.dialects.loop.interpreter import run_function
    from dlc.dialects.loop.ops import BlockOp
    from dlc.rewrites.schedule import ScheduleError, compute_inline

    module = winograd_workload().module()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(arg.type.get_shape()).astype(np.float32)
              for arg in module.ops.first.body.block.args[:3]]  # type: ignore[union-attr]
    (expected,) = run_function(module, "kernel", arrays)
    scheduled = module.clone()
    before = str(scheduled)
    (block,) = [op for op in scheduled.walk()
                if isinstance(op, BlockOp) and op.block_name.data == "winograd_input"]
    try:
        compute_inline(block)
    except ScheduleError as error:
        assert "expected the buffers the producer reads to live until its last consumer, " \
            "found a 'loop.dealloc' of memref<1x16x14x12xf32>" in str(error)
        assert str(scheduled) == before
    (actual,) = run_function(scheduled, "kernel", arrays)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def test_the_sketch_space_does_not_propose_inlining_the_input_transform() -> None:
    """The sketch space asks `compute_inline_refusal` (the primitive's own rule): no
    `inline.winograd_input` knob for the Winograd kernel, while the direct conv's pad stays
    inlinable."""
    from dlc.autotune.space import SketchSpace
    from dlc.autotune.tasks import extract_tasks
    from dlc.target import parse_cpu_target

    target = parse_cpu_target("llvm -mcpu=skylake-avx512 -num-cores=2")
    space = SketchSpace(winograd_workload(), target, verify_rules=False)
    knobs = [knob.name for knob in space.knobs]
    assert not any(name.startswith("inline.") for name in knobs), knobs
    weight = np.full((16, 16, 3, 3), 0.01, np.float32)
    (direct,) = extract_tasks(parse(conv_text(16, 16, 10, 10, (1, 1, 1, 1), weight, False)),
                              graph_passes="graph-opt")
    space = SketchSpace(direct.workload, target, verify_rules=False)
    assert "inline.pad" in [k.name for k in space.knobs]
