"""A compiled model before it is loaded: object code per compile unit, weights, and how to link.

Counterpart: TVM's `runtime.Module` tree before `export_library` (host module + imported kernel
modules + linked params). `dlc.compile` makes one (`driver.compiler`) or reads one from the
compile cache (`driver.cache`); it is then linked in process (`link_in_process`, ORC JIT:
weights stay NumPy buffers) or into a shared library (`export`, weights embedded). Nothing here
imports xDSL; llvmlite is imported only to link in process.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from dlc.runtime.executable import aligned_empty
from dlc.runtime.files import write_atomically
from dlc.runtime.metadata import (
    METADATA_SYMBOL,
    MODEL_SYMBOL,
    WEIGHT_ALIGNMENT,
    WORKSPACE_ENTRY_SUFFIX,
    decode_metadata,
    decode_model_info,
)

if TYPE_CHECKING:
    from dlc.runtime.c_api import CInterface


def aligned_copy(data: bytes | np.ndarray, alignment: int = WEIGHT_ALIGNMENT) -> np.ndarray:
    """A read-only 1-D uint8 array holding `data`, starting at a multiple of `alignment`."""
    source = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data
    copy = aligned_empty((source.nbytes,), np.dtype(np.uint8), alignment)
    copy[:] = source.reshape(-1).view(np.uint8)
    copy.flags.writeable = False
    return copy


@dataclass
class CompileStats:
    """What a compile did, for `dlc compile`'s summary and the benchmarks.

    Attributes:
        calls: kernel calls in the entry function.
        kernels: distinct kernels (after deduplication).
        kernels_cached: kernels whose object code came from the compile cache.
        workspace_bytes: the planned workspace.
        unplanned_bytes: what the intermediates would take without the plan.
        weight_bytes: constant data.
        model_cache_hit: the whole model came from the cache.
        seconds: wall time per stage, in order.
        tuned: with a tuning log, the kernels it scheduled (functions marked `dlc.tuned`);
        kept_default: with a tuning log, the kernels it left to the default schedule (no
            record, or the default was the best).
    """

    calls: int = 0
    kernels: int = 0
    kernels_cached: int = 0
    workspace_bytes: int = 0
    unplanned_bytes: int = 0
    weight_bytes: int = 0
    model_cache_hit: bool = False
    seconds: dict[str, float] = field(default_factory=dict[str, float])
    tuned: list[str] = field(default_factory=list[str])
    kept_default: list[str] = field(default_factory=list[str])

    @property
    def total_seconds(self) -> float:
        """The sum of the stages' times."""
        return sum(self.seconds.values())


@dataclass
class CompiledModel:
    """Object code and data that together are one executable module.

    Attributes:
        objects: position-independent ELF objects by unit name (the entry unit, one per kernel).
        weights: the constant globals the objects reference but do not define, by symbol: 1-D
            uint8 arrays aligned to `WEIGHT_ALIGNMENT`.
        exports: the symbols the runtime looks up (entry functions, kernels, metadata).
        uses_openmp: the code calls libgomp (parallel loops).
        stats: how the compile went.
        metadata_json: the entry functions' signatures (the `dlc_metadata` JSON the entry
            unit holds), "" if unknown.
        model_json: the model's description (`dlc_model`), "" if it has none (not one entry
            function).
        externs: the external functions the code calls (custom ops computed by C code), by
            symbol: (the shared library that defines it, the custom op that calls it).
    """

    objects: dict[str, bytes]
    weights: dict[str, np.ndarray]
    exports: tuple[str, ...]
    uses_openmp: bool = False
    stats: CompileStats = field(default_factory=CompileStats)
    metadata_json: str = ""
    model_json: str = ""
    externs: dict[str, tuple[str, str]] = field(default_factory=dict)

    def link_in_process(self) -> LinkedModule:
        """Link the objects in this process (ORC JIT); the weights are used where they are."""
        return LinkedModule(self)

    @property
    def arch(self) -> str:
        """The architecture the objects are for (`x86_64`, `aarch64`)."""
        from dlc.driver.elf import object_arch

        return object_arch(next(iter(self.objects.values())))

    def c_interface(self, prefix: str) -> CInterface | None:
        """The C interface (`runtime.c_api`) of this model under `prefix`, or None when it
        has none (not one entry function with a model description). Raises `CApiError` for a
        prefix that is not a C identifier or clashes with the model's symbols."""
        from dlc.runtime.c_api import c_interface, check_c_prefix

        check_c_prefix(prefix)
        if not self.metadata_json or not self.model_json:
            return None
        info = decode_model_info(self.model_json)
        signature = decode_metadata(self.metadata_json).get(info.entry)
        if signature is None:
            return None
        internal = [*self.exports, *self.weights]
        if info.workspace_bytes:
            internal.append(info.entry + WORKSPACE_ENTRY_SUFFIX)
        return c_interface(prefix, signature, info, internal)

    def export(
        self, path: str | Path, c_prefix: str | None = None, c_header: str | Path | None = None,
        with_c_api: bool = True,
    ) -> Path:
        """Link the objects and the weights into the shared library `path`, or (a `.tar` path)
        pack them, with the C interface's sources, and their link command to link elsewhere;
        atomically either way.

        A model (one entry function) gets the C interface of `runtime.c_api` under `c_prefix`
        (default: the library's file name made a C identifier) and exports nothing else;
        `c_header`, if given, is where its header is written (after the library). Raises
        `CApiError` (before anything is written) for a prefix that is not a C identifier,
        and for `c_prefix`/`c_header` on a module without a C interface. `with_c_api=False`
        (libraries only this process loads: tuning trials) skips the C interface, and the
        C compile it takes (~0.1 s): every symbol is exported then.
        """
        from dlc.driver.export import link_shared_library, write_object_archive
        from dlc.runtime.c_api import c_header as header_text
        from dlc.runtime.c_api import check_export_request, default_c_prefix

        path = Path(path)
        objects = list(self.objects.values())
        if path.suffix == ".tar" and self.externs:
            raise LinkError(
                "cannot pack a model that calls external functions "
                f"({', '.join(sorted(self.externs))}) into a .tar: export a .so"
            )
        libraries: list[str] = []
        for library in dict.fromkeys(lib for lib, _ in self.externs.values()):
            libraries.append(library)
            if "/" in library:
                libraries.append(f"-Wl,-rpath,{Path(library).parent}")
        if not with_c_api and path.suffix != ".tar":
            return link_shared_library(objects, self.weights, path, self.uses_openmp, libraries)
        api = self.c_interface(c_prefix if c_prefix is not None else default_c_prefix(path.stem))
        check_export_request(api, c_prefix, c_header, "module")
        if path.suffix == ".tar":
            library = write_object_archive(objects, self.weights, path, self.uses_openmp, api)
        else:
            library = link_shared_library(
                objects, self.weights, path, self.uses_openmp, libraries, c_api=api
            )
        if api is not None and c_header is not None:
            write_atomically(c_header, header_text(api, path.name), mode=0o644)
        return library


# ---------------------------------------------------------------------------------------------
# Linking in process
# ---------------------------------------------------------------------------------------------

_jit_lock = threading.Lock()
_jit: Any = None
_library_numbers = itertools.count()


def _process_jit() -> Any:
    """The process's one ORC LLJIT instance (made on first use); each model is a library in it."""
    global _jit
    with _jit_lock:
        if _jit is None:
            import llvmlite.binding as binding

            binding.initialize_native_target()
            binding.initialize_native_asmprinter()
            # Only object code is added, so the JIT's own target machine (the host's) never
            # compiles anything. JITLink, not RuntimeDyld: RuntimeDyld places an object's
            # sections (and its GOT) in separate mappings, and once the address space is
            # crowded (torch's CUDA libraries loaded, many models linked) they can land more
            # than 2 GiB apart, past the reach of the small code model's 32-bit PC-relative
            # relocations (an assertion in RuntimeDyldELF aborted the process). JITLink puts
            # each linked graph in one contiguous allocation and makes GOT entries and stubs
            # for what lies outside it.
            _jit = binding.create_lljit_compiler(use_jit_link=True)
        return _jit


class LinkError(RuntimeError):
    """The objects of a compiled model do not link (a missing or clashing symbol)."""


def resolve_extern(symbol: str, library: str, op: str) -> tuple[Any, int]:
    """Loads `library` (kept loaded by the handle returned) and finds `symbol` in it.

    Raises:
        LinkError: the library cannot be loaded or does not define `symbol`; the message names
            the custom op `op` and the symbol.
    """
    try:
        handle = ctypes.CDLL(library)
    except OSError as e:
        raise LinkError(
            f"custom op {op}: cannot load library {library} for external function @{symbol}: {e}"
        ) from None
    try:
        function = getattr(handle, symbol)
    except AttributeError:
        raise LinkError(
            f"custom op {op}: external function @{symbol} is not defined in {library}"
        ) from None
    address = ctypes.cast(function, ctypes.c_void_p).value
    assert address is not None
    return handle, int(address)


class LinkedModule:
    """A `CompiledModel` linked in this process: a `NativeModule` for `Executable`.

    The library stays loaded while this object lives; weights are imported by address, so
    their buffers live as long as it does.
    """

    def __init__(self, compiled: CompiledModel) -> None:
        import llvmlite.binding as binding
        from dlc.driver.jit import load_openmp
        from dlc.driver.thread_pool import load_pool, uses_pool

        if compiled.uses_openmp:
            load_openmp()
        if any(uses_pool(code) for code in compiled.objects.values()):
            load_pool()
        self.compiled = compiled
        self.weights = compiled.weights
        builder = binding.JITLibraryBuilder()
        for data in compiled.objects.values():
            builder.add_object_img(data)
        builder.add_current_process()
        for symbol, buffer in compiled.weights.items():
            builder.import_symbol(symbol, buffer.ctypes.data)
        self._libraries = []
        for symbol, (library, op) in compiled.externs.items():
            handle, address = resolve_extern(symbol, library, op)
            self._libraries.append(handle)
            builder.import_symbol(symbol, address)
        for symbol in compiled.exports:
            builder.export_symbol(symbol)
        name = f"dlc_module_{next(_library_numbers)}"
        try:
            self._tracker = builder.link(_process_jit(), name)
        except RuntimeError as e:
            raise LinkError(f"cannot link the compiled module: {e}") from None
        self._exports = frozenset(compiled.exports)

    def address(self, name: str) -> int:
        """The address of the function (or global) `name`."""
        if name not in self._exports:
            raise LinkError(
                f"no function @{name} in the compiled module (exported: "
                f"{', '.join(sorted(self._exports)) or 'none'})"
            )
        address = self._tracker[name]
        if not address:
            raise LinkError(f"@{name} is declared but not defined in the compiled module")
        return int(address)

    def symbol_address(self, name: str) -> int:
        """The address of a weight or an exported symbol."""
        if name in self.weights:
            return int(self.weights[name].ctypes.data)
        return self.address(name)

    def _string(self, symbol: str) -> str | None:
        if symbol not in self._exports or not self._tracker[symbol]:
            return None
        return ctypes.string_at(self._tracker[symbol]).decode()

    def metadata_text(self) -> str | None:
        """The entry functions' `dlc_metadata` JSON, or None."""
        return self._string(METADATA_SYMBOL)

    def model_text(self) -> str | None:
        """The model's `dlc_model` JSON, or None."""
        return self._string(MODEL_SYMBOL)


class ForeignModule:
    """A `CompiledModel` for an architecture other than the host's, as a `NativeModule` for
    `Executable`: its signatures and description (read from the objects' metadata symbols) for
    export, but no code this process can call (TVM's cross-compiled module before
    `export_library`)."""

    def __init__(self, compiled: CompiledModel, host: str) -> None:
        self.compiled = compiled
        self.host = host

    def _string(self, symbol: str) -> str | None:
        from dlc.driver.elf import string_symbol

        if symbol not in self.compiled.exports:
            return None
        for code in self.compiled.objects.values():
            text = string_symbol(code, symbol)
            if text is not None:
                return text
        return None

    def metadata_text(self) -> str | None:
        """The entry functions' `dlc_metadata` JSON, or None."""
        return self._string(METADATA_SYMBOL)

    def model_text(self) -> str | None:
        """The model's `dlc_model` JSON, or None."""
        return self._string(MODEL_SYMBOL)

    def address(self, name: str) -> int:
        """No address: the code is for another architecture (the error says what to do)."""
        from dlc.runtime.executable import ExecutableError

        arch = self.compiled.arch
        raise ExecutableError(
            f"cannot call @{name} here: it is compiled for {arch} and this host is {self.host}; "
            f"export it (.export('model.so'), dlc compile -o model.so) and run the library on "
            f"an {arch} machine (or under qemu-{arch})"
        )

    symbol_address = address


def pack_weights(
    weights: Mapping[str, np.ndarray], alignment: int = WEIGHT_ALIGNMENT
) -> tuple[list[tuple[str, int, int]], int]:
    """Offsets of the weights laid end to end, each aligned: ([(symbol, offset, nbytes)], total).
    Weights with equal bytes share one offset (a library of several shapes of one model holds
    its weights once; so do equal constants of one model)."""
    layout: list[tuple[str, int, int]] = []
    placed: dict[tuple[int, bytes], int] = {}
    offset = 0
    for symbol, buffer in weights.items():
        key = (buffer.nbytes, hashlib.blake2b(memoryview(buffer).cast("B")).digest())
        if key in placed:
            layout.append((symbol, placed[key], buffer.nbytes))
            continue
        offset = (offset + alignment - 1) // alignment * alignment
        placed[key] = offset
        layout.append((symbol, offset, buffer.nbytes))
        offset += buffer.nbytes
    return layout, offset


def weights_blob(
    weights: Mapping[str, np.ndarray], alignment: int = WEIGHT_ALIGNMENT
) -> tuple[list[tuple[str, int, int]], bytearray]:
    """The weights as one blob laid out by `pack_weights`, and the layout."""
    layout, total = pack_weights(weights, alignment)
    blob = bytearray(total)
    for (_, offset, nbytes), buffer in zip(layout, weights.values(), strict=True):
        blob[offset : offset + nbytes] = memoryview(buffer).cast("B")
    return layout, blob


def write_weights(
    weights: Mapping[str, np.ndarray], path: Path, alignment: int = WEIGHT_ALIGNMENT
) -> list[tuple[str, int, int]]:
    """Writes the weights laid out by `pack_weights` (zero padding between, each aligned) into
    `path`; returns the layout [(symbol, offset, nbytes)]."""
    layout, blob = weights_blob(weights, alignment)
    with open(path, "wb") as out:
        out.write(blob)
    return layout


def weights_from_blob(
    blob: np.ndarray, layout: Iterable[Sequence[Any]]
) -> dict[str, np.ndarray]:
    """Views of `blob` (a 1-D uint8 array) for each (symbol, offset, nbytes) of `layout`."""
    return {str(s): blob[int(o) : int(o) + int(n)] for s, o, n in layout}
