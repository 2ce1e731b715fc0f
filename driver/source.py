"""What a compile starts from: an ONNX model, an `.mlir` file or an xDSL module, read into a
module and named for the compile cache (tvmc's model loading)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Union

from dlc.dialects import make_context
from dlc.dialects.dominance import verify_dominance
from dlc.dialects.shape_bounds import verify_shape_bounds
from dlc.driver.cache import CompileCache, CompileOptions, digest
from dlc.driver.errors import CompileError
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

if TYPE_CHECKING:
    import onnx

ModelSource = Union["ModuleOp", "onnx.ModelProto", str, Path]
"""What `compile` accepts: an xDSL module, an ONNX model, or the path of a .onnx or .mlir file."""


def parse_module(path: str | Path, ctx: Context | None = None) -> ModuleOp:
    """Parse the MLIR file at `path` (generic or custom syntax) and verify it."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise CompileError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise CompileError(f"{path}: {not_utf8(e)}") from None
    module = Parser(ctx or make_context(), text, name=str(path)).parse_module()
    module.verify()
    verify_dominance(module)
    verify_shape_bounds(module)
    return module


def not_utf8(error: UnicodeDecodeError, start_offset: int = 0) -> str:
    """What a UnicodeDecodeError of an MLIR source says, for a diagnostic."""
    byte = error.object[error.start]
    return (f"expected MLIR text in UTF-8, found byte 0x{byte:02x} at offset "
            f"{start_offset + error.start}")


class Source:
    """A model to compile, and how to read it and to name it in the cache."""

    def __init__(self, model: ModelSource, input_shapes: Mapping[str, Sequence[int]] | None,
                 dynamic_batch: bool = False, dynamic_shapes: bool = False):
        self.model = model
        self.dynamic_batch = dynamic_batch
        self.dynamic_shapes = dynamic_shapes
        self.input_shapes = {k: [int(d) for d in v] for k, v in (input_shapes or {}).items()}
        self.path = Path(model) if isinstance(model, str | Path) else None
        self.label = self.path.name if self.path is not None else type(model).__name__
        if self.path is not None:
            if not self.path.is_file():
                raise CompileError(f"cannot read {self.path}: no such file")
            if self.path.suffix not in (".onnx", ".mlir"):
                raise CompileError(
                    f"expected a .onnx or .mlir file, found '{self.path.name}'"
                )
        if self.input_shapes and self.kind != "onnx":
            raise CompileError("input_shapes applies to ONNX models only")

    @property
    def kind(self) -> str:
        if self.path is not None:
            return self.path.suffix.removeprefix(".")
        return "module" if type(self.model).__name__ == "ModuleOp" else "onnx"

    def cache_key(self, options: CompileOptions, store: CompileCache) -> str | None:
        """The model-level cache key, or None for an xDSL module (only its kernels are cached)."""
        if self.kind == "module":
            return None
        if self.path is not None:
            try:
                content = store.file_digest(self.path)
            except OSError as e:
                raise CompileError(f"cannot read {self.path}: {e.strerror}") from None
        else:
            content = digest(self.model.SerializeToString())  # type: ignore[union-attr]
        shapes = json.dumps(self.input_shapes, sort_keys=True)
        batch = "dynamic-batch" if self.dynamic_batch else (
            "dynamic-shapes" if self.dynamic_shapes else "")
        return digest(options.fingerprint(), self.kind, content, shapes, batch)

    def module(self, ctx: Context) -> ModuleOp:
        """The model as a module (imported, parsed or copied)."""
        if self.kind == "onnx":
            from dlc.frontends.onnx import import_onnx

            return import_onnx(self.model, self.input_shapes,  # type: ignore[arg-type]
                               dynamic_batch=self.dynamic_batch,
                               dynamic_shapes=self.dynamic_shapes)
        module = parse_module(self.path, ctx) if self.path is not None else self.model.clone()
        reject_declarations(module)  # type: ignore[arg-type]
        return module  # type: ignore[return-value]


def reject_declarations(module: ModuleOp) -> None:
    """Raises `CompileError` naming the first bodiless `func.func`: dlc links no external code,
    so a declaration (called, or meant as the entry) would only fail when the JIT links."""
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.is_declaration:
            raise CompileError(
                f"'func.func' @{op.sym_name.data} has no body: expected every function of the "
                "model to be defined (dlc links no external code), found a declaration"
            )


