"""Shared libraries out of compiled code: object files and weights linked by `cc -shared`
(TVM's `export_library`), or by a GNU cross compiler for another architecture.

The objects' ELF machine says which architecture they are for (`object_arch`); `linker_for`
picks the C compiler driver that assembles the weights and links for it: `cc` for the host's
architecture, `aarch64-linux-gnu-gcc` (Debian's `gcc-aarch64-linux-gnu`) for AArch64 on an
x86-64 host. Where no such driver is installed, `write_object_archive` packs the objects, the
weights and the link command into a `.tar` to link on the target.

The library's format (the metadata symbols, the weights' alignment) is the runtime's
(`dlc.runtime.metadata`), which loads it with ctypes alone.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dlc.driver import thread_pool
from dlc.driver.elf import object_arch
from dlc.runtime.files import write_atomically
from dlc.runtime.library import LibraryError, machine_arch
from dlc.target import DEFAULT_CPU_TARGET, CpuTarget

if TYPE_CHECKING:
    import numpy as np
    from dlc.runtime.c_api import CInterface
    from dlc.runtime.c_api_variants import VariantsInterface


def export_shared_library(
    llvm_ir: str, path: str | Path, opt_level: int = 3, target: CpuTarget = DEFAULT_CPU_TARGET
) -> Path:
    """Compile `llvm_ir`, printed for `target`, and link it into the shared library `path`.

    The object code is position independent, optimized at `opt_level`, and linked with libm (and
    libgomp when it has parallel loops) by `cc -shared`. The library appears at `path`
    atomically (a reader never sees half a file).
    """
    from dlc.driver.jit import parse_and_optimize, target_machine, uses_openmp

    linker_for(target.arch)
    machine = target_machine(target, opt_level, position_independent=True)
    module = parse_and_optimize(llvm_ir, machine, opt_level)
    return link_shared_library([machine.emit_object(module)], {}, path, uses_openmp(llvm_ir))


CROSS_COMPILERS: dict[str, tuple[str, str]] = {
    "x86_64": ("x86_64-linux-gnu-gcc", "gcc-x86-64-linux-gnu"),
    "aarch64": ("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
}
"""For each architecture, the GNU C compiler driver that links for it from another one, and
Debian's package that installs it."""


def c_compiler() -> str:
    """The C compiler driver for this host's architecture (`cc`)."""
    return linker_for(machine_arch())


def linker_for(arch: str) -> str:
    """The C compiler driver that assembles and links for `arch`: `cc` on a host of that
    architecture, else the GNU cross compiler (`aarch64-linux-gnu-gcc`). A `LibraryError`
    says what to install when it is not on PATH."""
    if arch == machine_arch():
        compiler = shutil.which("cc")
        if compiler is None:
            raise LibraryError(
                "cannot link a shared library: no C compiler driver 'cc' on PATH (install gcc "
                "or clang)"
            )
        return compiler
    if arch not in CROSS_COMPILERS:
        raise LibraryError(f"cannot link a shared library for {arch}: dlc links for "
                           f"{' or '.join(CROSS_COMPILERS)}")
    name, package = CROSS_COMPILERS[arch]
    compiler = shutil.which(name)
    if compiler is None:
        raise LibraryError(
            f"cannot link a shared library for {arch} on this {machine_arch()} host: no cross "
            f"compiler '{name}' on PATH (install Debian's {package}: apt-get install {package}); "
            "or export a .tar of the object files and link it on the target"
        )
    return compiler


def link_command(
    compiler: str, output: str, inputs: Sequence[str], uses_openmp: bool,
    libraries: Sequence[str] = (),
) -> list[str]:
    """The command that links `inputs` (objects, the weights' assembly) into the shared library
    `output`: references inside the library bind to its own definitions (`-Bsymbolic`); libm,
    libgomp for parallel loops, and `libraries` (linker flags such as `-ldl`)."""
    return [compiler, "-shared", "-Wl,-Bsymbolic", "-o", output, *inputs, "-lm",
            *(["-lgomp"] if uses_openmp else []), *libraries]


def weights_assembly(layout: Sequence[tuple[str, int, int]], blob: Path, alignment: int) -> str:
    """GNU assembler source defining each weight as a global read-only symbol whose bytes are
    `.incbin`'d from `blob` (so that megabytes of weights never pass through a compiler)."""
    lines = ['\t.section .rodata.dlc_weights,"a",@progbits']
    quoted = str(blob).replace("\\", "\\\\").replace('"', '\\"')
    first: dict[int, str] = {}
    for symbol, offset, nbytes in layout:
        if offset in first and nbytes:  # equal bytes (`pack_weights`): the same address
            lines += [f"\t.globl {symbol}", f"\t.type {symbol}, @object",
                      f"\t.set {symbol}, {first[offset]}", f"\t.size {symbol}, {nbytes}"]
            continue
        if nbytes:
            first[offset] = symbol
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


def _objects_arch(objects: Sequence[bytes]) -> str:
    arches = {object_arch(data) for data in objects}
    if not arches:
        raise LibraryError("expected at least one object file, found none")
    if len(arches) != 1:
        raise LibraryError(f"expected objects of one architecture, found "
                           f"{', '.join(sorted(arches))}")
    return arches.pop()


def _output_directory(path: Path) -> Path:
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise LibraryError(f"cannot write {path}: no such directory {directory}")
    return directory


C_API_SOURCE = "dlc_c_api.c"
"""The C interface's source file, next to its header, in a scratch folder or an archive."""
C_API_EXPORTS = "exports.map"
"""The version script that leaves the C interface the library's only exported symbols."""
C_API_COMPILE_FLAGS = ("-c", "-fPIC", "-O2", "-std=c11")
"""How the C interface's source is compiled (with the compiler driver that links)."""


def c_api_files(api: CInterface | VariantsInterface, library_name: str) -> dict[str, str]:
    """The C interface `api` of the library `library_name` as files, by name: its header, the
    sources of its functions (`.c`: one for a model, one per variant and the library's own for
    a library of several shapes) and the version script (`runtime.c_api`)."""
    from dlc.runtime.c_api import c_header, c_wrapper_source, version_script
    from dlc.runtime.c_api_variants import VariantsInterface

    if isinstance(api, VariantsInterface):
        return api.files(library_name, C_API_SOURCE, C_API_EXPORTS)
    header = f"{api.prefix}.h"
    return {
        header: c_header(api, library_name),
        C_API_SOURCE: c_wrapper_source(api, header),
        C_API_EXPORTS: version_script(api),
    }


def c_sources(files: Mapping[str, str]) -> list[str]:
    """The C sources among the C interface's files (`c_api_files`), in order."""
    return [name for name in files if name.endswith(".c")]


def c_api_link_flags(exports: str, library_name: str) -> list[str]:
    """The linker flags of the C interface: the version script `exports` and the library's
    name as its soname (so that a program linked with it by path finds it by name, through
    its rpath)."""
    return [f"-Wl,--version-script={exports}", f"-Wl,-soname,{library_name}"]


def c_api_link_inputs(
    api: CInterface | VariantsInterface, library_name: str, scratch: Path, compiler: str
) -> list[str]:
    """The linker inputs that give the library `library_name` the C interface `api`: the
    objects of its C functions (`c_api_files` compiled with `compiler`) and the flags of
    `c_api_link_flags`, which leave them (and `dlc_prefix`) the only exported symbols."""
    files = c_api_files(api, library_name)
    for name, text in files.items():
        (scratch / name).write_text(text)
    objects = []
    for source in c_sources(files):
        wrapper = scratch / f"{Path(source).stem}.o"
        result = subprocess.run(
            [compiler, *C_API_COMPILE_FLAGS, "-Wall", "-Werror", "-o", str(wrapper),
             str(scratch / source)],
            capture_output=True, text=True, check=False,
        )
        if result.returncode != 0:
            raise LibraryError(
                f"compiling the C interface of '{api.prefix}' failed ({compiler} exited with "
                f"{result.returncode}): {result.stderr.strip()}"
            )
        objects.append(str(wrapper))
    return [*objects, *c_api_link_flags(str(scratch / C_API_EXPORTS), library_name)]


def link_shared_library(
    objects: Sequence[bytes],
    weights: Mapping[str, np.ndarray],
    path: str | Path,
    uses_openmp: bool = False,
    libraries: Sequence[str] = (),
    c_api: CInterface | VariantsInterface | None = None,
) -> Path:
    """Link position-independent `objects` and the `weights` they reference into the shared
    library `path` with the C compiler driver of their architecture (`linker_for`), with libm,
    libgomp where `uses_openmp`, and `libraries` (linker flags such as `-ldl`).

    The weights are embedded in the library's read-only data under their symbols (assembled
    from one blob with `.incbin`), each aligned to `WEIGHT_ALIGNMENT`. References inside the
    library bind to its own definitions (`-Bsymbolic`). With `c_api`, the library gets that C
    interface and exports nothing else (`c_api_link_inputs`); without, every global symbol is
    exported. The library appears at `path` atomically: on any failure nothing is left there.
    """
    from dlc.driver.artifact import write_weights
    from dlc.runtime.metadata import WEIGHT_ALIGNMENT

    path = Path(path)
    compiler = linker_for(_objects_arch(objects))
    directory = _output_directory(path)
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
        inputs += thread_pool.link_inputs(objects)
        linked = Path(scratch) / path.name
        result = subprocess.run(
            link_command(compiler, str(linked), inputs, uses_openmp, libraries),
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


POOL_MEMBER = "dlc_thread_pool.c"
"""An archive's copy of dlc's thread pool (`driver.thread_pool`), which `link.sh` compiles in
when the objects call it."""

LINK_SCRIPT = "link.sh"
"""The archive's link command: `sh link.sh [OUTPUT.so]` in the unpacked folder."""


def write_object_archive(
    objects: Sequence[bytes],
    weights: Mapping[str, np.ndarray],
    path: str | Path,
    uses_openmp: bool = False,
    c_api: CInterface | VariantsInterface | None = None,
) -> Path:
    """Pack `objects` (as `unit<N>.o`), the `weights` (`weights.bin` and the `weights.s` that
    `.incbin`s it) and `link.sh`, the command that links them into `model.so`, into the tar
    archive `path`: a library to link on the target (or wherever its compiler driver is). The
    compiler driver is `$CC`, default `cc` there. With `c_api`, the archive also holds the C
    interface's header, source and version script (`c_api_files`), and `link.sh` compiles the
    source and links the library with that interface only. The archive appears at `path`
    atomically."""
    from dlc.driver.artifact import weights_blob
    from dlc.runtime.metadata import WEIGHT_ALIGNMENT

    path = Path(path)
    _objects_arch(objects)
    _output_directory(path)  # a missing directory is an error before any work
    members: dict[str, bytes] = {f"unit{i}.o": data for i, data in enumerate(objects)}
    inputs = list(members)
    if weights:
        layout, blob = weights_blob(weights, WEIGHT_ALIGNMENT)
        members["weights.bin"] = bytes(blob)
        members["weights.s"] = weights_assembly(
            layout, Path("weights.bin"), WEIGHT_ALIGNMENT).encode()
        inputs.append("weights.s")
    compile_api = ""
    if c_api is not None:
        files = c_api_files(c_api, f"{path.stem}.so")
        for name, text in files.items():
            members[name] = text.encode()
        for source in c_sources(files):
            compile_api += " ".join(['"${CC:-cc}"', *C_API_COMPILE_FLAGS, "-o",
                                     f"{Path(source).stem}.o", source]) + "\n"
            inputs.append(f"{Path(source).stem}.o")
        inputs += c_api_link_flags(C_API_EXPORTS, '"$(basename "${1:-model.so}")"')
    pool = thread_pool.link_inputs(objects)
    if pool:
        members[POOL_MEMBER] = thread_pool.POOL_SOURCE.read_bytes()
        inputs += [shlex.quote(flag) for flag in pool[:-1]] + [POOL_MEMBER]
    command = " ".join(link_command('"${CC:-cc}"', '"${1:-model.so}"', inputs, uses_openmp))
    members[LINK_SCRIPT] = (
        "#!/bin/sh\n# Links the model into a shared library (default model.so): run it in this\n"
        f"# folder, with CC the C compiler driver for the target (default cc).\nset -e\n"
        f"{compile_api}{command}\n"
    ).encode()
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name == LINK_SCRIPT else 0o644
            archive.addfile(info, io.BytesIO(data))
    write_atomically(path, tar.getvalue())
    return path
