"""runtime.gpu_host.BufferPool: the device-buffer reuse the CUDA and OpenCL backends share."""

from __future__ import annotations

from runtime.gpu_host import BufferPool


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
