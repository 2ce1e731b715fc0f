"""dlc's thread pool (`runtime/thread_pool/pool.c`): built for the JIT, linked into libraries.

Parallel loops lowered with `convert-loop-to-llvm{parallel_runtime=dlc}` (the `cpu` pipelines'
setting) call `dlc_parallel_for` (see pool.c for how it shares out chunks, and
`rewrites.llvm_lowering.openmp` for the call). Code that runs in this process resolves it from
a shared library compiled once per source text with the host's C compiler and kept in dlc's
cache directory (`pool_library`); a shared library or object archive that dlc writes gets the
source compiled into it, with the symbol hidden, so that each library has its own pool
(`link_inputs`). Without a C compiler the driver lowers parallel loops to libgomp instead
(`parallel_runtime`).

Measured (idle 2-core host and beside other processes) in the closing notes of issue 21:
libgomp's barrier at the end of each region waits for every thread of the team, so one
descheduled thread stalls the caller; the pool's caller waits only for chunks a thread has
claimed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

import dlc.runtime
from dlc.runtime.files import write_atomically
from dlc.runtime.library import LibraryError

POOL_SOURCE = Path(dlc.runtime.__file__).resolve().parent / "thread_pool" / "pool.c"
"""The pool's C source (package data of `dlc.runtime`)."""

POOL_SYMBOL = "dlc_parallel_for"
"""The function parallel loops call (`rewrites.llvm_lowering.openmp.DLC_PARALLEL_FOR`)."""

POOL_FLAGS = ("-O2", "-fPIC", "-std=gnu11", "-pthread")
"""How the pool is compiled (into its own library, or into a model's)."""

HIDDEN = '-DDLC_EXPORT=__attribute__((visibility("hidden")))'
"""Keeps a library's pool to itself: two libraries in one process never share a pool."""

_loaded = False


def available() -> bool:
    """Whether this host can build the pool (a C compiler driver `cc` on PATH)."""
    return shutil.which("cc") is not None


RUNTIME_VARIABLE = "DLC_PARALLEL_RUNTIME"
"""An environment variable that picks the runtime of parallel loops (`dlc` or `gomp`) for code
the driver compiles from then on (to compare them; a cache entry is made for one of them)."""


def parallel_runtime() -> str:
    """The `parallel_runtime` the driver lowers parallel loops to: `$DLC_PARALLEL_RUNTIME`
    where set (`dlc` or `gomp`), else `dlc` where the pool can be built, else `gomp`.
    Raises CompileError for another value, or `dlc` without a C compiler."""
    from dlc.driver.errors import CompileError

    chosen = os.environ.get(RUNTIME_VARIABLE, "").strip()
    if chosen not in ("", "dlc", "gomp"):
        raise CompileError(f"expected {RUNTIME_VARIABLE} to be 'dlc' or 'gomp', found "
                           f"'{chosen}'")
    if chosen == "dlc" and not available():
        raise CompileError(f"{RUNTIME_VARIABLE}=dlc needs a C compiler driver 'cc' on PATH to "
                           "build dlc's thread pool (install gcc or clang)")
    return chosen or ("dlc" if available() else "gomp")


def uses_pool(code: bytes | str) -> bool:
    """Whether object code (or LLVM IR text) calls the pool."""
    needle = POOL_SYMBOL.encode() if isinstance(code, bytes) else POOL_SYMBOL
    return needle in code


def pool_library(cache_dir: Path | None = None) -> Path:
    """The pool as a shared library for this host, compiled on first use into
    `<cache_dir>/runtime/` (default: dlc's cache directory) under the digest of its source and
    compiler, so that a changed source is a new library. Raises LibraryError without a C
    compiler or when the compile fails."""
    from dlc.driver.cache import default_cache_dir

    compiler = shutil.which("cc")
    if compiler is None:
        raise LibraryError("cannot build dlc's thread pool: no C compiler driver 'cc' on PATH "
                           "(install gcc or clang)")
    source = POOL_SOURCE.read_bytes()
    key = hashlib.sha256(source + " ".join((compiler, *POOL_FLAGS)).encode()).hexdigest()[:16]
    directory = (cache_dir or default_cache_dir()) / "runtime"
    path = directory / f"dlc_thread_pool-{key}.so"
    if path.exists():
        return path
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return _compile_pool(compiler, directory, path)
    except OSError:  # a read-only cache: build this process's copy in a temporary folder
        scratch = Path(tempfile.mkdtemp(prefix="dlc-thread-pool-"))
        return _compile_pool(compiler, scratch, scratch / path.name)


def _compile_pool(compiler: str, directory: Path, path: Path) -> Path:
    with tempfile.TemporaryDirectory(dir=directory, prefix=".pool.") as scratch:
        built = Path(scratch) / path.name
        result = subprocess.run([compiler, "-shared", *POOL_FLAGS, "-o", str(built),
                                 str(POOL_SOURCE)], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise LibraryError(f"compiling dlc's thread pool {POOL_SOURCE} failed: "
                               f"{result.stderr.strip()}")
        write_atomically(path, built.read_bytes())
    return path


def load_pool() -> None:
    """Make `dlc_parallel_for` resolvable by JIT code in this process (once)."""
    global _loaded
    if _loaded:
        return
    import llvmlite.binding as binding

    library = pool_library()
    try:
        binding.load_library_permanently(str(library))
    except RuntimeError as e:
        raise LibraryError(f"cannot load dlc's thread pool {library}: {e}") from None
    _loaded = True


def link_inputs(objects: Iterable[bytes]) -> list[str]:
    """What a link of `objects` needs for the pool (compiler flags and its source, compiled
    into the library with the symbol hidden), or nothing when no object calls it."""
    if not any(uses_pool(code) for code in objects):
        return []
    return [*POOL_FLAGS, HIDDEN, str(POOL_SOURCE)]
