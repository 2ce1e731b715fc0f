"""runtime.gpu_host: the device-buffer reuse the CUDA and OpenCL backends share, the recording
of an entry's launches as a graph (checked here on a backend that logs launches; the CUDA graph
itself runs in tests/test_gpu_run.py where a GPU exists), and the plain-data host plan the driver
(driver/gpu.py) makes for the runtimes, which import no compiler."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.driver.build import lower
from dlc.driver.gpu import host_plan
from dlc.runtime.gpu_host import (
    Alloc,
    BufferPool,
    Call,
    Free,
    GpuExecutable,
    HostProgram,
    KernelArgument,
    Launch,
    Weight,
)
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException


class FakeBuffer:
    """A device buffer stand-in that records its size."""

    def __init__(self, size: int) -> None:
        self.size = size


def test_freed_buffers_are_reused_by_size() -> None:
    made: list[int] = []

    def make(size: int) -> FakeBuffer:
        made.append(size)
        return FakeBuffer(size)

    pool = BufferPool(make)
    a, b = pool.allocate(16), pool.allocate(0)
    assert (a.size, b.size) == (16, 1)  # never a zero-byte buffer
    pool.free(a)
    assert pool.allocate(8) is not a  # another size: a new buffer
    assert pool.allocate(16) is a
    assert made == [16, 1, 8]


def test_drain_hands_back_the_free_buffers_once() -> None:
    pool = BufferPool(FakeBuffer, key=id)
    buffers = [pool.allocate(n) for n in (4, 4, 8)]
    for buffer in buffers[:2]:
        pool.free(buffer)
    drained = pool.drain()
    assert sorted(map(id, drained)) == sorted(map(id, buffers[:2]))
    assert pool.drain() == []
    assert pool.allocate(4) not in buffers  # drained buffers are not handed out again


def test_hold_keeps_a_freed_buffer_out_of_reuse() -> None:
    pool = BufferPool(FakeBuffer)
    a = pool.allocate(16)
    assert not pool.hold(a)  # still in use: nothing to hold
    pool.free(a)
    assert pool.hold(a)
    assert pool.allocate(16) is not a
    pool.free(a)
    assert pool.allocate(16) is a


# ----------------------------------------------------------------------------------------------
# Recording an entry's launches as a graph (what the CUDA backend does with CUDA graphs)
# ----------------------------------------------------------------------------------------------

TWO_LAYERS = """
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x4xf32>)
    -> tensor<8x4xf32> {
  %h = graph.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %r = graph.relu %h : tensor<8x32xf32>
  %y = graph.matmul %r, %w2 : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}
"""


class LoggingBackend:
    """A device that runs nothing: pooled stand-in buffers and a log of launches."""

    def __init__(self) -> None:
        self.pool = BufferPool(FakeBuffer)
        self.log: list[object] = []
        self.recording: list[object] | None = None

    def allocate(self, nbytes: int) -> FakeBuffer:
        return self.pool.allocate(nbytes)

    def upload(self, array: np.ndarray) -> FakeBuffer:
        return self.pool.allocate(array.nbytes)

    def write(self, buffer: FakeBuffer, array: np.ndarray) -> None:
        pass

    def read(self, buffer: FakeBuffer, array: np.ndarray) -> None:
        array[...] = 0

    def free(self, buffer: FakeBuffer) -> None:
        self.pool.free(buffer)

    def launch(self, kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int],
               args: Sequence[KernelArgument]) -> None:
        entry = (kernel, grid, block, tuple(id(a.value) if a.is_buffer else a.value.item()
                                            for a in args))
        (self.log if self.recording is None else self.recording).append(entry)

    def synchronize(self) -> None:
        pass


class RecordingBackend(LoggingBackend):
    """`LoggingBackend` with graphs: `capture` records a run's launches into a graph that logs
    them again on each replay."""

    def hold(self, buffer: FakeBuffer) -> bool:
        return self.pool.hold(buffer)

    def capture(self, run: Callable[[], None]) -> object:
        self.recording, self.pool.handed_out = [], []
        run()
        recorded, handed_out = self.recording, self.pool.handed_out
        self.recording = self.pool.handed_out = None
        log = self.log

        class Graph:
            buffers = handed_out

            def launch(self) -> None:
                log.extend(recorded)

            def release(self) -> None:
                log.append("released")

        return Graph()


def test_captured_launches_replay_on_the_same_buffers() -> None:
    """`DeviceCall.capture` runs the entry once (weights uploaded, pool filled), records its
    launches, and `run` then replays them; the intermediate buffers the recording uses (the
    8x32 hidden layer) stay out of the pool until `release`, so another call cannot take them."""
    module = Parser(make_context(), TWO_LAYERS).parse_module()
    lower(module, "gpu-opencl", make_context())
    backend = RecordingBackend()
    executable = GpuExecutable(HostProgram(host_plan(module)), backend, "mlp", "")
    inputs = [np.zeros(shape, np.float32) for shape in ((8, 16), (16, 32), (32, 4))]
    call = executable.prepare(*inputs)
    assert call.capture()
    warm_up = list(backend.log)
    assert len(warm_up) >= 2  # two matmul kernels at least
    call.run()
    call.run()
    assert backend.log == warm_up * 3  # replayed twice, the same launches on the same buffers
    held = {id(b) for b in call._held}
    hidden = {arg for _, _, _, args in warm_up for arg in args} - {id(b) for b in call.buffers}
    assert hidden and hidden <= held
    other = executable.prepare(*inputs)
    other.run()
    assert not {arg for _, _, _, args in backend.log[len(warm_up) * 3:] for arg in args} & held
    call.release()
    assert "released" in backend.log and call._held == []


def test_capture_is_refused_where_the_backend_cannot_record() -> None:
    module = Parser(make_context(), TWO_LAYERS).parse_module()
    lower(module, "gpu-opencl", make_context())
    backend = LoggingBackend()  # no graphs, as OpenCL
    executable = GpuExecutable(HostProgram(host_plan(module)), backend, "mlp", "")
    call = executable.prepare(*[np.zeros(s, np.float32) for s in ((8, 16), (16, 32), (32, 4))])
    assert not call.capture()
    assert backend.log == []  # nothing ran
    call.run()
    assert backend.log  # interpreted, launch by launch


# ----------------------------------------------------------------------------------------------
# The host plan: what the driver hands the runtimes
# ----------------------------------------------------------------------------------------------


def lowered(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    lower(module, "gpu-opencl", make_context())
    return module


def test_host_plan_is_plain_data() -> None:
    """The driver walks the host functions once into steps over numbered slots (arguments
    first): the entry allocates the hidden layer, calls the two kernels' host functions with it
    and frees it; each of those launches its kernel with constant sizes."""
    plan = host_plan(lowered(TWO_LAYERS))
    mlp = plan.functions["mlp"]
    assert mlp.num_arguments == 4
    alloc, first, second, free = mlp.steps
    assert alloc == Alloc(4, 8 * 32 * 4) and free == Free(4)
    assert isinstance(first, Call) and first.args == (0, 1, 4)
    assert isinstance(second, Call) and second.args == (4, 2, 3)
    for callee in (first.callee, second.callee):
        (launch,) = plan.functions[callee].steps
        assert isinstance(launch, Launch) and launch.kernel.startswith(callee)
        assert all(isinstance(n, int) for n in (*launch.grid, *launch.block))
        assert [arg.dtype for arg in launch.args] == [None, None, None]  # three buffers
    assert [(a.name, a.shape) for a in plan.signatures["mlp"].inputs] == [
        ("x", (8, 16)), ("w1", (16, 32)), ("w2", (32, 4))]
    assert plan.constants == {}


def test_host_plan_holds_the_weights_as_arrays() -> None:
    """A constant tensor becomes a `Weight` step naming an array of the plan (the runtime
    uploads it once per device)."""
    plan = host_plan(lowered("""
func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""))
    weights = [s for f in plan.functions.values() for s in f.steps if isinstance(s, Weight)]
    assert [w.name for w in weights] == list(plan.constants)
    (array,) = plan.constants.values()
    np.testing.assert_array_equal(array, np.array([1.0, 2.0, 3.0, 4.0], np.float32))


@pytest.mark.parametrize(
    "body, message",
    [
        ("%c2 = arith.addi %c1, %c1 : index",
         "'arith.addi' op is not supported in a host function of a GPU module"),
        ("target_gpu.launch @kernels::@k grid(%n, %c1, %c1) block(%c1, %c1, %c1) args(%a : "
         "memref<4xf32>)", "'target_gpu.launch' op expected constant grid and block sizes"),
    ],
)
def test_host_plan_reports_what_it_cannot_run(body: str, message: str) -> None:
    module = Parser(make_context(), f"""
func.func @f(%a: memref<4xf32>, %n: index) attributes {{dlc.num_outputs = 1 : i64}} {{
  %c1 = arith.constant 1 : index
  {body}
  func.return
}}
""").parse_module()
    with pytest.raises(DiagnosticException, match=message):
        host_plan(module)


def test_gpu_runtimes_import_no_compiler() -> None:
    """A deployed GPU program needs NumPy and the device library only: the runtimes import no
    xDSL, no llvmlite and no compiler package of dlc."""
    code = (
        "import sys, dlc.runtime.gpu_host, dlc.runtime.opencl, dlc.runtime.cuda, "
        "dlc.runtime.gpu_library\n"
        "compiler = ('dlc.dialects', 'dlc.target', 'dlc.frontends', 'dlc.rewrites', "
        "'dlc.codegen', 'dlc.pipelines', 'dlc.driver', 'dlc.autotune', 'xdsl', 'llvmlite')\n"
        "print(sorted(m for m in sys.modules if m.startswith(compiler)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent.parent, check=True)
    assert result.stdout.strip() == "[]", result.stdout
