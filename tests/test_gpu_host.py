"""runtime.gpu_host: the device-buffer reuse the CUDA and OpenCL backends share, and the recording
of an entry's launches as a graph (checked here on a backend that logs launches; the CUDA graph
itself runs in tests/test_gpu_run.py where a GPU exists)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from dlc.dialects import make_context
from dlc.driver.build import lower
from dlc.runtime.gpu_host import BufferPool, GpuExecutable, HostProgram, KernelArgument
from xdsl.parser import Parser


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
    executable = GpuExecutable(HostProgram(module), backend, "mlp", "")
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
    executable = GpuExecutable(HostProgram(module), backend, "mlp", "")
    call = executable.prepare(*[np.zeros(s, np.float32) for s in ((8, 16), (16, 32), (32, 4))])
    assert not call.capture()
    assert backend.log == []  # nothing ran
    call.run()
    assert backend.log  # interpreted, launch by launch
