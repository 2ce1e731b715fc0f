"""Winograd's minimal filtering F(m, 3) along the rows of a convolution, in NumPy.

Counterpart: TVM's `topi.nn.winograd_util` (the transform matrices) and its
`conv2d_winograd_without_weight_transform` (the weight transformed once, at compile time);
Arm Compute Library's one-dimensional "Winograd 4x1" convolutions.

A 3-tap correlation `y[i] = sum_r g[r] d[i + r]` computes m outputs from m + 2 inputs with
`alpha = m + 2` multiplications instead of 3m: `y = A^T ((G g) * (B^T d))` (Lavin and Gray,
"Fast Algorithms for Convolutional Neural Networks", 2015). dlc applies it to the rows (H) of a
3xKW conv2d only, and keeps the columns direct:

    V[n, a, c, t, x] = sum_r B^T[a, r] * xpad[n, c, m*t + r, x]                (input transform)
    M[n, a, k, t, w] = sum_(c, j) U[a, k, c, j] * V[n, a, c, t, w + j]   (alpha 1xKW convs)
    y[n, k, m*t + i, w] = sum_a A^T[i, a] * M[n, a, k, t, w]                  (output transform)

with `U[a, k, c, j] = sum_r G[a, r] * weight[k, c, r, j]` (the weight transform). The convs in
the middle do alpha/(3m) of the direct conv's multiply-adds: 2/3 for m = 2, 1/2 for m = 4.
Every step is contiguous along the row (w), so each vectorizes as the direct conv does; the
two-dimensional F(m x m, 3 x 3) would need gathers along w in the NCHW layout.
"""

from __future__ import annotations

import numpy as np

TILES = (2, 4)
"""The supported output tiles m (rows per tile)."""

_MATRICES: dict[int, tuple[list[list[float]], list[list[float]], list[list[float]]]] = {
    # m = 2, interpolation points 0, 1, -1, infinity.
    2: (
        [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
        [[1, 0, 0], [1 / 2, 1 / 2, 1 / 2], [1 / 2, -1 / 2, 1 / 2], [0, 0, 1]],
        [[1, 1, 1, 0], [0, 1, -1, -1]],
    ),
    # m = 4, interpolation points 0, 1, -1, 2, -2, infinity.
    4: (
        [
            [4, 0, -5, 0, 1, 0],
            [0, -4, -4, 1, 1, 0],
            [0, 4, -4, -1, 1, 0],
            [0, -2, -1, 2, 1, 0],
            [0, 2, -1, -2, 1, 0],
            [0, 4, 0, -5, 0, 1],
        ],
        [
            [1 / 4, 0, 0],
            [-1 / 6, -1 / 6, -1 / 6],
            [-1 / 6, 1 / 6, -1 / 6],
            [1 / 24, 1 / 12, 1 / 6],
            [1 / 24, -1 / 12, 1 / 6],
            [0, 0, 1],
        ],
        [
            [1, 1, 1, 1, 1, 0],
            [0, 1, -1, 2, -2, 0],
            [0, 1, 1, 4, 4, 0],
            [0, 1, -1, 8, -8, 1],
        ],
    ),
}


def transform_matrices(tile: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B^T: alpha x alpha, G: alpha x 3, A^T: tile x alpha) of F(tile, 3), in float64."""
    if tile not in _MATRICES:
        raise ValueError(f"expected a Winograd tile in {TILES}, found {tile}")
    return tuple(np.array(matrix, dtype=np.float64) for matrix in _MATRICES[tile])  # type: ignore[return-value]


def tile_rows(out_rows: int, tile: int) -> int:
    """The number of row tiles covering `out_rows` output rows (the last may be partial)."""
    return -(-out_rows // tile)


def transform_weight(weight: np.ndarray, tile: int) -> np.ndarray:
    """`U[a, k, c, j] = sum_r G[a, r] * weight[k, c, r, j]` of an OIHW weight with 3 rows, in
    the weight's dtype (computed in float64)."""
    if weight.ndim != 4 or weight.shape[2] != 3:
        raise ValueError(f"expected an OIHW weight with 3 rows, found shape {weight.shape}")
    _, g, _ = transform_matrices(tile)
    return np.einsum("ar,kcrj->akcj", g, weight.astype(np.float64)).astype(weight.dtype)


def conv_rows(x: np.ndarray, u: np.ndarray, padding: tuple[int, ...], tile: int) -> np.ndarray:
    """The NCHW conv2d (stride 1, 3 rows) of `x` with the transformed weight `u`, by the three
    steps of the module docstring; `padding` is (top, left, bottom, right). Computed in `x`'s
    dtype, as the compiled kernels do."""
    b_t, _, a_t = (m.astype(x.dtype) for m in transform_matrices(tile))
    top, left, bottom, right = padding
    alpha, kw = u.shape[0], u.shape[3]
    out_h = x.shape[2] + top + bottom - 2
    out_w = x.shape[3] + left + right - kw + 1
    tiles = tile_rows(out_h, tile)
    extra = tiles * tile - out_h
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom + extra), (left, right)))
    rows = np.stack([xp[:, :, r : r + tile * tiles : tile, :] for r in range(alpha)])
    v = np.einsum("ar,rncty->nacty", b_t, rows)
    windows = np.lib.stride_tricks.sliding_window_view(v, kw, axis=4)[..., :out_w, :]
    m = np.einsum("akcj,nactwj->naktw", u, windows, optimize=True)
    y = np.einsum("ia,naktw->nktiw", a_t, m)
    n, k = y.shape[:2]
    return np.ascontiguousarray(y.reshape(n, k, tiles * tile, out_w)[:, :, :out_h])
