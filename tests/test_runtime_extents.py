"""Kernels over runtime extents in any dim (an image of runtime height and width): tensor_expr
computes sized by arithmetic on their inputs' dims, their loop nests bounded by those sizes,
the accesses to buffers of runtime strides linearized (`loop-linearize-runtime-strides`), the
default schedule's vectors and peeled rests (`schedule_rules.runtime_extents`), and the compiled
functions, each against NumPy for many sizes."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop import AllocOp, BlockOp, ForOp
from dlc.dialects.loop.interpreter import run_function
from dlc.dialects.tensor_expr.interpreter import run_module
from dlc.rewrites.loop_default_schedule import LoopDefaultSchedulePass
from dlc.rewrites.loop_linearize_runtime_strides import LoopLinearizeRuntimeStridesPass
from dlc.rewrites.schedule.common import ScheduleError, constant_value
from dlc.rewrites.schedule.split import split_peeled
from dlc.runtime.executable import ExecutableError
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

import dlc
from tests.test_runtime_rows import _run, parse, rng, to_loops

TARGET = "llvm -mcpu=x86-64-v3 -num-cores=2"
"""The CPU the schedules are made for (explicit: the IR must not depend on the host)."""

BOX = """
func.func @box(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = tensor.dim %x, %c0 : tensor<?x?xf32>
  %w = tensor.dim %x, %c1 : tensor<?x?xf32>
  %oh = arith.subi %h, %c2 : index
  %ow = arith.subi %w, %c2 : index
  %y = tensor_expr.compute "box" tag "pool" sizes(%oh, %ow) reduce [3, 3] sum init 0.0 : f32
      -> tensor<?x?xf32> {
  ^bb0(%i: index, %j: index, %r: index, %s: index):
    %a = arith.addi %i, %r : index
    %b = arith.addi %j, %s : index
    %v = tensor_expr.read %x[%a, %b] : tensor<?x?xf32>
    tensor_expr.yield %v : f32
  }
  func.return %y : tensor<?x?xf32>
}
"""
"""A valid 3x3 box sum over a plane of runtime height and width."""

CONV = """
func.func @conv(%x: tensor<?x4x?x?xf32>, %k: tensor<8x4x3x3xf32>, %b: tensor<8xf32>)
    -> tensor<?x8x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x4x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x4x?x?xf32>
  %oh = arith.subi %h, %c2 : index
  %ow = arith.subi %w, %c2 : index
  %y = tensor_expr.compute "conv" tag "conv2d_nchw" sizes(%n, %oh, %ow) reduce [4, 3, 3] sum
      init 0.0 : f32 -> tensor<?x8x?x?xf32> {
  ^bb0(%i: index, %o: index, %p: index, %q: index, %c: index, %r: index, %s: index):
    %a = arith.addi %p, %r : index
    %e = arith.addi %q, %s : index
    %v = tensor_expr.read %x[%i, %c, %a, %e] : tensor<?x4x?x?xf32>
    %u = tensor_expr.read %k[%o, %c, %r, %s] : tensor<8x4x3x3xf32>
    %m = arith.mulf %v, %u : f32
    tensor_expr.yield %m : f32
  }
  %z = tensor_expr.compute "bias_relu" tag "injective" sizes(%n, %oh, %ow) -> tensor<?x8x?x?xf32> {
  ^bb0(%i: index, %o: index, %p: index, %q: index):
    %v = tensor_expr.read %y[%i, %o, %p, %q] : tensor<?x8x?x?xf32>
    %d = tensor_expr.read %b[%o] : tensor<8xf32>
    %s = arith.addf %v, %d : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %zero : f32
    tensor_expr.yield %r : f32
  }
  func.return %z : tensor<?x8x?x?xf32>
}
"""
"""A valid 3x3 conv over images of runtime batch, height and width, then bias and ReLU."""

TWO_STAGES = """
func.func @two_stages(%x: tensor<3x?x?xf32>) -> tensor<3x?x?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = tensor.dim %x, %c1 : tensor<3x?x?xf32>
  %w = tensor.dim %x, %c2 : tensor<3x?x?xf32>
  %y = tensor_expr.compute "square" tag "injective" sizes(%h, %w) -> tensor<3x?x?xf32> {
  ^bb0(%c: index, %i: index, %j: index):
    %v = tensor_expr.read %x[%c, %i, %j] : tensor<3x?x?xf32>
    %s = arith.mulf %v, %v : f32
    tensor_expr.yield %s : f32
  }
  %z = tensor_expr.compute "mirror" tag "injective" sizes(%h, %w) -> tensor<3x?x?xf32> {
  ^bb0(%c: index, %i: index, %j: index):
    %last = arith.subi %w, %c1 : index
    %m = arith.subi %last, %j : index
    %v = tensor_expr.read %y[%c, %i, %m] : tensor<3x?x?xf32>
    %u = tensor_expr.read %y[%c, %i, %j] : tensor<3x?x?xf32>
    %s = arith.subf %v, %u : f32
    tensor_expr.yield %s : f32
  }
  func.return %z : tensor<3x?x?xf32>
}
"""
"""Two stages over a runtime plane: an intermediate allocated with runtime sizes, a read along
a reversed (not vectorizable) axis."""


def box_reference(x: np.ndarray) -> np.ndarray:
    h, w = x.shape
    return sum(x[r:r + h - 2, s:s + w - 2] for r in range(3) for s in range(3))


def conv_reference(x: np.ndarray, k: np.ndarray, b: np.ndarray) -> np.ndarray:
    n, _, h, w = x.shape
    out = np.zeros((n, 8, h - 2, w - 2), np.float64)
    for r in range(3):
        for s in range(3):
            out += np.einsum("nchw,oc->nohw", x[:, :, r:r + h - 2, s:s + w - 2], k[:, :, r, s])
    return np.maximum(out + b[None, :, None, None], 0)


def two_stages_reference(x: np.ndarray) -> np.ndarray:
    y = x * x
    return y[:, :, ::-1] - y


def scheduled(text: str, threads: int) -> ModuleOp:
    module = to_loops(text)
    LoopDefaultSchedulePass(target=TARGET, threads=threads).apply(make_context(), module)
    module.verify()
    return module


def _conv_inputs(n: int, h: int, w: int, seed: int) -> list[np.ndarray]:
    g = rng(seed)
    return [g.standard_normal((n, 4, h, w)).astype(np.float32),
            g.standard_normal((8, 4, 3, 3)).astype(np.float32),
            g.standard_normal(8).astype(np.float32)]


# ------------------------------------------------------------------------------------------
# The interpreters: one function for every size
# ------------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(n=st.integers(0, 2), h=st.integers(3, 9), w=st.integers(3, 21),
       seed=st.integers(0, 2**16), threads=st.sampled_from([1, 2]))
def test_interpreters_run_any_image_size(n: int, h: int, w: int, seed: int,
                                         threads: int) -> None:
    inputs = _conv_inputs(n, h, w, seed)
    expected = conv_reference(*inputs)
    np.testing.assert_allclose(run_module(parse(CONV), inputs)[0], expected,
                               rtol=1e-4, atol=1e-4)
    shape = (n, 8, h - 2, w - 2)
    (got,) = run_function(to_loops(CONV), "conv", inputs, [shape])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    module = scheduled(CONV, threads)
    (got,) = run_function(module, "conv", inputs, [shape])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    LoopLinearizeRuntimeStridesPass().apply(make_context(), module)
    module.verify()
    (got,) = run_function(module, "conv", inputs, [shape])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_the_conversion_sizes_every_dynamic_dim() -> None:
    module = to_loops(CONV)
    conv = next(op for op in module.walk() if getattr(op, "sym_name", None) is not None)
    types = [str(t) for t in conv.function_type.inputs.data]
    assert types == ["memref<?x4x?x?xf32>", "memref<8x4x3x3xf32>", "memref<8xf32>",
                     "memref<?x8x?x?xf32>", "index", "index", "index", "index", "index",
                     "index"]


# ------------------------------------------------------------------------------------------
# The schedule: whole vectors, a peeled rest, parallel
# ------------------------------------------------------------------------------------------


def _loops(module: ModuleOp) -> list[ForOp]:
    return [op for op in module.walk() if isinstance(op, ForOp)]


def test_the_box_gets_vectors_inside_its_window_then_masked_tails() -> None:
    loops = _loops(scheduled(BOX, threads=2))
    kinds = [(loop.axis.data, loop.kind.data) for loop in loops]
    assert kinds[:3] == [("i.0", "parallel"), ("j.0", "serial"), ("i.1", "serial")], \
        "blocks of rows in parallel, each a tile of rows beside the row's vectors"
    vectors = [loop for loop in loops if loop.kind.data == "vectorized"]
    # AVX2: 8 f32 lanes. Blocks of 4 rows: tiles of 3 vectors per row (12 accumulators; init,
    # update, and the write of the local accumulators into the output), then tiles of one
    # vector over the outputs left, the last one's lanes past the row masked; then the rows
    # left one at a time, in tiles of 4 vectors and the same masked ones; each in the
    # scheduled form
    assert [(loop.trip_count(), loop.trip_bound()) for loop in vectors] == \
        [(24, 24)] * 3 + [(None, 8)] * 3 + [(32, 32)] * 3 + [(None, 8)] * 3
    tiles = [constant_value(loop.step) for loop in loops if loop.axis.data == "j.0"]
    assert tiles == [24, 8, 32, 8], "whole tiles, then vectors to the row's end, masked"
    for update in vectors[1::3]:
        axes = [outer.axis.data for outer in _enclosing(update)]
        assert "r" in axes[-3:] and "s" in axes[-3:], "the vector loop is inside the window's"
    assert not [loop for loop in loops if loop.axis.data == "j"], "no output left unscheduled"


def _enclosing(loop: ForOp) -> list[ForOp]:
    chain = []
    parent = loop.parent_op()
    while parent is not None:
        if isinstance(parent, ForOp):
            chain.append(parent)
        parent = parent.parent_op()
    return chain[::-1]


def test_an_axis_read_in_reverse_stays_scalar() -> None:
    module = scheduled(TWO_STAGES, threads=2)
    vectors = [loop for loop in _loops(module) if loop.kind.data == "vectorized"]
    names = {block.block_name.data for loop in vectors for block in loop.walk()
             if isinstance(block, BlockOp)}
    assert names == {"square"}, "only the square's rows are vectors, not the mirror's"
    assert [(loop.trip_count(), loop.trip_bound()) for loop in vectors] == \
        [(8, 8), (None, 8)], "whole vectors, then one masked over the rest"


def test_split_peeled_takes_runtime_bounds_and_needs_step_one() -> None:
    module = to_loops(BOX)
    loops = _loops(module)
    with pytest.raises(ScheduleError, match="cannot split: expected positive factors"):
        split_peeled(loops[1], 0)
    outer, inner, rest = split_peeled(loops[1], 4)
    assert inner.trip_count() == 4 and rest.lb is outer.ub
    end = rest.ub
    _, _, last = split_peeled(rest, 2)  # from a runtime lower bound
    assert last.ub is end and last.lb is rest.ub
    with pytest.raises(ScheduleError, match="cannot peel: expected a loop with step 1"):
        split_peeled(outer, 2)
    (got,) = run_function(module, "box", [np.arange(77, dtype=np.float32).reshape(7, 11)],
                          [(5, 9)])
    x = np.arange(77, dtype=np.float32).reshape(7, 11)
    np.testing.assert_array_equal(got, box_reference(x))


# ------------------------------------------------------------------------------------------
# Compiled: one executable for every size
# ------------------------------------------------------------------------------------------

SIZES = ((3, 3), (4, 11), (7, 9), (9, 18), (10, 19), (13, 40), (33, 65))
"""Plane sizes meeting no whole vector, whole vectors alone, and vectors with every rest."""


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_box_over_any_plane(threads: int) -> None:
    executable = dlc.compile(to_loops(BOX), threads=threads)
    for h, w in SIZES:
        x = rng(h * w).standard_normal((h, w)).astype(np.float32)
        got = _run(executable, x, shape=(h - 2, w - 2))
        np.testing.assert_allclose(got, box_reference(x), rtol=1e-5, atol=1e-5)


def test_compiled_kernels_over_every_row_width() -> None:
    """Rows of 1 to 70 outputs: whole tiles, then tiles of a vector whose last one masks the
    lanes past the row's end; the box's rows in blocks of 4 and the rows left; the box and
    the conv (bias and ReLU after its sum) agree with NumPy at every width."""
    box = dlc.compile(to_loops(BOX), threads=2)
    conv = dlc.compile(to_loops(CONV), threads=2)
    for w in range(3, 73):
        h = 4 if w % 2 else 11  # 2 output rows (left after no block of 4), or 9 (two and one)
        x = rng(w).standard_normal((h, w)).astype(np.float32)
        np.testing.assert_allclose(_run(box, x, shape=(h - 2, w - 2)), box_reference(x),
                                   rtol=1e-5, atol=1e-5)
        inputs = _conv_inputs(1, 3, w, w)
        np.testing.assert_allclose(_run(conv, *inputs, shape=(1, 8, 1, w - 2)),
                                   conv_reference(*inputs), rtol=1e-4, atol=1e-4)


def test_compiled_conv_over_any_image() -> None:
    executable = dlc.compile(to_loops(CONV), threads=2)
    assert executable.signature.arguments[0].shape == (-1, 4, -1, -1)
    for n, (h, w) in zip((1, 2, 0, 1, 3, 1, 1), SIZES, strict=True):
        inputs = _conv_inputs(n, h, w, h + w)
        got = _run(executable, *inputs, shape=(n, 8, h - 2, w - 2))
        np.testing.assert_allclose(got, conv_reference(*inputs), rtol=1e-4, atol=1e-4)


def test_compiled_stages_with_an_intermediate_of_runtime_sizes() -> None:
    executable = dlc.compile(to_loops(TWO_STAGES), threads=2)
    for h, w in SIZES:
        x = rng(h + w).standard_normal((3, h, w)).astype(np.float32)
        got = _run(executable, x, shape=x.shape)
        np.testing.assert_allclose(got, two_stages_reference(x), rtol=1e-6, atol=1e-6)


def test_linearize_refuses_a_buffer_it_cannot_size() -> None:
    text = """
    func.func @f(%x: memref<?x?xf32>, %out: memref<4xf32>, %h: index, %w: index)
        attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
      %c0 = arith.constant 0 : index
      %v = memref.subview %x[0, 0] [4, %w] [1, 1]
          : memref<?x?xf32> to memref<4x?xf32, strided<[?, 1]>>
      %e = memref.load %v[%c0, %c0] : memref<4x?xf32, strided<[?, 1]>>
      func.return
    }
    """
    module = parse(text)
    with pytest.raises(PassFailedException, match="'memref.subview' op expected loads, stores"):
        LoopLinearizeRuntimeStridesPass().apply(make_context(), module)


def test_a_conv_gets_a_register_tile_of_channels_and_vectors() -> None:
    module = scheduled(CONV, threads=2)
    loops = _loops(module)
    assert [loop.axis.data for loop in loops if loop.kind.data == "parallel"] == ["o.0"], \
        "the static channels run in parallel, not the batch of runtime size"
    tiles = [(loop.axis.data, loop.kind.data, loop.trip_count(), loop) for loop in loops
             if loop.kind.data in ("vectorized", "unrolled")]
    # AVX2: 12 accumulators = 4 output channels (each input vector read once for all four)
    # x 3 vectors of 8 outputs; then 4 channels x tiles of one vector over the rest of the
    # row, the last masked (a trip count of at most 8); the init and the epilogue over the
    # same tiles; the 3x3 window's taps unrolled around the tile
    tiles = [(axis, kind, trip or loop.trip_bound()) for axis, kind, trip, loop in tiles]
    trips = {"o.1": 4, "r": 3, "s": 3}
    assert tiles == [(axis, kind, trips.get(axis, width))
                     for width in (24, 8)
                     for axis, kind in (("q.1", "vectorized"), ("r", "unrolled"),
                                        ("s", "unrolled"), ("o.1", "unrolled"),
                                        ("q.1", "vectorized"), ("q.1", "vectorized"))]
    update = [loop for loop in loops
              if loop.axis.data == "o.1" and loop.kind.data == "unrolled"][0]
    assert [outer.axis.data for outer in _enclosing(update)][-3:] == ["c", "r", "s"]
    widened = [op for op in module.walk() if isinstance(op, AllocOp) and op.scope.data == "local"]
    assert [str(op.result.type) for op in widened] == ["memref<4x24xf32>", "memref<4x8xf32>"]


def test_outputs_of_computed_sizes_are_allocated_and_checked() -> None:
    executable = dlc.compile(to_loops(BOX), threads=2)
    (spec,) = executable.signature.outputs
    assert spec.sizes == (["add", {"s": 0}, -2], ["add", {"s": 1}, -2])
    x = rng(3).standard_normal((9, 20)).astype(np.float32)
    np.testing.assert_allclose(executable(x), box_reference(x), rtol=1e-5, atol=1e-5)
    with pytest.raises(ExecutableError, match=r"output 1 of @box: expected shape \(7, 18\) "
                                              r"\(its runtime dims computed from the inputs"):
        executable(x, out=[np.empty((7, 17), np.float32)])
    with pytest.raises(ExecutableError, match=r"would have shape \(-1, 3\) for inputs of "
                                              r"shapes \(1, 5\): the inputs are too small"):
        executable(np.zeros((1, 5), np.float32))


SIZED_BY_A_VALUE = """
func.func @fill(%x: tensor<4xf32>, %count: tensor<i64>) -> tensor<?x4xf32> {
  %e = tensor.extract %count[] : tensor<i64>
  %n = arith.index_cast %e : i64 to index
  %y = tensor_expr.compute "fill" tag "injective" sizes(%n) -> tensor<?x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor_expr.read %x[%j] : tensor<4xf32>
    tensor_expr.yield %v : f32
  }
  func.return %y : tensor<?x4xf32>
}
"""
"""An output whose runtime size is a value (an input's data), not a shape: no shape function,
the caller passes the output."""


def test_an_output_sized_by_a_value_is_passed_by_the_caller() -> None:
    module = to_loops(SIZED_BY_A_VALUE)
    assert "dlc.dim_sizes" not in str(module)
    executable = dlc.compile(module)
    assert executable.signature.outputs[0].sizes == ()
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(ExecutableError, match=r"has dims of runtime size .* pass the outputs as"):
        executable(x, np.int64(3))
    got = _run(executable, x, np.int64(3), shape=(3, 4))
    np.testing.assert_array_equal(got, np.tile(x, (3, 1)))
