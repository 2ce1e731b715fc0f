"""Tensor cores without a GPU: PTX `mma.sync` and `ldmatrix` fragment layouts, the warp-level
`tensorize`, the `mma-gemm` default GPU rule, and the PTX it emits.

The fragment layouts (target/intrinsics.py) are checked against entries transcribed by hand
from the PTX ISA's figures ("Matrix fragments for mma.m16n8k16 with floating point type",
"... mma.m16n8k32"), an oracle independent of the formulas; the loop interpreter runs the
tensorized nests (its model of `mma.sync` gathers each lane's fragments by those layouts) and
NumPy's matmul is the reference, so that IR loading the wrong element for a lane fails; the
emitted PTX goes through `ptxas` for sm_80 and sm_90 where it is on the PATH.
"""

from __future__ import annotations

import dataclasses
import importlib
import shutil
import subprocess

import dlc.dialects.graph as g
import numpy as np
import pytest
from dlc.codegen.ptx import emit_ptx
from dlc.dialects import make_context
from dlc.dialects.arith_numpy import numpy_dtype
from dlc.dialects.loop.interpreter import (
    LoopInterpreter,
    LoopUnsupportedError,
    run_function,
)
from dlc.dialects.loop.ops import AsyncCopyOp, AsyncWaitOp, ForOp, IntrinsicOp, MatrixLoadOp
from dlc.pipelines import parse_pipeline
from dlc.rewrites.gpu_schedule_rules import GpuScheduleConfig, schedule_function
from dlc.rewrites.schedule import ScheduleError, tensorize
from dlc.target import parse_gpu_target
from dlc.target.intrinsics import (
    MATRIX_LOADS,
    MMA_M16N8K16_F16,
    MMA_M16N8K32_S8,
    WARP_SIZE,
    Fragment,
    Intrinsic,
    MatrixLoad,
    matrix_load_reference,
    matrix_tiling,
    warp_reference,
)
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType, bf16, f16, f32
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

RNG = np.random.default_rng(27)
TO_LOOPS = "convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop"
TO_PTX = ("convert-loop-to-target-gpu,target-gpu-compact-private-buffers,"
          "target-gpu-insert-barriers,target-gpu-map-bound-loops,target-gpu-unroll,"
          "target-gpu-vectorize,target-gpu-lower-to-nvvm")
SM80 = parse_gpu_target("cuda -arch=sm_80")

# ----------------------------------------------------------------------------------------------
# Fragment layouts against the PTX ISA
# ----------------------------------------------------------------------------------------------

# (operand, lane) -> the (row, column) of each fragment element, copied from the PTX ISA's
# figures (A: row i, column k; B: row k, column j; C: row i, column j).
ISA_M16N8K16 = {
    ("a", 0): [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)],
    ("a", 5): [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11)],
    ("a", 31): [(7, 6), (7, 7), (15, 6), (15, 7), (7, 14), (7, 15), (15, 14), (15, 15)],
    ("b", 0): [(0, 0), (1, 0), (8, 0), (9, 0)],
    ("b", 5): [(2, 1), (3, 1), (10, 1), (11, 1)],
    ("b", 31): [(6, 7), (7, 7), (14, 7), (15, 7)],
    ("acc", 0): [(0, 0), (0, 1), (8, 0), (8, 1)],
    ("acc", 5): [(1, 2), (1, 3), (9, 2), (9, 3)],
    ("acc", 31): [(7, 6), (7, 7), (15, 6), (15, 7)],
}
ISA_M16N8K32 = {
    ("a", 5): [(1, 4), (1, 5), (1, 6), (1, 7), (9, 4), (9, 5), (9, 6), (9, 7),
               (1, 20), (1, 21), (1, 22), (1, 23), (9, 20), (9, 21), (9, 22), (9, 23)],
    ("b", 5): [(4, 1), (5, 1), (6, 1), (7, 1), (20, 1), (21, 1), (22, 1), (23, 1)],
    ("acc", 5): [(1, 2), (1, 3), (9, 2), (9, 3)],
}
_MATRIX_AXES = {"a": ("i", "k"), "b": ("k", "j"), "acc": ("i", "j")}


def _fragment(entry: Intrinsic, role: str) -> Fragment:
    operand = next(o for o in entry.operands if o.role == role)
    assert operand.fragment is not None
    return operand.fragment


@pytest.mark.parametrize("entry, table", [(MMA_M16N8K16_F16, ISA_M16N8K16),
                                          (MMA_M16N8K32_S8, ISA_M16N8K32)])
def test_fragment_layouts_match_the_ptx_isa(entry: Intrinsic, table: dict) -> None:
    for (role, lane), expected in table.items():
        fragment = _fragment(entry, role)
        rows, cols = _MATRIX_AXES[role]
        found = [(fragment.coordinates(lane, e)[rows], fragment.coordinates(lane, e)[cols])
                 for e in range(fragment.elements)]
        assert found == expected, (entry.name, role, lane)


@pytest.mark.parametrize("entry", [MMA_M16N8K16_F16, MMA_M16N8K32_S8])
def test_each_tile_element_is_held_by_exactly_one_lane(entry: Intrinsic) -> None:
    extents = entry.extents
    for role, (rows, cols) in _MATRIX_AXES.items():
        fragment = _fragment(entry, role)
        held = [tuple(fragment.coordinates(lane, e)[axis] for axis in (rows, cols))
                for lane in range(WARP_SIZE) for e in range(fragment.elements)]
        assert sorted(held) == [(r, c) for r in range(extents[rows])
                                for c in range(extents[cols])], role


def test_warp_reference_is_a_matmul_of_the_gathered_tiles() -> None:
    a = RNG.standard_normal((16, 16)).astype(np.float16)
    bt = RNG.standard_normal((8, 16)).astype(np.float16)  # B stored as Bt[j][k]
    c = RNG.standard_normal((16, 8)).astype(np.float32)

    def fragments(role: str, matrix: np.ndarray, transpose: bool = False) -> np.ndarray:
        fragment = _fragment(MMA_M16N8K16_F16, role)
        rows, cols = _MATRIX_AXES[role]
        out = np.empty((WARP_SIZE, fragment.elements), matrix.dtype)
        for lane in range(WARP_SIZE):
            for e in range(fragment.elements):
                where = fragment.coordinates(lane, e)
                r, col = where[rows], where[cols]
                out[lane, e] = matrix[col, r] if transpose else matrix[r, col]
        return out

    d = warp_reference(MMA_M16N8K16_F16, fragments("acc", c), fragments("a", a),
                       fragments("b", bt, transpose=True))
    expected = c + a.astype(np.float32) @ bt.astype(np.float32).T
    np.testing.assert_allclose(d, fragments("acc", expected), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------------------------
# ldmatrix layouts against the PTX ISA
# ----------------------------------------------------------------------------------------------

# lane -> the (row, column) of the stored 8x8 matrix of each of its two elements per matrix,
# from the PTX ISA's figures ("ldmatrix fragment layout"; .trans: the transposed positions).
ISA_LDMATRIX = {
    (False, 0): [(0, 0), (0, 1)], (False, 5): [(1, 2), (1, 3)], (False, 31): [(7, 6), (7, 7)],
    (True, 0): [(0, 0), (1, 0)], (True, 5): [(2, 1), (3, 1)], (True, 31): [(6, 7), (7, 7)],
}


@pytest.mark.parametrize("entry", MATRIX_LOADS.values(), ids=lambda e: e.name)
def test_ldmatrix_layouts_match_the_ptx_isa(entry: MatrixLoad) -> None:
    for (transpose, lane), expected in ISA_LDMATRIX.items():
        if transpose != entry.transpose:
            continue
        for matrix in range(entry.matrices):
            found = [entry.position(lane, 2 * matrix + e)[1:] for e in range(2)]
            assert found == expected and \
                all(entry.position(lane, 2 * matrix + e)[0] == matrix for e in range(2))
    # lanes 8q..8q+7 give the rows of matrix q
    assert [entry.address_row(lane) for lane in range(8 * entry.matrices)] == \
        [(q, r) for q in range(entry.matrices) for r in range(8)]


def _ldmatrix_rows(stored: np.ndarray, load: MatrixLoad, origins: list[tuple[int, int]]
                   ) -> np.ndarray:
    """The rows lanes give to `load`: lane l the 8 elements at (row, column) = origin of its
    matrix + (l % 8, 0) of `stored`."""
    rows = []
    for lane in range(WARP_SIZE):
        matrix, row = load.address_row(lane)
        r, c = origins[matrix]
        rows.append(stored[r + row, c:c + 8])
    return np.stack(rows)


@pytest.mark.parametrize("role, contiguous", [("a", "k"), ("b", "k"), ("b", "j")])
def test_ldmatrix_loads_the_mma_fragments(role: str, contiguous: str) -> None:
    """The tiling of an mma operand by ldmatrix, run through the ldmatrix model, hands every
    lane exactly its fragment by the ISA tables above (B with j contiguous: .trans)."""
    fragment = _fragment(MMA_M16N8K16_F16, role)
    tiling = matrix_tiling(fragment, contiguous)
    assert tiling is not None
    assert tiling.load.name == {("a", "k"): "ptx.ldmatrix.x4", ("b", "k"): "ptx.ldmatrix.x2",
                                ("b", "j"): "ptx.ldmatrix.x2.trans"}[(role, contiguous)]
    rows_axis, cols_axis = _MATRIX_AXES[role]  # ISA order: a (i, k), b (k, j)
    tile = RNG.standard_normal((16, 16 if role == "a" else 8)).astype(np.float16)  # [row][col]
    # the tile as stored: its contiguous axis last
    stored = tile if cols_axis == contiguous else tile.T
    origins = [(dict(o)[tiling.row_axis], dict(o)[tiling.column_axis]) for o in tiling.origins]
    got = matrix_load_reference(tiling.load, _ldmatrix_rows(stored, tiling.load, origins))
    for lane in (0, 5, 31):
        want = [tile[r, c] for r, c in ISA_M16N8K16[(role, lane)]]
        np.testing.assert_array_equal(got[lane], want)


def test_no_ldmatrix_for_8_bit_fragments_or_the_accumulator() -> None:
    assert matrix_tiling(_fragment(MMA_M16N8K32_S8, "a"), "k") is None  # 16 elements a lane
    assert matrix_tiling(_fragment(MMA_M16N8K16_F16, "a"), "j") is None  # not an axis of A


# ----------------------------------------------------------------------------------------------
# Warp-level tensorize in the loop interpreter
# ----------------------------------------------------------------------------------------------


def _tile_nest(m: int, n: int, k: int, b_transposed: bool) -> str:
    """C (f32, m x n) += A (f16, m x k) . B (f16, k x n, or stored n x k), tiled 16 x 8 x 16
    with the tile band innermost."""
    b_type = f"memref<{n}x{k}xf16>" if b_transposed else f"memref<{k}x{n}xf16>"
    b_index = "%jj, %kk" if b_transposed else "%kk, %jj"
    return f"""
func.func @gemm(%A: memref<{m}x{k}xf16>, %B: {b_type}, %C: memref<{m}x{n}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %cm = arith.constant {m // 16} : index
  %cn = arith.constant {n // 8} : index
  %ck = arith.constant {k // 16} : index
  loop.for %io = %c0 to %cm step %c1 axis "io" {{
  loop.for %jo = %c0 to %cn step %c1 axis "jo" {{
  loop.for %ko = %c0 to %ck step %c1 axis "ko" {{
  loop.for %i = %c0 to %c16 step %c1 axis "i" {{
  loop.for %j = %c0 to %c8 step %c1 axis "j" {{
  loop.for %k = %c0 to %c16 step %c1 axis "k" {{
    loop.block "mm" reads(%A, %B : memref<{m}x{k}xf16>, {b_type})
        writes(%C : memref<{m}x{n}xf32>)
        spatial ["io", "jo", "i", "j"] reduction ["ko", "k"] {{
      %ib = arith.muli %io, %c16 : index
      %ii = arith.addi %ib, %i : index
      %jb = arith.muli %jo, %c8 : index
      %jj = arith.addi %jb, %j : index
      %kb = arith.muli %ko, %c16 : index
      %kk = arith.addi %kb, %k : index
      %a = loop.load %A[%ii, %kk] : memref<{m}x{k}xf16> -> f16
      %ae = arith.extf %a : f16 to f32
      %b = loop.load %B[{b_index}] : {b_type} -> f16
      %be = arith.extf %b : f16 to f32
      %p = arith.mulf %ae, %be : f32
      %c = loop.load %C[%ii, %jj] : memref<{m}x{n}xf32> -> f32
      %s = arith.addf %c, %p : f32
      loop.store %s, %C[%ii, %jj] : f32 -> memref<{m}x{n}xf32>
    }}
  }}}}}}}}}}}}
  func.return
}}
"""


def _tensorized(m: int, n: int, k: int, b_transposed: bool) -> ModuleOp:
    module = Parser(make_context(), _tile_nest(m, n, k, b_transposed)).parse_module()
    band = next(op for op in module.walk() if isinstance(op, ForOp) and op.axis.data == "i")
    tensorize(band, MMA_M16N8K16_F16.name, SM80.features)
    PassPipeline(parse_pipeline("cse")).apply(make_context(), module)
    module.verify()
    return module


def _run_gemm(module: ModuleOp, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    out = c.copy()
    LoopInterpreter(module).call("gemm", [a, b, out])
    return out


@pytest.mark.parametrize("m, n, k", [(16, 8, 16), (32, 16, 32), (16, 24, 48), (48, 8, 16)])
def test_tensorized_nest_matches_numpy(m: int, n: int, k: int) -> None:
    b_transposed = True
    module = _tensorized(m, n, k, b_transposed)
    assert any(isinstance(op, IntrinsicOp) for op in module.walk())
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    c = RNG.standard_normal((m, n)).astype(np.float32)
    got = _run_gemm(module, a, np.ascontiguousarray(b.T) if b_transposed else b, c)
    want = c + a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("role, swap", [("a", ((0, 1), (0, 0))), ("b", ((0, 8), (0, 0))),
                                        ("acc", ((8, 0), (0, 0)))])
def test_a_wrong_lane_mapping_in_the_ir_fails(monkeypatch: pytest.MonkeyPatch, role: str,
                                              swap: tuple) -> None:
    """IR that loads (or stores) the wrong element for a fragment slot computes a wrong GEMM:
    the interpreter's model of mma.sync keeps the true layout."""
    entry = MMA_M16N8K16_F16
    index = next(n for n, operand in enumerate(entry.operands) if operand.role == role)
    operand = entry.operands[index]
    assert operand.fragment is not None
    offsets = list(operand.fragment.offsets)
    offsets[0], offsets[1] = swap  # slot 0 <- slot 1's element (or another one)
    wrong_operand = dataclasses.replace(
        operand, fragment=dataclasses.replace(operand.fragment, offsets=tuple(offsets)))
    operands = list(entry.operands)
    operands[index] = wrong_operand
    wrong = dataclasses.replace(entry, operands=tuple(operands))
    tensorize_module = importlib.import_module("dlc.rewrites.schedule.tensorize")
    monkeypatch.setattr(tensorize_module, "get_intrinsic", lambda name: wrong)
    module = _tensorized(32, 16, 32, True)
    monkeypatch.undo()
    a = RNG.standard_normal((32, 32)).astype(np.float16)
    b = RNG.standard_normal((32, 16)).astype(np.float16)
    c = RNG.standard_normal((32, 16)).astype(np.float32)
    got = _run_gemm(module, a, np.ascontiguousarray(b.T), c)
    want = c + a.astype(np.float32) @ b.astype(np.float32)
    assert not np.allclose(got, want, rtol=1e-3, atol=1e-3)


def test_interpreter_needs_the_lanes_of_a_warp_around_a_warp_call() -> None:
    module = _tensorized(16, 8, 16, True)
    lane = next(op for op in module.walk() if isinstance(op, ForOp)
                and op.axis.data == "mm.lane")
    lane.properties["kind"] = StringAttr("serial")
    del lane.properties["thread"]
    a, b = np.zeros((16, 16), np.float16), np.zeros((8, 16), np.float16)
    with pytest.raises(LoopUnsupportedError, match="expected a warp-level 'loop.intrinsic' "
                                                   "inside a loop bound to threadIdx.x"):
        _run_gemm(module, a, b, np.zeros((16, 8), np.float32))


def test_tensorize_gathers_b_stored_row_major() -> None:
    """The entry reads B as `.col` (Bt[j][k]); a lane gathers its fragment element by element,
    so a row-major B (k x n) fits as well and computes the same GEMM."""
    module = _tensorized(32, 16, 32, False)
    a = RNG.standard_normal((32, 32)).astype(np.float16)
    b = RNG.standard_normal((32, 16)).astype(np.float16)
    c = RNG.standard_normal((32, 16)).astype(np.float32)
    got = _run_gemm(module, a, b, c)
    np.testing.assert_allclose(got, c + a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-4, atol=1e-4)


def test_tensorize_refuses_a_factor_not_moved_by_its_axis() -> None:
    """B must move with j: a B read at a fixed column (the same for every j) does not fit."""
    text = _tile_nest(16, 8, 16, True).replace("%B[%jj, %kk]", "%B[%c0, %kk]")
    module = Parser(make_context(), text).parse_module()
    band = next(op for op in module.walk() if isinstance(op, ForOp) and op.axis.data == "i")
    with pytest.raises(ScheduleError, match="expected operand 'b' .* to move per step of axis "
                                            "j, found 0 elements"):
        tensorize(band, MMA_M16N8K16_F16.name, SM80.features)


def test_tensorize_refuses_a_target_without_sm80() -> None:
    module = Parser(make_context(), _tile_nest(16, 8, 16, True)).parse_module()
    band = next(op for op in module.walk() if isinstance(op, ForOp) and op.axis.data == "i")
    sm75 = frozenset(f"sm_{n}" for n in range(50, 76))
    with pytest.raises(ScheduleError, match="expected a target with sm_80, found one without"):
        tensorize(band, MMA_M16N8K16_F16.name, sm75)


def test_tensorize_refuses_a_nest_inside_a_lane_loop() -> None:
    text = _tile_nest(16, 8, 16, True).replace(
        'axis "io" {', 'axis "io" kind bound thread "threadIdx.x" {')
    module = Parser(make_context(), text).parse_module()
    band = next(op for op in module.walk() if isinstance(op, ForOp) and op.axis.data == "i")
    with pytest.raises(ScheduleError, match="expected no loop around the nest bound to "
                                            "threadIdx.x"):
        tensorize(band, MMA_M16N8K16_F16.name, SM80.features)


# ----------------------------------------------------------------------------------------------
# The mma-gemm default GPU rule
# ----------------------------------------------------------------------------------------------


def _matmul_module(a_shape: tuple[int, ...], b_shape: tuple[int, ...], element=f16) -> ModuleOp:
    block = Block(arg_types=[TensorType(element, list(a_shape)),
                             TensorType(element, list(b_shape))])
    op = g.MatmulOp(*block.args)
    block.add_ops([op, func.ReturnOp(op.results[0])])
    function = func.FuncOp.from_region(
        "f", [arg.type for arg in block.args], [op.results[0].type], Region(block))
    module = ModuleOp([function])
    module.verify()
    PassPipeline(parse_pipeline(TO_LOOPS)).apply(make_context(), module)
    return module


def _schedule(module: ModuleOp, config: GpuScheduleConfig) -> list[str]:
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    names = schedule_function(function, config)
    module.verify()
    return names


def _config(target: str = "cuda -arch=sm_80", **changes: object) -> GpuScheduleConfig:
    config = GpuScheduleConfig.for_target(parse_gpu_target(target))
    return dataclasses.replace(config, **changes)


@pytest.mark.parametrize("a_shape, b_shape, min_blocks, element", [
    ((64, 48), (48, 40), None, f16),      # the target's grid: small warp tiles
    ((64, 64), (64, 64), 0, f16),         # 2 x 2 warps of 2 x 4 fragments, two k steps
    ((50, 40), (40, 30), 0, f16),         # M, N, K not multiples of the tiles: zero padding
    ((33, 72), (72, 17), 0, f16),         # odd M and N, K = 2.25 slices of 32
    ((70, 23), (23, 41), 0, f16),         # K below one slice, odd
    ((2, 32, 16), (2, 16, 24), 0, f16),   # batched
    ((32, 48), (48, 16), 0, bf16),        # mma.sync m16n8k16 bf16
    ((19, 40), (40, 27), 0, bf16),        # odd sizes in bf16
])
def test_mma_gemm_schedule_matches_numpy(a_shape: tuple, b_shape: tuple,
                                         min_blocks: int | None, element) -> None:
    module = _matmul_module(a_shape, b_shape, element)
    config = _config() if min_blocks is None else _config(min_gemm_blocks=min_blocks)
    assert _schedule(module, config) == ["mma-gemm"]
    calls = [op for op in module.walk() if isinstance(op, IntrinsicOp)]
    assert calls and calls[0].intrinsic.data.endswith(".f16" if element == f16 else ".bf16")
    loads = sorted(op.intrinsic.data for op in module.walk() if isinstance(op, MatrixLoadOp))
    pipelined = any(isinstance(op, AsyncCopyOp) for op in module.walk())
    # the factors' fragments: B ([k][n] row-major) through .trans where cp.async keeps its rows
    assert loads == ["ptx.ldmatrix.x2" + (".trans" if pipelined else ""), "ptx.ldmatrix.x4"]
    dtype = numpy_dtype(element)
    a = RNG.standard_normal(a_shape).astype(dtype)
    b = RNG.standard_normal(b_shape).astype(dtype)
    (got,) = run_function(module, "f", [a, b])
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    tolerance = 2e-3 if element == f16 else 2e-2
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                               rtol=tolerance, atol=tolerance)


def test_f16_conv_takes_the_mma_gemm_rule_and_keeps_its_results() -> None:
    text = """
    func.func @f(%x: tensor<1x16x6x6xf16>, %w: tensor<24x16x3x3xf16>) -> tensor<1x24x6x6xf16> {
      %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}
          : (tensor<1x16x6x6xf16>, tensor<24x16x3x3xf16>) -> tensor<1x24x6x6xf16>
      func.return %y : tensor<1x24x6x6xf16>
    }
    """
    module = Parser(make_context(), text).parse_module()
    PassPipeline(parse_pipeline(TO_LOOPS)).apply(make_context(), module)
    x = RNG.standard_normal((1, 16, 6, 6)).astype(np.float16)
    w = RNG.standard_normal((24, 16, 3, 3)).astype(np.float16)
    (want,) = run_function(module, "f", [x, w])
    assert _schedule(module, _config(min_gemm_blocks=0)) == ["elementwise", "mma-gemm"]
    (got,) = run_function(module, "f", [x, w])
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                               rtol=4e-3, atol=4e-3)


# ----------------------------------------------------------------------------------------------
# The cp.async pipeline of mma-gemm
# ----------------------------------------------------------------------------------------------


def _pipelined(a_shape: tuple, b_shape: tuple, depth: int, **changes: object) -> ModuleOp:
    module = _matmul_module(a_shape, b_shape)
    config = _config(pipeline_depth=depth, **changes)
    assert _schedule(module, config) == ["mma-gemm"]
    return module


def _check_gemm(module: ModuleOp, a_shape: tuple, b_shape: tuple) -> None:
    a = RNG.standard_normal(a_shape).astype(np.float16)
    b = RNG.standard_normal(b_shape).astype(np.float16)
    (got,) = run_function(module, "f", [a, b])
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                               rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("a_shape, b_shape, depth, min_blocks", [
    ((37, 40), (40, 24), 2, 0),        # odd M; K = 40: the second K tile is partly zeros
    ((50, 72), (72, 56), 3, 0),        # three stages, three K tiles, odd M
    ((64, 48), (48, 40), 2, None),     # the target's grid: small tiles, fewer chunks than threads
    ((2, 24, 48), (2, 48, 16), 2, 0),  # batched
    ((16, 8), (8, 8), 3, 0),           # one K tile: the stages ahead copy only zeros
])
def test_pipelined_mma_gemm_matches_numpy(a_shape: tuple, b_shape: tuple, depth: int,
                                          min_blocks: int | None) -> None:
    changes = {} if min_blocks is None else {"min_gemm_blocks": min_blocks}
    module = _pipelined(a_shape, b_shape, depth, **changes)
    waits = sorted(op.pending.value.data for op in module.walk() if isinstance(op, AsyncWaitOp))
    assert waits == [0, depth - 1]
    assert any(isinstance(op, AsyncCopyOp) for op in module.walk())
    _check_gemm(module, a_shape, b_shape)


@pytest.mark.parametrize("a_shape, b_shape", [
    ((32, 20), (20, 16)),   # K not a multiple of 8 halves: rows of A are not 16-byte aligned
    ((32, 16), (16, 20)),   # N not a multiple of 8: rows of B are not
])
def test_unaligned_rows_are_copied_through_registers(a_shape: tuple, b_shape: tuple) -> None:
    module = _pipelined(a_shape, b_shape, 2, min_gemm_blocks=0)
    assert not any(isinstance(op, AsyncCopyOp | AsyncWaitOp) for op in module.walk())
    _check_gemm(module, a_shape, b_shape)


@pytest.mark.parametrize("mutation", ["no wait", "wait for one group too few"])
def test_reading_a_stage_before_its_copies_land_fails(mutation: str) -> None:
    """The interpreter performs a copy at the wait that completes it: the pipeline without its
    wait in the loop (or waiting with one group more pending) reads stale tiles (NaN)."""
    module = _pipelined((32, 64), (64, 16), 2, min_gemm_blocks=0)
    wait = next(op for op in module.walk() if isinstance(op, AsyncWaitOp)
                and op.pending.value.data == 1)
    if mutation == "no wait":
        wait.detach()
        wait.erase()
    else:
        wait.properties["pending"] = IntegerAttr(2, 64)
    a = RNG.standard_normal((32, 64)).astype(np.float16)
    b = RNG.standard_normal((64, 16)).astype(np.float16)
    (got,) = run_function(module, "f", [a, b])
    want = a.astype(np.float32) @ b.astype(np.float32)
    assert not np.allclose(got.astype(np.float32), want, rtol=1e-2, atol=1e-2)


def _wrong_origins(tiling):
    """Matrices 1 and 2 of an x4 load swapped: lanes 8..15 give the rows of the k + 8 half."""
    origins = list(tiling.origins)
    if len(origins) == 4:
        origins[1], origins[2] = origins[2], origins[1]
    return dataclasses.replace(tiling, origins=tuple(origins))


def _transposed_model(entry: MatrixLoad) -> MatrixLoad:
    """The ldmatrix model with the .trans layout: lanes receive the wrong elements."""
    result = dataclasses.replace(entry.result, group_axis=entry.result.thread_axis,
                                 thread_axis=entry.result.group_axis)
    return dataclasses.replace(entry, result=result)


@pytest.mark.parametrize("mutation", ["emitted rows", "model layout"])
def test_a_wrong_ldmatrix_lane_layout_fails(monkeypatch: pytest.MonkeyPatch,
                                            mutation: str) -> None:
    """The GEMM with A's ldmatrix lane addresses mixed up (the IR), or with ldmatrix modelled
    with the wrong layout (the interpreter), no longer matches NumPy."""
    tensorize_module = importlib.import_module("dlc.rewrites.schedule.tensorize")
    intrinsics = importlib.import_module("dlc.target.intrinsics")
    module = _matmul_module((32, 32), (32, 16))
    if mutation == "emitted rows":
        real = intrinsics.matrix_tiling
        for where in (tensorize_module, intrinsics):  # the rule's loads and tensorize's
            monkeypatch.setattr(where, "matrix_tiling",
                                lambda fragment, axis: _wrong_origins(real(fragment, axis)))
    assert _schedule(module, _config(min_gemm_blocks=0)) == ["mma-gemm"]
    monkeypatch.undo()
    if mutation == "model layout":
        real_get = intrinsics.get_matrix_load
        monkeypatch.setattr(intrinsics, "get_matrix_load",
                            lambda name: _transposed_model(real_get(name)))
    a = RNG.standard_normal((32, 32)).astype(np.float16)
    b = RNG.standard_normal((32, 16)).astype(np.float16)
    (got,) = run_function(module, "f", [a, b])
    want = a.astype(np.float32) @ b.astype(np.float32)
    assert not np.allclose(got.astype(np.float32), want, rtol=1e-2, atol=1e-2)


def test_interpreter_refuses_an_unaligned_ldmatrix_row() -> None:
    text = """
    func.func @f(%S: memref<16x16xf16>, %out: memref<32x4xf16>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      loop.for %l = %c0 to %c32 step %c1 axis "lane" kind bound thread "threadIdx.x" {
        loop.block "ld" reads(%S : memref<16x16xf16>) writes(%out : memref<32x4xf16>) {
          %r = arith.remui %l, %c8 : index
          %f = loop.matrix_load "ptx.ldmatrix.x2" %S[%r, %c1] : memref<16x16xf16> -> vector<4xf16>
          loop.store %f, %out[%l, %c0] : vector<4xf16> -> memref<32x4xf16>
        }
      }
      func.return
    }
    """
    module = Parser(make_context(), text).parse_module()
    source = RNG.standard_normal((16, 16)).astype(np.float16)
    with pytest.raises(Exception, match="expected 16-byte aligned rows"):
        LoopInterpreter(module).call("f", [source, np.zeros((32, 4), np.float16)])
    # aligned (column 0): lanes 0..7 give rows 0..7, lanes 8..15 the same rows (x2: matrix 1)
    aligned = Parser(make_context(), text.replace("%S[%r, %c1]", "%S[%r, %c0]")).parse_module()
    out = np.zeros((32, 4), np.float16)
    LoopInterpreter(aligned).call("f", [source, out])
    entry = MATRIX_LOADS["ptx.ldmatrix.x2"]
    rows = np.stack([source[lane % 8, :8] for lane in range(WARP_SIZE)])
    np.testing.assert_array_equal(out, matrix_load_reference(entry, rows))
    assert out[5].tolist() == [source[1, 2], source[1, 3], source[1, 2], source[1, 3]]


@pytest.mark.parametrize("config, element, rule", [
    # no mma.sync m16n8k16 before sm_80 (dlc describes no such CUDA target: the features)
    (_config(features=frozenset(f"sm_{n}" for n in range(50, 76))), f16, "thread-per-output"),
    (_config("opencl"), f16, "thread-per-output"),
    (_config(), f32, "gemm"),  # f32 stays on CUDA cores
])
def test_mma_gemm_needs_sm80_and_f16(config: GpuScheduleConfig, element, rule: str) -> None:
    module = _matmul_module((32, 32), (32, 32), element)
    assert _schedule(module, config) == [rule]
    assert not any(isinstance(op, IntrinsicOp) for op in module.walk())


# ----------------------------------------------------------------------------------------------
# PTX
# ----------------------------------------------------------------------------------------------


def _mma_ptx(arch: str, depth: int = 2) -> str:
    module = _matmul_module((64, 64), (64, 64))
    PassPipeline(parse_pipeline(
        f'loop-gpu-default-schedule{{target="cuda -arch={arch}" pipeline_depth={depth}}},'
        f'{TO_PTX}')).apply(make_context(), module)
    return emit_ptx(module)


def test_mma_gemm_emits_mma_sync() -> None:
    ptx = _mma_ptx("sm_80")
    assert ".target sm_80" in ptx
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") >= 1
    assert "bar.sync" in ptx


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_mma_gemm_ptx_assembles(tmp_path, arch: str, depth: int) -> None:
    ptx = _mma_ptx(arch, depth)
    assert ("cp.async.wait_group " + str(depth - 1) in ptx) == (depth > 1)
    path = tmp_path / "mma.ptx"
    path.write_text(ptx)
    result = subprocess.run(["ptxas", f"-arch={arch}", str(path), "-o", "/dev/null"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr



@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")
def test_gpu_benchmark_compiles_the_fp16_gemm_without_a_gpu(capsys: pytest.CaptureFixture
                                                             ) -> None:
    """`benchmarks/gpu.py --compile-only` (the GPU benchmark's kernels, through ptxas): the
    fp16 GEMM uses ldmatrix and mma.sync and spills nothing."""
    from benchmarks.gpu import main

    assert main(["--compile-only", "sm_90", "--gemm", "64"]) == 0
    out = capsys.readouterr().out
    fp16 = out.split("float16", 1)[1]
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in fp16 and "mma.sync.aligned" in fp16
    assert "0 bytes spill stores, 0 bytes spill loads" in fp16 and "Used" in fp16


@pytest.mark.parametrize("bk, row", [(16, 24), (32, 40)])
def test_mma_tile_rows_put_an_ldmatrix_phase_on_distinct_banks(bk: int, row: int) -> None:
    from dlc.rewrites.gpu_schedule_rules import MmaTiles

    tiles = MmaTiles(2, 2, 2, 4, bk, 16, 8, 16)
    assert tiles.row == row
    # 8 rows of 16 bytes (f16), 128-byte bank cycle: every 16-byte slot once
    slots = {(r * tiles.row * 2 // 16) % 8 for r in range(8)}
    assert len(slots) == 8
