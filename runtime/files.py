"""Files written whole or not at all: the one place dlc writes an output file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: str | Path, data: str | bytes, mode: int | None = None) -> Path:
    """Writes `data` to `path` so that a reader never sees half a file and a failure leaves
    nothing behind: into a new file of an unpredictable name beside `path` (never through a link
    planted there), then renamed over it. `mode` is the file's permission bits; by default the
    usual ones for a new file (0o666 less the umask; mkstemp alone would give 0o600)."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb" if isinstance(data, bytes) else "w") as out:
            out.write(data)
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(name, mode)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return path
