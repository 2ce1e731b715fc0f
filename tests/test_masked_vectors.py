"""Vectors of runtime lanes: a split's partial tile (`0 to minui(16, n - t)`) vectorized with
masks (`vectorize_masked`): contiguous, strided and repeated loads and stores outside the
buffer's static extent masked to the lanes that run, a tile's accumulator read whole and
written by a blend; the compiled kernel against NumPy at every length, nothing written past
the output's end."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop import ForOp
from dlc.rewrites.llvm_lowering.vector import LANE_PRIVATE_ATTR, annotate_lane_private
from xdsl.parser import Parser

import dlc


def _tiled_row(name: str, stages: str) -> str:
    """A function over a row of runtime length `n` in tiles of 16 (`%t`), the last partial
    (its loops to `%ub = minui(16, n - t)`), each tile's `stages` using a local `%acc` of 16
    (`%c0`, `%c1`, `%c15`, `%c16` defined)."""
    return f"""
func.func @{name}(%x: memref<?xf32>, %out: memref<?xf32>, %x_d0: index, %n: index)
    attributes {{dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  loop.for %t = %c0 to %n step %c16 axis "i.0" {{
    %rem = arith.subi %n, %t : index
    %ub = arith.minui %c16, %rem : index
    %acc = loop.alloc local : memref<16xf32>
{stages}
    loop.dealloc %acc : memref<16xf32>
  }}
  func.return
}}
"""


MASKED_ROW = _tiled_row("masked_row", """
    loop.for %l = %c0 to %ub step %c1 axis "i.1" kind vectorized {
      loop.block "init" reads() writes(%acc : memref<16xf32>) spatial ["i.1"] {
        %zero = arith.constant 0.0 : f32
        loop.store %zero, %acc[%l] : f32 -> memref<16xf32>
      }
    }
    loop.for %l = %c0 to %ub step %c1 axis "i.1" kind vectorized {
      loop.block "sum" reads(%x, %acc : memref<?xf32>, memref<16xf32>)
          writes(%acc : memref<16xf32>) spatial ["i.1"] {
        %i = arith.addi %t, %l : index
        %two = arith.constant 2 : index
        %j = arith.muli %i, %two : index
        %k = arith.divui %i, %two : index
        %a = loop.load %x[%i] : memref<?xf32> -> f32
        %b = loop.load %x[%j] : memref<?xf32> -> f32
        %c = loop.load %x[%k] : memref<?xf32> -> f32
        %s = loop.load %acc[%l] : memref<16xf32> -> f32
        %p = arith.addf %a, %b : f32
        %q = arith.addf %p, %c : f32
        %r = arith.addf %s, %q : f32
        loop.store %r, %acc[%l] : f32 -> memref<16xf32>
      }
    }
    loop.for %l = %c0 to %ub step %c1 axis "i.1" kind vectorized {
      loop.block "write" reads(%acc : memref<16xf32>) writes(%out : memref<?xf32>)
          spatial ["i.1"] {
        %i = arith.addi %t, %l : index
        %s = loop.load %acc[%l] : memref<16xf32> -> f32
        loop.store %s, %out[%i] : f32 -> memref<?xf32>
      }
    }""")
"""Tiles of 16 over a row of runtime length, the last partial: out[i] = x[i] + x[2i] + x[i/2]
(a contiguous, a strided and a repeated load), summed in a local accumulator."""


def _parse(text: str):
    return Parser(make_context(), text).parse_module()


def test_the_trip_bound_of_a_partial_tile() -> None:
    loops = [op for op in _parse(MASKED_ROW).walk() if isinstance(op, ForOp)]
    assert [(loop.trip_count(), loop.trip_bound()) for loop in loops] == \
        [(None, None)] + [(None, 16)] * 3, "the tiles' loop has no bound; each tile 16 lanes"


@pytest.mark.parametrize("target", ["x86-64-v3", "skylake-avx512"])
def test_masked_tiles_match_numpy_and_write_nothing_past_the_row(target: str) -> None:
    """Every length from 1 to 50 (8- and 16-lane vectors: rows of whole vectors, of one
    partial tile, of whole ones and a partial one); the input exactly as long as the strided
    load reads (`2n - 1`), the output a view followed by sentinels that must stay."""
    executable = dlc.compile(_parse(MASKED_ROW), target=f"llvm -mcpu={target}", cache=False)
    for n in range(1, 51):
        x = np.random.default_rng(n).standard_normal(2 * n - 1).astype(np.float32)
        padded = np.full(n + 32, 7.0, np.float32)
        out = padded[:n]
        executable(x, out=[out])
        i = np.arange(n)
        np.testing.assert_allclose(out, x[i] + x[2 * i] + x[i // 2], rtol=1e-6)
        assert (padded[n:] == 7.0).all(), f"a store past the row's end at n={n}"


BLEND_ROW = _tiled_row("blend_row", """
    loop.for %l = %c0 to %c16 step %c1 axis "i.1" kind vectorized {
      loop.block "fill" reads() writes(%acc : memref<16xf32>) spatial ["i.1"] {
        %one = arith.constant 1.0 : f32
        loop.store %one, %acc[%l] : f32 -> memref<16xf32>
      }
    }
    loop.for %l = %c0 to %ub step %c1 axis "i.1" kind vectorized {
      loop.block "scale" reads(%x, %acc : memref<?xf32>, memref<16xf32>)
          writes(%acc : memref<16xf32>) spatial ["i.1"] {
        %i = arith.addi %t, %l : index
        %a = loop.load %x[%i] : memref<?xf32> -> f32
        %s = loop.load %acc[%l] : memref<16xf32> -> f32
        %r = arith.mulf %s, %a : f32
        loop.store %r, %acc[%l] : f32 -> memref<16xf32>
      }
    }
    loop.for %l = %c0 to %ub step %c1 axis "i.1" {
      loop.block "mirror" reads(%acc : memref<16xf32>) writes(%out : memref<?xf32>)
          spatial ["i.1"] {
        %i = arith.addi %t, %l : index
        %m = arith.subi %c15, %l : index
        %s = loop.load %acc[%l] : memref<16xf32> -> f32
        %r = loop.load %acc[%m] : memref<16xf32> -> f32
        %v = arith.addf %s, %r : f32
        loop.store %v, %out[%i] : f32 -> memref<?xf32>
      }
    }""")
"""A tile's scratch read past the masked loop's lanes (`acc[15 - l]`): the masked loop must keep
the lanes it does not run (1.0; its masked loads read 0 there), so its store blends;
out[t + l] = acc[l] + acc[15 - l]."""


def test_a_scratch_read_past_the_lanes_keeps_their_values() -> None:
    module = _parse(BLEND_ROW)
    annotate_lane_private(module)
    assert not [op for op in module.walk() if LANE_PRIVATE_ATTR in op.attributes], \
        "a scratch read at another lane is not lane-private"
    masked = _parse(MASKED_ROW)
    annotate_lane_private(masked)
    assert len([op for op in masked.walk() if LANE_PRIVATE_ATTR in op.attributes]) == 1
    executable = dlc.compile(_parse(BLEND_ROW), target="llvm -mcpu=skylake-avx512", cache=False)
    for n in (1, 5, 15, 16, 17, 23, 40):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        out = np.empty(n, np.float32)
        executable(x, out=[out])
        acc = np.ones(((n + 15) // 16) * 16, np.float32)
        acc[:n] *= x
        tiles = acc.reshape(-1, 16)
        expected = (tiles + tiles[:, ::-1]).reshape(-1)[:n]
        np.testing.assert_allclose(out, expected, rtol=1e-6)
