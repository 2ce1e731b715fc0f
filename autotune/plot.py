"""The tuning curve as a PNG: best throughput so far against trials.

Uses matplotlib when it is installed (the `tune` extra); otherwise a tiny built-in PNG writer
draws the axes and the curves (no text), so that `dlc tune` always leaves a picture.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

_COLORS: tuple[tuple[int, int, int], ...] = (
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
    (140, 86, 75), (227, 119, 194), (127, 127, 127),
)


def plot_curves(curves: Mapping[str, Sequence[float]], path: str | Path,
                title: str = "best so far", ylabel: str = "GFLOP/s") -> Path:
    """Writes a line plot of each curve (y against trial 1..n) to `path` (PNG)."""
    path = Path(path)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        write_png(path, _rasterize(curves))
        return path
    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    for label, values in curves.items():
        axes.plot(range(1, len(values) + 1), values, label=label, drawstyle="steps-post")
    axes.set_xlabel("trials")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    if len(curves) > 1:
        axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def _rasterize(curves: Mapping[str, Sequence[float]], width: int = 640, height: int = 400
               ) -> list[bytearray]:
    """An RGB image: white background, axes, one polyline per curve."""
    rows = [bytearray(b"\xff" * (3 * width)) for _ in range(height)]
    left, right, top, bottom = 50, width - 20, 20, height - 40

    def put(x: int, y: int, color: tuple[int, int, int]) -> None:
        if 0 <= x < width and 0 <= y < height:
            rows[y][3 * x : 3 * x + 3] = bytes(color)

    def line(x0: int, y0: int, x1: int, y1: int, color: tuple[int, int, int]) -> None:
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(steps + 1):
            put(round(x0 + (x1 - x0) * i / steps), round(y0 + (y1 - y0) * i / steps), color)

    black = (0, 0, 0)
    line(left, bottom, right, bottom, black)
    line(left, top, left, bottom, black)
    finite = [v for values in curves.values() for v in values if math.isfinite(v)]
    longest = max((len(v) for v in curves.values()), default=1)
    high = max(finite, default=1.0) or 1.0
    for index, values in enumerate(curves.values()):
        color = _COLORS[index % len(_COLORS)]
        points = [
            (left + round((right - left) * i / max(1, longest - 1)),
             bottom - round((bottom - top) * (v if math.isfinite(v) else 0.0) / high))
            for i, v in enumerate(values)
        ]
        for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
            line(x0, y0, x1, y0, color)
            line(x1, y0, x1, y1, color)
    return rows


def write_png(path: str | Path, rows: Sequence[bytes | bytearray]) -> None:
    """Writes 8-bit RGB rows as a PNG file."""
    height, width = len(rows), len(rows[0]) // 3

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
           + chunk(b"IEND", b""))
    Path(path).write_bytes(png)
