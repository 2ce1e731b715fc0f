"""Vectorized, parallel and unrolled `loop.for`s on the CPU: convert-loop-to-llvm's real lowerings
(vector code, GOMP_parallel, replicated bodies), JIT-run and compared with NumPy; the LLVM IR they
leave (vector types, llvm.fma, the OpenMP calls); shared libraries that link libgomp."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.codegen.llvm import emit_llvm_ir
from dlc.dialects import make_context
from dlc.driver.export import export_shared_library
from dlc.driver.jit import (
    JitModule,
    parse_and_optimize,
    target_machine,
    uses_openmp,
)
from dlc.rewrites.convert_loop_to_llvm import ConvertLoopToLLVMPass
from dlc.runtime.executable import Executable
from dlc.runtime.library import load_library
from dlc.target import DEFAULT_CPU_TARGET
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

RNG = np.random.default_rng(20261129)


def llvm_ir(text: str, num_threads: int = 0, schedule: str = "static") -> str:
    """LLVM IR of a loop-level module for the default target, its vectors 512 bits wide (16
    f32 lanes, which LLVM splits for the AVX2 target)."""
    module: ModuleOp = Parser(make_context(), text).parse_module()
    module.verify()
    ConvertLoopToLLVMPass(
        threads=num_threads, vector_bits=512, parallel_schedule=schedule
    ).apply(make_context(), module)
    module.verify()
    return emit_llvm_ir(module)


def run(
    text: str, *inputs: np.ndarray, num_threads: int = 0, schedule: str = "static"
) -> np.ndarray:
    return Executable(JitModule(llvm_ir(text, num_threads, schedule)))(*inputs)


AXPY = """
func.func @axpy(%x: memref<{n}xf32>, %y: memref<{n}xf32>, %a: memref<1xf32>,
                %out: memref<{n}xf32>) attributes {{dlc.num_outputs = 1 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  loop.for %i = %c0 to %cn step %c1 axis "i" kind vectorized {{
    %s = loop.load %a[%c0] : memref<1xf32> -> f32
    %xi = loop.load %x[%i] : memref<{n}xf32> -> f32
    %yi = loop.load %y[%i] : memref<{n}xf32> -> f32
    %m = arith.mulf %s, %xi : f32
    %r = arith.addf %m, %yi : f32
    loop.store %r, %out[%i] : f32 -> memref<{n}xf32>
  }}
  func.return
}}
"""


@pytest.mark.parametrize("n", [1, 7, 16, 40, 64, 100])
def test_vectorized_axpy(n: int) -> None:
    """Straight-line vectors (up to 4), a loop over vectors (more), and a narrower remainder."""
    x, y = RNG.standard_normal((2, n), dtype=np.float32)
    a = RNG.standard_normal(1, dtype=np.float32)
    np.testing.assert_allclose(run(AXPY.format(n=n), x, y, a), a[0] * x + y, rtol=1e-5, atol=1e-6)


def test_vectorized_code_is_vector_code() -> None:
    """`<16 x float>` loads, stores and `llvm.fma` (the mul+add contracted); no scalar loop."""
    text = llvm_ir(AXPY.format(n=32))
    assert "load <16 x float>" in text
    assert "store <16 x float>" in text
    assert '@"llvm.fma.v16f32"(<16 x float>' in text
    assert "fmul" not in text


GATHER_PRIVATE = """
func.func @transpose_scale(%x: memref<8x8xf32>, %out: memref<8x8xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" kind vectorized {
      %t = loop.alloc local : memref<1xf32>
      %v = loop.load %x[%j, %i] : memref<8x8xf32> -> f32
      %w = arith.mulf %v, %two : f32
      loop.store %w, %t[%c0] : f32 -> memref<1xf32>
      %u = loop.load %t[%c0] : memref<1xf32> -> f32
      loop.store %u, %out[%i, %j] : f32 -> memref<8x8xf32>
      loop.dealloc %t : memref<1xf32>
    }
  }
  func.return
}
"""


def test_vectorized_gather_and_private_buffer() -> None:
    """A strided load is gathered lane by lane; a buffer allocated inside is private per lane."""
    x = RNG.standard_normal((8, 8), dtype=np.float32)
    np.testing.assert_allclose(run(GATHER_PRIVATE, x), 2 * x.T, rtol=1e-6)
    assert "insertelement" in llvm_ir(GATHER_PRIVATE)


STRIDED = """
func.func @every_nth(%x: memref<3x{n}xf32>, %out: memref<3x{m}xf32>)
    attributes {{dlc.num_outputs = 1 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %stride = arith.constant {stride} : index
  %offset = arith.constant {offset} : index
  %cm = arith.constant {m} : index
  loop.for %r = %c0 to %c3 step %c1 axis "r" {{
    loop.for %i = %c0 to %cm step %c1 axis "i" kind vectorized {{
      %scaled = arith.muli %i, %stride : index
      %j = arith.addi %scaled, %offset : index
      %v = loop.load %x[%r, %j] : memref<3x{n}xf32> -> f32
      loop.store %v, %out[%r, %i] : f32 -> memref<3x{m}xf32>
    }}
  }}
  func.return
}}
"""


@pytest.mark.parametrize("stride", [2, 3, 4, 5])
@pytest.mark.parametrize("m", [1, 2, 5, 16, 17, 40, 70])
def test_vectorized_strided_load(stride: int, m: int) -> None:
    """Every `stride`-th element of rows exactly as long as the lanes read (so a vector load
    past the last lane's element would read outside the row): vector loads and shuffles for
    strides 2-4, a lane-by-lane gather for 5; straight-line, looped and remainder vectors."""
    for offset in (0, 1):
        n = stride * (m - 1) + 1 + offset
        x = RNG.standard_normal((3, n), dtype=np.float32)
        text = STRIDED.format(n=n, m=m, stride=stride, offset=offset)
        np.testing.assert_array_equal(run(text, x), x[:, offset::stride][:, :m])
    ir = llvm_ir(STRIDED.format(n=stride * 15 + 1, m=16, stride=stride, offset=0))
    assert ir.count("load <16 x float>") == (stride if stride <= 4 else 0)
    assert ("insertelement" in ir) == (stride > 4)


TRANSPOSED_COPY = """
func.func @pack(%x: memref<{c}x{k}xf32>, %out: memref<{k}x{c}xf32>)
    attributes {{dlc.num_outputs = 1 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cb = arith.constant {block} : index
  %cc = arith.constant {c} : index
  %ck = arith.constant {k} : index
  loop.for %ko = %c0 to %ck step %cb axis "ko" {{
    loop.for %l = %c0 to %cc step %c1 axis "l" kind vectorized {{
      loop.for %kk = %c0 to %cb step %c1 axis "kk" {{
        loop.block "pack" reads(%x : memref<{c}x{k}xf32>) writes(%out : memref<{k}x{c}xf32>)
            spatial ["ko", "l", "kk"] {{
          %k = arith.addi %ko, %kk : index
          %v = loop.load %x[%l, %k] : memref<{c}x{k}xf32> -> f32
          loop.store %v, %out[%k, %l] : f32 -> memref<{k}x{c}xf32>
        }}
      }}
    }}
  }}
  func.return
}}
"""


@pytest.mark.parametrize("c, k, block", [(16, 16, 16), (32, 48, 16), (48, 16, 16), (20, 16, 16),
                                         (16, 24, 8), (16, 12, 4)])
def test_vectorized_transposed_copy(c: int, k: int, block: int) -> None:
    """A vectorized loop over the rows of `x` around a loop of one vector's lanes along them
    (a channel-last pack) transposes blocks in registers: row loads and shuffles, no
    lane-by-lane gather, where the inner loop has as many iterations as a vector has lanes
    (16 f32); other blocks (8 or 4 iterations) and a narrower remainder of lanes (20 rows:
    16 + 4) still copy correctly."""
    x = RNG.standard_normal((c, k), dtype=np.float32)
    text = TRANSPOSED_COPY.format(c=c, k=k, block=block)
    np.testing.assert_array_equal(run(text, x), x.T)
    if block == 16 and c % 16 == 0:
        ir = llvm_ir(text)
        assert "load <16 x float>" in ir and "shufflevector" in ir
        assert "insertelement" not in ir


FLAT_TRANSPOSED_COPY = TRANSPOSED_COPY.replace(
    "%x: memref<{c}x{k}xf32>", "%x: memref<{n}xf32>"
).replace(
    "reads(%x : memref<{c}x{k}xf32>)", "reads(%x : memref<{n}xf32>)"
).replace(
    "%v = loop.load %x[%l, %k] : memref<{c}x{k}xf32> -> f32",
    "%row = arith.muli %l, %ck : index\n          %flat = arith.addi %row, %k : index\n"
    "          %v = loop.load %x[%flat] : memref<{n}xf32> -> f32",
)
"""`TRANSPOSED_COPY` reading a flat buffer: row `l` of `x` at offset `l * k`."""


def test_vectorized_transposed_copy_of_a_flat_buffer() -> None:
    """The same copy reading its rows from a flat buffer (a runtime-strided view linearized:
    the lanes then differ in the last, only index): still row loads and shuffles, each lane's
    row starting at its own offset, no lane-by-lane gather."""
    c, k = 32, 48
    x = RNG.standard_normal((c, k), dtype=np.float32)
    text = FLAT_TRANSPOSED_COPY.format(n=c * k, c=c, k=k, block=16)
    np.testing.assert_array_equal(run(text, x.reshape(-1)), x.T)
    ir = llvm_ir(text)
    assert "load <16 x float>" in ir and "shufflevector" in ir
    assert "insertelement" not in ir


LANE_REDUCTION = """
func.func @sum(%x: memref<32xf32>, %out: memref<1xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  loop.store %zero, %out[%c0] : f32 -> memref<1xf32>
  loop.for %i = %c0 to %c32 step %c1 axis "i" kind vectorized {
    %acc = loop.load %out[%c0] : memref<1xf32> -> f32
    %v = loop.load %x[%i] : memref<32xf32> -> f32
    %s = arith.addf %acc, %v : f32
    loop.store %s, %out[%c0] : f32 -> memref<1xf32>
  }
  func.return
}
"""


def test_vectorized_cross_lane_store_runs_serially() -> None:
    """Every lane writing one element (a reduction across lanes) cannot run in lock-step: the
    loop runs serially and still sums correctly."""
    x = RNG.standard_normal(32, dtype=np.float32)
    np.testing.assert_allclose(run(LANE_REDUCTION, x)[0], x.sum(), rtol=1e-5)


PARALLEL = """
func.func @rows(%x: memref<{m}x24xf32>, %out: memref<{m}x24xf32>)
    attributes {{dlc.num_outputs = 1 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c24 = arith.constant 24 : index
  %cm = arith.constant {m} : index
  loop.for %i = %c0 to %cm step %c1 axis "i" kind parallel {{
    %fi = arith.index_cast %i : index to i64
    %row = arith.sitofp %fi : i64 to f32
    loop.for %j = %c0 to %c24 step %c1 axis "j" kind vectorized {{
      %v = loop.load %x[%i, %j] : memref<{m}x24xf32> -> f32
      %r = arith.addf %v, %row : f32
      loop.store %r, %out[%i, %j] : f32 -> memref<{m}x24xf32>
    }}
  }}
  func.return
}}
"""


@pytest.mark.parametrize("schedule", ["static", "dynamic", "guided"])
@pytest.mark.parametrize(("rows", "threads"), [(1, 2), (2, 3), (7, 1), (7, 2), (64, 2)])
def test_parallel_chunks(rows: int, threads: int, schedule: str) -> None:
    """Every iteration runs exactly once whatever the split (more threads than iterations,
    uneven chunks), with static chunks or iterations handed out dynamically."""
    x = RNG.standard_normal((rows, 24), dtype=np.float32)
    expected = x + np.arange(rows, dtype=np.float32)[:, None]
    result = run(PARALLEL.format(m=rows), x, num_threads=threads, schedule=schedule)
    np.testing.assert_allclose(result, expected)


@pytest.mark.parametrize("schedule", ["dynamic", "guided"])
def test_parallel_dynamic_schedules_call_libgomp_loop(schedule: str) -> None:
    text = llvm_ir(PARALLEL.format(m=8), num_threads=2, schedule=schedule)
    assert f'@"GOMP_loop_{schedule}_start"' in text and f'@"GOMP_loop_{schedule}_next"' in text
    assert "omp_get_num_threads" not in text


def test_parallel_calls_gomp_parallel() -> None:
    text = llvm_ir(PARALLEL.format(m=8), num_threads=2)
    assert uses_openmp(text)
    assert '@"omp_get_thread_num"' in text and '@"omp_get_num_threads"' in text
    assert 'call ccc void @"GOMP_parallel"' in text


def test_parallel_shared_library(tmp_path: object) -> None:
    """A .so with a parallel loop links libgomp and runs when loaded."""
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    path = export_shared_library(llvm_ir(PARALLEL.format(m=16), 2), tmp_path / "rows.so")
    x = RNG.standard_normal((16, 24), dtype=np.float32)
    result = Executable(load_library(path))(x)
    np.testing.assert_allclose(result, x + np.arange(16, dtype=np.float32)[:, None])


UNROLLED = """
func.func @poly(%x: memref<5xf32>, %out: memref<5xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  loop.for %i = %c0 to %c5 step %c1 axis "i" kind unrolled {
    %v = loop.load %x[%i] : memref<5xf32> -> f32
    %w = arith.mulf %v, %v : f32
    loop.store %w, %out[%i] : f32 -> memref<5xf32>
  }
  func.return
}
"""


def test_unrolled_loop_is_replicated_by_llvm() -> None:
    """The loop reaches LLVM with `llvm.loop.unroll.full`; after optimization no branch is
    left."""
    x = RNG.standard_normal(5, dtype=np.float32)
    np.testing.assert_allclose(run(UNROLLED, x), x * x, rtol=1e-6)
    text = llvm_ir(UNROLLED)
    assert '!"llvm.loop.unroll.full"' in text and "br i1" in text
    optimized = str(parse_and_optimize(text, target_machine(DEFAULT_CPU_TARGET, 3), 3))
    assert "br i1" not in optimized and "br label" not in optimized


PAIR_DOT = """
func.func @pair_dot(%x: memref<{n}x{xt}>, %w: memref<{n}x{wt}>, %zx: memref<{xt}>,
                    %acc: memref<{n}xi32>, %out: memref<{n}xi32>)
    attributes {{dlc.num_outputs = 1 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  loop.for %i = %c0 to %cn step %c1 axis "i" kind vectorized {{
    loop.block "dot" reads(%x, %w, %zx, %acc : memref<{n}x{xt}>, memref<{n}x{wt}>, memref<{xt}>,
        memref<{n}xi32>) writes(%out : memref<{n}xi32>) spatial ["i"] {{
      %xi = loop.load %x[%i] : memref<{n}x{xt}> -> {xt}
      %xe = arith.{xext} %xi : {xt} to i32
      %z = loop.load %zx[] : memref<{xt}> -> {xt}
      %ze = arith.{xext} %z : {xt} to i32
      %xs = arith.subi %xe, %ze : i32
      %wi = loop.load %w[%i] : memref<{n}x{wt}> -> {wt}
      %we = arith.extsi %wi : {wt} to i32
      %p = arith.muli %xs, %we : i32
      %a = loop.load %acc[%i] : memref<{n}xi32> -> i32
      %s = arith.addi %a, %p : i32
      loop.store %s, %out[%i] : i32 -> memref<{n}xi32>
    }}
  }}
  func.return
}}
"""


@pytest.mark.parametrize(("n", "xt", "xext", "wt"), [
    (40, "i8", "extui", "i8"),    # u8 minus a zero point by s8: two 16-lane pair dots, a rest
    (16, "i8", "extsi", "i16"),   # s8 by s16
    (7, "i8", "extui", "i8"),     # no whole vector of 16: mul + add only
])
def test_pair_dot_of_16_bit_factors_matches_numpy(n: int, xt: str, xext: str, wt: str) -> None:
    """`acc + (ext(x) - ext(zx)) * ext(w)` vectorized for a VNNI target: its 16-lane vectors
    are vpdpwssd calls (in the LLVM IR), and the JIT-run result (on a VNNI host) equals NumPy
    at the extremes of each type."""
    from dlc.target.parse import parse_cpu_target

    target = "llvm -mcpu=cascadelake"
    module: ModuleOp = Parser(make_context(), PAIR_DOT.format(n=n, xt=xt, xext=xext, wt=wt)
                              ).parse_module()
    ConvertLoopToLLVMPass(target=target).apply(make_context(), module)
    ir = emit_llvm_ir(module)
    assert ("llvm.x86.avx512.vpdpwssd.512" in ir) == (n >= 16)
    cpu = parse_cpu_target(target)
    if cpu.features - set(target_machine_features()):
        pytest.skip("the host lacks cascadelake's features")
    x_type = np.uint8 if xext == "extui" else np.int8
    w_type = np.int8 if wt == "i8" else np.int16
    x_info, w_info = np.iinfo(x_type), np.iinfo(w_type)
    x = RNG.integers(x_info.min, x_info.max + 1, n).astype(x_type)
    w = RNG.integers(w_info.min, w_info.max + 1, n).astype(w_type)
    x[:4] = [x_info.min, x_info.max, x_info.min, x_info.max][: min(4, n)]
    w[:4] = [w_info.min, w_info.max, w_info.max, w_info.min][: min(4, n)]
    zx = np.asarray(x_info.max if xext == "extui" else x_info.min, dtype=x_type)
    acc = RNG.integers(-2**31, 2**31, n).astype(np.int32)
    expected = (acc.astype(np.int64) + (x.astype(np.int64) - int(zx)) * w.astype(np.int64))
    expected = (expected & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    got = Executable(JitModule(ir, target=cpu))(
        x.view(np.int8), w.view(np.int8 if wt == "i8" else np.int16), zx.view(np.int8), acc)
    np.testing.assert_array_equal(got, expected)


def target_machine_features() -> frozenset[str]:
    """The host's CPU features (LLVM's names) that it has."""
    import llvmlite.binding as llvm

    return frozenset(name for name, on in llvm.get_host_cpu_features().items() if on)
