"""The on-disk compile cache: kernel object code by structural hash, whole models by source.

Counterpart: TVM's compile-engine cache (kept in memory, per process) made persistent the way
ccache is: keys are SHA-256 digests of everything that determines the output (the compiler's
own source, the resolved target, the options, and the kernel's structure or the model's
bytes).

Layout under the cache directory (default `~/.cache/dlc`):

    kernels/<key>.o           one kernel's position-independent object code
    models/<key>/manifest.json, entry.o, weights.bin
                              a whole model: its entry unit, the keys of its kernels, its weights
                              (with their SHA-256 in the manifest, checked on every load)
    sources.json              content digests of source files by (path, size, mtime, inode), so
                              that a large unchanged model is not hashed again

Every file appears atomically (written aside, then renamed). Anything unreadable, truncated or
failing its checksum is treated as absent (and recompiled over); the cache never raises for its
own content. A model's weights are read into memory (not memory-mapped: a cache file truncated
or rewritten later cannot crash or change a running model).

The cache is kept under a size limit (`max_bytes`, default 2 GiB): after each compile
(`evict`, called by the driver), the least recently used entries (kernel objects and models, by
modification time, which a load refreshes) are removed until the total fits.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from dlc.driver import thread_pool
from dlc.driver.artifact import CompiledModel, CompileStats, weights_from_blob, write_weights
from dlc.driver.errors import CompileError
from dlc.runtime.executable import aligned_empty
from dlc.runtime.files import write_atomically
from dlc.runtime.metadata import WEIGHT_ALIGNMENT
from dlc.target import CpuTarget

CACHE_FORMAT = 2
"""The version of the cache's layout; entries of other versions are ignored (2: the weights'
SHA-256 in the manifest, instead of the blob's size and modification time)."""

DEFAULT_MAX_BYTES = 2 << 30
"""The cache's default size limit: 2 GiB."""

_OBJECT_MAGIC = b"DLCO\x01"

PACKAGES = (
    "dialects", "target", "rewrites", "pipelines", "frontends", "codegen", "runtime", "driver",
    "dlc",
)
"""The packages whose source determines what the compiler produces (the cache's fingerprint)."""


@functools.cache
def compiler_fingerprint() -> str:
    """A digest of the versions of xDSL and llvmlite and of dlc's own source files (every .py
    and .mlir file of `PACKAGES`: path, size, modification time): any change to the compiler is
    a different compiler to the cache (a file saved again unchanged only costs a recompile)."""
    import llvmlite
    import xdsl

    root = Path(__file__).resolve().parent.parent
    hasher = hashlib.sha256(f"xdsl {xdsl.__version__} llvmlite {llvmlite.__version__}".encode())
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in (".py", ".mlir") and "__pycache__" not in path.parts:
                status = path.stat()
                hasher.update(
                    f"{path.relative_to(root)}:{status.st_size}:{status.st_mtime_ns}\n".encode()
                )
    return hasher.hexdigest()


@dataclass(frozen=True)
class CompileOptions:
    """What `dlc.compile` was asked for, besides the model.

    Attributes:
        target: the CPU target string: `host` (this machine, resolved once by the driver) or
            `llvm -mcpu=...` (`dlc.target.parse`).
        opt_level: LLVM's optimization level, 0-3.
        pipeline: the named pipeline.
        threads: threads for parallel loops (0: all cores).
        tuning_log: an autotuning log whose best records schedule the kernels they match; its
            content is part of every cache key.
        check_bounds: every load and store checks its indices and aborts with a report on a
            violation (`convert-loop-to-llvm{check-bounds=true}`): checked and unchecked code
            never share a cache entry.
        precision: `fp32` (as the model is), or `bf16` / `f16`: the compute-heavy ops run in
            that type with f32 accumulation (`graph-to-low-precision`).
    """

    target: str = "host"
    opt_level: int = 3
    pipeline: str = "cpu"
    threads: int = 0
    tuning_log: Path | None = None
    check_bounds: bool = False
    precision: str = "fp32"

    def cpu_target(self) -> CpuTarget:
        """The target the code is for: `target` resolved (`host` with `threads` threads)."""
        from dlc.driver.target import resolve_cpu_target

        return resolve_cpu_target(self.target, self.threads)

    def fingerprint(self) -> str:
        """Everything that determines the code besides the model, as text (for cache keys)."""
        log = "none"
        if self.tuning_log is not None:
            try:
                log = hashlib.sha256(self.tuning_log.read_bytes()).hexdigest()
            except OSError as e:
                raise CompileError(
                    f"cannot read the tuning log {self.tuning_log}: {e.strerror}"
                ) from None
        return "|".join((compiler_fingerprint(), str(self.cpu_target()), str(self.opt_level),
                         self.pipeline, str(self.threads), log,
                         f"check_bounds={int(self.check_bounds)}",
                         f"precision={self.precision}",
                         f"parallel_runtime={thread_pool.parallel_runtime()}"))


def default_cache_dir() -> Path:
    """`~/.cache/dlc`."""
    return Path.home() / ".cache" / "dlc"


def digest(*parts: str | bytes) -> str:
    """The SHA-256 hex digest of `parts`, each length-prefixed (so that no two different lists
    of parts share a digest by concatenation)."""
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "little"))
        hasher.update(data)
    return hasher.hexdigest()


def _read_weights(path: Path) -> np.ndarray:
    """The whole file in a new, `WEIGHT_ALIGNMENT`-aligned array of bytes (a private copy)."""
    with open(path, "rb") as blob:
        size = os.fstat(blob.fileno()).st_size
        data = aligned_empty((size,), np.dtype(np.uint8), WEIGHT_ALIGNMENT)
        if blob.readinto(memoryview(data)) != size:
            raise ValueError(f"{path} changed while it was read")
    return data


def _touch(path: Path) -> None:
    """Mark `path` as just used (least-recently-used eviction goes by modification time)."""
    with contextlib.suppress(OSError):
        os.utime(path)


@dataclass(frozen=True)
class CacheUsage:
    """What a cache directory holds: kernel objects, models, and their bytes on disk."""

    directory: Path
    kernels: int
    models: int
    bytes: int


class CompileCache:
    """A compile cache in `directory` (created on first store), kept under `max_bytes` by
    evicting the least recently used entries after each store (None: no limit)."""

    def __init__(
        self, directory: str | Path | None = None, max_bytes: int | None = DEFAULT_MAX_BYTES
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        if max_bytes is not None and max_bytes < 0:
            raise CompileError(
                f"expected a cache size limit of at least 0 bytes, found {max_bytes}"
            )
        self.max_bytes = max_bytes

    # -- source digests -------------------------------------------------------------------------

    def file_digest(self, path: str | Path) -> str:
        """The SHA-256 of the file's bytes, remembered by (path, size, mtime, inode)."""
        path = Path(path).resolve()
        status = path.stat()
        stamp = f"{status.st_size}:{status.st_mtime_ns}:{status.st_ino}"
        index_path = self.directory / "sources.json"
        index: dict[str, list[str]] = {}
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(index_path.read_text())
            if isinstance(loaded, dict):
                index = loaded
        known = index.get(str(path))
        if isinstance(known, list) and len(known) == 2 and known[0] == stamp:
            return str(known[1])
        value = hashlib.sha256(path.read_bytes()).hexdigest()
        index[str(path)] = [stamp, value]
        with contextlib.suppress(OSError):
            index_path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(index_path, json.dumps(index).encode())
        return value

    # -- kernel objects -------------------------------------------------------------------------

    def _object_path(self, key: str) -> Path:
        return self.directory / "kernels" / f"{key}.o"

    @staticmethod
    def _unwrap(data: bytes) -> bytes | None:
        header = len(_OBJECT_MAGIC) + 32
        if len(data) < header or not data.startswith(_OBJECT_MAGIC):
            return None
        payload = data[header:]
        if hashlib.sha256(payload).digest() != data[len(_OBJECT_MAGIC) : header]:
            return None
        return payload

    @staticmethod
    def _wrap(payload: bytes) -> bytes:
        return _OBJECT_MAGIC + hashlib.sha256(payload).digest() + payload

    def load_object(self, key: str) -> bytes | None:
        """The cached object code for `key`, or None (absent or corrupt)."""
        path = self._object_path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        payload = self._unwrap(data)
        if payload is not None:
            _touch(path)
        return payload

    def store_object(self, key: str, payload: bytes) -> None:
        """Caches object code under `key` (errors writing the cache are ignored)."""
        with contextlib.suppress(OSError):
            self._object_path(key).parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self._object_path(key), self._wrap(payload))

    # -- whole models ---------------------------------------------------------------------------

    def _model_dir(self, key: str) -> Path:
        return self.directory / "models" / key

    def load_model(self, key: str) -> CompiledModel | None:
        """The cached model for `key` with its kernels and weights (read into memory and
        checked against their SHA-256), or None if it is absent or any part of it is missing or
        corrupt."""
        directory = self._model_dir(key)
        try:
            manifest = json.loads((directory / "manifest.json").read_text())
            if manifest.get("format") != CACHE_FORMAT:
                return None
            objects: dict[str, bytes] = {}
            entry = self._unwrap((directory / "entry.o").read_bytes())
            if entry is None:
                return None
            objects["entry"] = entry
            for symbol, kernel_key in manifest["kernels"].items():
                kernel = self.load_object(str(kernel_key))
                if kernel is None:
                    return None
                objects[str(symbol)] = kernel
            weights: dict[str, np.ndarray] = {}
            if manifest["weights"]:
                blob = _read_weights(directory / "weights.bin")
                if hashlib.sha256(blob).hexdigest() != manifest["weights_sha256"]:
                    return None
                weights = weights_from_blob(blob, manifest["weights"])
            stats = CompileStats(**manifest["stats"])
            stats.model_cache_hit = True
            stats.kernels_cached = stats.kernels
            stats.seconds = {}
            _touch(directory / "manifest.json")
            return CompiledModel(
                objects, weights, tuple(manifest["exports"]), bool(manifest["uses_openmp"]),
                stats, str(manifest["metadata_json"]), str(manifest["model_json"]),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def store_model(
        self, key: str, model: CompiledModel, kernel_keys: Mapping[str, str]
    ) -> None:
        """Caches `model` under `key`; its kernels are cached by `kernel_keys` (symbol -> key),
        which must already be stored. Errors writing the cache are ignored."""
        models = self.directory / "models"
        try:
            models.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(dir=models, prefix=f".{key}."))
        except OSError:
            return
        try:
            layout = write_weights(model.weights, scratch / "weights.bin")
            stats = {
                name: getattr(model.stats, name)
                for name in ("calls", "kernels", "workspace_bytes", "unplanned_bytes",
                             "weight_bytes")
            }
            manifest = {
                "format": CACHE_FORMAT,
                "kernels": dict(kernel_keys),
                "exports": list(model.exports),
                "uses_openmp": model.uses_openmp,
                "weights": layout,
                "weights_sha256": hashlib.sha256(_read_weights(scratch / "weights.bin"))
                .hexdigest(),
                "stats": stats,
                "metadata_json": model.metadata_json,
                "model_json": model.model_json,
            }
            (scratch / "entry.o").write_bytes(self._wrap(model.objects["entry"]))
            (scratch / "manifest.json").write_text(json.dumps(manifest))
            target = self._model_dir(key)
            if target.exists():
                shutil.rmtree(target, ignore_errors=True)
            os.replace(scratch, target)
        except OSError:
            pass
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    # -- size ------------------------------------------------------------------------------------

    def _entries(self) -> list[tuple[float, int, Path]]:
        """(last use, bytes, path) of every kernel object and model directory."""
        entries: list[tuple[float, int, Path]] = []
        with contextlib.suppress(OSError):
            for path in (self.directory / "kernels").iterdir():
                with contextlib.suppress(OSError):
                    status = path.stat()
                    entries.append((status.st_mtime, status.st_size, path))
        with contextlib.suppress(OSError):
            for path in (self.directory / "models").iterdir():
                with contextlib.suppress(OSError):
                    files = [file.stat() for file in path.iterdir()]
                    used = max((f.st_mtime for f in files), default=0.0)
                    entries.append((used, sum(f.st_size for f in files), path))
        return entries

    def usage(self) -> CacheUsage:
        """How many kernel objects and models the cache holds, and their bytes on disk."""
        entries = self._entries()
        models = sum(1 for _, _, path in entries if path.parent.name == "models")
        return CacheUsage(self.directory, len(entries) - models, models,
                          sum(size for _, size, _ in entries))

    def evict(self) -> int:
        """Remove the least recently used entries until the cache fits `max_bytes`; returns the
        bytes removed. Errors are ignored (another process may be evicting too)."""
        if self.max_bytes is None:
            return 0
        entries = self._entries()
        excess = sum(size for _, size, _ in entries) - self.max_bytes
        removed = 0
        for _, size, path in sorted(entries, key=lambda entry: entry[0]):
            if removed >= excess:
                break
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed += size
        return removed

    def clear(self) -> CacheUsage:
        """Remove every entry (and the source digests); returns what was removed."""
        usage = self.usage()
        for name in ("kernels", "models"):
            shutil.rmtree(self.directory / name, ignore_errors=True)
        (self.directory / "sources.json").unlink(missing_ok=True)
        return usage
