"""Shared libraries out of compiled code: object files and weights linked by `cc -shared`
(TVM's `export_library`).

The library's format (the metadata symbols, the weights' alignment) is the runtime's
(`dlc.runtime.metadata`), which loads it with ctypes alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dlc.runtime.library import LibraryError
from dlc.target import DEFAULT_CPU_TARGET, CpuTarget

if TYPE_CHECKING:
    import numpy as np
    from dlc.runtime.c_api import CInterface


def export_shared_library(
    llvm_ir: str, path: str | Path, opt_level: int = 3, target: CpuTarget = DEFAULT_CPU_TARGET
) -> Path:
    """Compile `llvm_ir`, printed for `target`, and link it into the shared library `path`.

    The object code is position independent, optimized at `opt_level`, and linked with libm (and
    libgomp when it has parallel loops) by `cc -shared`. The library appears at `path`
    atomically (a reader never sees half a file).
    """
    from dlc.driver.jit import parse_and_optimize, target_machine, uses_openmp

    _c_compiler()
    machine = target_machine(target, opt_level, position_independent=True)
    module = parse_and_optimize(llvm_ir, machine, opt_level)
    return link_shared_library([machine.emit_object(module)], {}, path, uses_openmp(llvm_ir))


def _c_compiler() -> str:
    compiler = shutil.which("cc")
    if compiler is None:
        raise LibraryError(
            "cannot link a shared library: no C compiler driver 'cc' on PATH (install gcc or "
            "clang)"
        )
    return compiler


def weights_assembly(layout: Sequence[tuple[str, int, int]], blob: Path, alignment: int) -> str:
    """GNU assembler source defining each weight as a global read-only symbol whose bytes are
    `.incbin`'d from `blob` (so that megabytes of weights never pass through a compiler)."""
    lines = ['\t.section .rodata.dlc_weights,"a",@progbits']
    quoted = str(blob).replace("\\", "\\\\").replace('"', '\\"')
    for symbol, offset, nbytes in layout:
        lines += [
            f"\t.globl {symbol}",
            f"\t.type {symbol}, @object",
            f"\t.balign {alignment}",
            f"{symbol}:",
            f'\t.incbin "{quoted}", {offset}, {nbytes}' if nbytes else "\t.zero 1",
            f"\t.size {symbol}, {max(nbytes, 1)}",
        ]
    lines.append('\t.section .note.GNU-stack,"",@progbits')
    return "\n".join(lines) + "\n"


def c_api_link_inputs(
    api: CInterface, library_name: str, scratch: Path, compiler: str
) -> list[str]:
    """The linker inputs that give the library `library_name` the C interface `api`
    (`runtime.c_api`): the object of its C functions (the header and their source compiled
    with `compiler`), a version script that leaves them (and `dlc_prefix`) the only exported
    symbols, and the library's name as its soname (so that a program linked with it by path
    finds it by name, through its rpath)."""
    from dlc.runtime.c_api import c_header, c_wrapper_source, version_script

    header = scratch / f"{api.prefix}.h"
    header.write_text(c_header(api, library_name))
    source = scratch / "dlc_c_api.c"
    source.write_text(c_wrapper_source(api, header.name))
    wrapper = scratch / "dlc_c_api.o"
    result = subprocess.run(
        [compiler, "-c", "-fPIC", "-O2", "-std=c11", "-Wall", "-Werror", "-o", str(wrapper),
         str(source)],
        capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        raise LibraryError(
            f"compiling the C interface of '{api.prefix}' failed ({compiler} exited with "
            f"{result.returncode}): {result.stderr.strip()}"
        )
    script = scratch / "exports.map"
    script.write_text(version_script(api))
    return [str(wrapper), f"-Wl,--version-script={script}", f"-Wl,-soname,{library_name}"]


def link_shared_library(
    objects: Sequence[bytes],
    weights: Mapping[str, np.ndarray],
    path: str | Path,
    uses_openmp: bool = False,
    c_api: CInterface | None = None,
) -> Path:
    """Link position-independent `objects` and the `weights` they reference into the shared
    library `path` with `cc -shared`.

    The weights are embedded in the library's read-only data under their symbols (assembled
    from one blob with `.incbin`), each aligned to `WEIGHT_ALIGNMENT`. References inside the
    library bind to its own definitions (`-Bsymbolic`). With `c_api`, the library gets that C
    interface and exports nothing else (`c_api_link_inputs`); without, every global symbol is
    exported. The library appears at `path` atomically: on any failure nothing is left there.
    """
    from dlc.driver.artifact import write_weights
    from dlc.runtime.metadata import WEIGHT_ALIGNMENT

    compiler = _c_compiler()
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise LibraryError(f"cannot write {path}: no such directory {directory}")
    with tempfile.TemporaryDirectory(dir=directory, prefix=f".{path.name}.") as scratch:
        inputs: list[str] = []
        for index, data in enumerate(objects):
            object_path = Path(scratch) / f"unit{index}.o"
            object_path.write_bytes(data)
            inputs.append(str(object_path))
        if weights:
            blob = Path(scratch) / "weights.bin"
            layout = write_weights(weights, blob, WEIGHT_ALIGNMENT)
            assembly = Path(scratch) / "weights.s"
            assembly.write_text(weights_assembly(layout, blob.resolve(), WEIGHT_ALIGNMENT))
            inputs.append(str(assembly))
        if c_api is not None:
            inputs += c_api_link_inputs(c_api, path.name, Path(scratch), compiler)
        linked = Path(scratch) / path.name
        result = subprocess.run(
            [compiler, "-shared", "-Wl,-Bsymbolic", "-o", str(linked), *inputs, "-lm",
             *(["-lgomp"] if uses_openmp else [])],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise LibraryError(
                f"linking {path} failed ({compiler} exited with {result.returncode}): "
                f"{result.stderr.strip()}"
            )
        os.replace(linked, path)
    return path
