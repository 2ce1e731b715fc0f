"""One model compiled for several input shapes, and linked into one library of them.

`dlc.compile(model, specialize=[{"x": (None, 3, 320, 320)}, {"x": (None, 3, 640, 640)}],
dynamic_batch=True)` (`dlc compile --specialize x=?x3x320x320 --specialize x=?x3x640x640
--dynamic-batch`) compiles the model once per listed shape: each shape fixes the dims it gives
in the model's declared inputs (`with_input_dims`; `None`, `?` on the command line, keeps the
declared dim, which the dynamic batch must then take), and the variant is built as the model
would be with those declarations. The result (`runtime.variants.ShapeVariantsExecutable`) runs
each call on the variant its shapes select; other shapes, in process, go to the model compiled
as without `specialize` (specialization on first use, `driver.specialize`).

`export` links the variants into one shared library (`export_variants`; a `.tar` path packs
them with the link command instead, as a model of one shape is packed). Each variant's
objects, weights and entry symbols keep their code but are renamed apart (`merge_variants`:
ELF symbols renamed with `objcopy`, weights by their table); a kernel object that two variants
share byte for byte (the same kernel: its name is its structural hash) is linked once, and
weights with equal bytes are stored once (`artifact.pack_weights`). Its C interface gives each
variant the functions of a model library under `<prefix>_<tag>`, the tag made of the dims in
which the variants differ (`variant_tags`: `yolo_320x320`), and the table of variants
(`runtime.c_api_variants`).

This is specialization ahead of time, not kernels with runtime extents: every variant has
static kernels (its dynamic batch run as static blocks), and a library runs the shapes it
holds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from dlc.driver.artifact import CompiledModel, LinkError
from dlc.driver.elf import global_symbols
from dlc.driver.errors import CompileError
from dlc.runtime.executable import Executable
from dlc.runtime.library import LibraryError, machine_arch
from dlc.runtime.variants import ShapeVariantsExecutable, encode_variants, variant_info

VariantShapes = Mapping[str, Sequence[int | None]]
"""One variant: the shapes of some of the model's inputs, by name (None: the declared dim)."""


def with_input_dims(model: onnx.ModelProto, shapes: VariantShapes) -> onnx.ModelProto:
    """A copy of `model` whose graph inputs named in `shapes` are declared with those dims
    (None keeps the declared one). Raises `CompileError` naming an input the model does not
    have, a rank that is not the declared one, or a static dim given another size."""
    declared = {i.name: i for i in model.graph.input}
    initializers = {i.name for i in model.graph.initializer}
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    inputs = {i.name: i for i in copy.graph.input}
    for name, dims in shapes.items():
        if name not in declared or name in initializers:
            names = ", ".join(n for n in declared if n not in initializers)
            raise CompileError(f"--specialize names input '{name}', but the model's inputs are "
                               f"{names}")
        tensor = inputs[name].type.tensor_type
        if tensor.HasField("shape") and len(tensor.shape.dim) != len(dims):
            raise CompileError(
                f"--specialize gives input '{name}' {len(dims)} dims, but it is declared with "
                f"{len(tensor.shape.dim)}")
        if not tensor.HasField("shape"):
            for _ in dims:
                tensor.shape.dim.add()
        for axis, (dim, size) in enumerate(zip(tensor.shape.dim, dims, strict=True)):
            if size is None:
                continue
            if size < 0:
                raise CompileError(f"--specialize gives input '{name}' dim {axis} the size "
                                   f"{size}: expected a size >= 0 or ?")
            if dim.HasField("dim_value") and dim.dim_value != size:
                raise CompileError(f"--specialize gives input '{name}' dim {axis} the size "
                                   f"{size}, but the model declares it {dim.dim_value}")
            dim.dim_value = int(size)
    return copy


def variant_tags(shapes: Sequence[Sequence[tuple[int, ...]]]) -> list[str]:
    """A tag per variant (its C prefix's suffix) from the dims in which the variants' input
    shapes differ (`320x320` for `?x3x320x320` among `?x3x640x640`), `v<index>` where those
    do not tell them apart. `shapes[v][i]` is variant v's shape of input i (-1: a dynamic batch)."""
    def differing(variant: Sequence[tuple[int, ...]]) -> str:
        parts = []
        for i, shape in enumerate(variant):
            dims = [("n" if d < 0 else str(d)) for axis, d in enumerate(shape)
                    if len({v[i][axis] if axis < len(v[i]) else None for v in shapes}) > 1]
            if dims:
                parts.append("x".join(dims))
        return "_".join(parts)

    tags = [re.sub(r"[^A-Za-z0-9_]", "_", differing(v)) for v in shapes]
    if len(set(tags)) != len(tags) or "" in tags:
        return [f"v{i}" for i in range(len(shapes))]
    return tags


def build_variants(
    model: onnx.ModelProto, variants: Sequence[VariantShapes],
    build: Callable[[onnx.ModelProto], Any], fallback: Callable[[], Any] | None,
) -> ShapeVariantsExecutable:
    """`build` (the user's options) of `model` declared with each variant's shapes, as one
    executable; `fallback` makes what runs other shapes in process (None: an error)."""
    if not variants:
        raise CompileError("expected at least one shape to specialize for")
    listed = [", ".join(f"{n}={_dims_text(d)}" for n, d in sorted(v.items())) for v in variants]
    for index, text in enumerate(listed):
        if text in listed[:index]:
            raise CompileError(f"--specialize {text} is listed twice")
    executables: list[Executable] = []
    for shapes, given in zip(variants, listed, strict=True):
        executable = build(with_input_dims(model, shapes))
        if not isinstance(executable, Executable) or getattr(executable, "compiled", None) is None:
            values = getattr(executable, "value_inputs", ())
            left = (f"the values of inputs {', '.join(values)} decide shapes" if values else
                    f"{getattr(executable, 'describe', lambda: '')()}")
            raise CompileError(
                f"--specialize {given} leaves the model with runtime shapes ({left}): give "
                "every dynamic dim a size (? only for the batch, with --dynamic-batch)")
        executables.append(executable)

    def export(path: Path, c_prefix: str | None = None, c_header: str | Path | None = None
               ) -> Path:
        return export_variants(executables, path, c_prefix, c_header)

    return ShapeVariantsExecutable(executables, fallback, export)


def _dims_text(dims: Sequence[int | None]) -> str:
    return "x".join("?" if d is None else str(d) for d in dims)


def objcopy_for(arch: str) -> str:
    """The objcopy of the binutils that link for `arch` (`export.linker_for`'s): `objcopy` on a
    host of that architecture, `aarch64-linux-gnu-objcopy` for AArch64 on an x86-64 host."""
    from dlc.driver.export import CROSS_COMPILERS

    prefix = ""
    if arch != machine_arch():
        if arch not in CROSS_COMPILERS:
            raise LibraryError(f"cannot rename the symbols of objects for {arch}: no binutils "
                               "known for it")
        prefix = CROSS_COMPILERS[arch][0].rsplit("-", 1)[0] + "-"
    tool = shutil.which(f"{prefix}objcopy")
    if tool is None:
        raise LibraryError(f"cannot rename the symbols of a library of several shapes: no "
                           f"'{prefix}objcopy' on PATH (install binutils"
                           f"{'-' + prefix.rstrip('-').replace('_', '-') if prefix else ''})")
    return tool


def rename_symbols(objects: Sequence[bytes], names: Mapping[str, str], objcopy: str
                   ) -> list[bytes]:
    """`objects` with the global symbols in `names` (defined or referenced) renamed."""
    renamed = []
    with tempfile.TemporaryDirectory(prefix="dlc-variants-") as scratch:
        table = Path(scratch) / "names"
        table.write_text("".join(f"{old} {new}\n" for old, new in names.items()))
        for index, code in enumerate(objects):
            defined, used = global_symbols(code)
            if not (defined | used) & names.keys():
                renamed.append(code)
                continue
            source, target = Path(scratch) / f"{index}.o", Path(scratch) / f"{index}.out.o"
            source.write_bytes(code)
            result = subprocess.run([objcopy, f"--redefine-syms={table}", str(source),
                                     str(target)], capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise LibraryError(f"renaming symbols failed ({objcopy} exited with "
                                   f"{result.returncode}): {result.stderr.strip()}")
            renamed.append(target.read_bytes())
    return renamed


def merge_variants(
    models: Sequence[tuple[str, CompiledModel]], objcopy: str
) -> tuple[list[bytes], dict[str, np.ndarray], list[dict[str, str]]]:
    """The objects and weights of one library holding `models` (each under its prefix), and
    for each the names its symbols are linked under (old -> new).

    A model's weights are renamed `<prefix>__<name>`, and so are the global symbols its objects
    define where an earlier model's objects define them too (the entry, the metadata), except
    that an object an earlier model linked byte for byte, using nothing renamed, is linked once
    (a kernel both compile to: its name is its structural hash)."""
    objects: list[bytes] = []
    linked_as_is: set[bytes] = set()
    defined_so_far: set[str] = set()
    weights: dict[str, np.ndarray] = {}
    renames: list[dict[str, str]] = []
    for prefix, model in models:
        units = [(code, *global_symbols(code)) for code in model.objects.values()]
        renamed = {w: f"{prefix}__{w}" for w in model.weights}
        shared = [code in linked_as_is for code, _, _ in units]
        changed = True
        while changed:  # renaming one object's symbols may unshare another that uses them
            changed = False
            for index, (_, defined, used) in enumerate(units):
                if shared[index] and (defined | used) & renamed.keys():
                    shared[index] = False
                clashes = defined & defined_so_far - renamed.keys()
                if not shared[index] and clashes:
                    renamed.update({s: f"{prefix}__{s}" for s in defined})
                    changed = True
        kept = [unit for unit, is_shared in zip(units, shared, strict=True) if not is_shared]
        for (code, defined, _), linked in zip(
            kept, rename_symbols([code for code, _, _ in kept], renamed, objcopy), strict=True
        ):
            objects.append(linked)
            if linked == code:
                linked_as_is.add(code)
            defined_so_far.update(renamed.get(s, s) for s in defined)
        weights.update({renamed[w]: data for w, data in model.weights.items()})
        renames.append(renamed)
    return objects, weights, renames


def export_variants(executables: Sequence[Executable], path: str | Path,
                    c_prefix: str | None = None, c_header: str | Path | None = None) -> Path:
    """Link the compiled variants `executables` (each with its `compiled` model) into the shared
    library `path` (or, a `.tar` path, pack them with the link command, as
    `CompiledModel.export` does) with the C interface of `runtime.c_api_variants` under
    `c_prefix` (default: the file name made a C identifier), atomically; `c_header` is where to
    write its header."""
    from dlc.driver.export import link_shared_library, write_object_archive
    from dlc.runtime.c_api import check_c_prefix, check_export_request, default_c_prefix
    from dlc.runtime.c_api_variants import VariantsInterface
    from dlc.runtime.files import write_atomically
    from dlc.runtime.variants import VariantInfo

    path = Path(path)
    prefix = check_c_prefix(c_prefix if c_prefix is not None else default_c_prefix(path.stem))
    compiled: list[CompiledModel] = [e.compiled for e in executables]
    if path.suffix == ".tar" and any(m.externs for m in compiled):
        raise LinkError("cannot pack a model that calls external functions into a .tar: "
                        "export a .so")
    infos = [variant_info("", e) for e in executables]
    tags = variant_tags([[shape for _, shape in info.shapes] for info in infos])
    prefixes = [f"{prefix}_{tag}" for tag in tags]
    objcopy = objcopy_for(compiled[0].arch)
    objects, weights, renames = merge_variants(list(zip(prefixes, compiled, strict=True)),
                                               objcopy)
    apis = []
    for variant_prefix, model, renamed in zip(prefixes, compiled, renames, strict=True):
        api = model.c_interface(variant_prefix)
        if api is None:
            raise LinkError("a library of several shapes needs a model of one entry function")
        apis.append(replace(api, linked_names=tuple(sorted(renamed.items())),
                            variant_of=prefix))
    table = encode_variants([VariantInfo(p, i.shapes)
                             for p, i in zip(prefixes, infos, strict=True)])
    umbrella = VariantsInterface(prefix, tuple(apis), table)
    check_export_request(apis[0], c_prefix, c_header, "module")
    libraries: list[str] = []
    for model in compiled:
        for library in dict.fromkeys(lib for lib, _ in model.externs.values()):
            libraries.append(library)
            if "/" in library:
                libraries.append(f"-Wl,-rpath,{Path(library).parent}")
    openmp = any(m.uses_openmp for m in compiled)
    if path.suffix == ".tar":  # objects, weights, the C interface and link.sh, to link elsewhere
        library = write_object_archive(objects, weights, path, openmp, umbrella)
    else:
        library = link_shared_library(objects, weights, path, openmp,
                                      list(dict.fromkeys(libraries)), c_api=umbrella)
    if c_header is not None:
        write_atomically(c_header, umbrella.header(path.name), mode=0o644)
    return library
