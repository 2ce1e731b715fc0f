"""A model compiled for several input shapes, called as one: each call runs the variant whose
shapes its inputs have (a variant with a dynamic batch takes any number of rows).

Counterpart: TensorRT's optimization profiles, OpenVINO's per-shape reshapes, shape buckets.
`dlc.compile(model, specialize=[...])` makes one in process (`driver.shape_variants`), and
`export` links its variants into one shared library, which `dlc.load` opens as one again: the
library's `<prefix>_dlc_symbol("dlc_variants")` (`VARIANTS_SYMBOL`) is the JSON table of its
variants, each a C prefix and the input shapes it was compiled for (`-1`: a dynamic batch);
each variant's symbols are reached through its own `<variant prefix>_dlc_symbol`.

Nothing here imports xDSL or llvmlite.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from dlc.runtime.executable import Executable, ExecutableError, call_exporter, run_by_name
from dlc.runtime.metadata import MetadataError

VARIANTS_VERSION = 1
"""The version of the table's format; readers reject other versions."""


@dataclass(frozen=True)
class VariantInfo:
    """One entry of a library's table of variants.

    Attributes:
        prefix: the C prefix of the variant's functions (`<prefix>_run`, `<prefix>_dlc_symbol`).
        shapes: each input's name and the shape the variant was compiled for, `-1` where the
            variant takes a dynamic batch (any number of rows).
    """

    prefix: str
    shapes: tuple[tuple[str, tuple[int, ...]], ...]

    def describe(self) -> str:
        return ", ".join(f"{name}: {shape_text(shape)}" for name, shape in self.shapes)


def shape_text(shape: Sequence[int]) -> str:
    """`?x3x320x320`: a shape with `?` for a dynamic dim (-1)."""
    return "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"


def variant_info(prefix: str, executable: Executable) -> VariantInfo:
    """The table entry of `executable` (one variant) under `prefix`: its inputs' shapes from its
    signature, a batched input's leading dim -1."""
    shapes = tuple(
        (name, ((-1, *spec.shape[1:]) if spec.batch else tuple(spec.shape)))
        for name, spec in zip(executable.input_names, executable.signature.inputs, strict=True)
    )
    return VariantInfo(prefix, shapes)


def encode_variants(variants: Sequence[VariantInfo]) -> str:
    """The table as the JSON a library holds."""
    return json.dumps({
        "version": VARIANTS_VERSION,
        "variants": [{"prefix": v.prefix, "inputs": [[n, list(s)] for n, s in v.shapes]}
                     for v in variants],
    }, separators=(",", ":"))


def decode_variants(text: str) -> list[VariantInfo]:
    """The table a library holds (`MetadataError` when it is not one this runtime reads)."""
    try:
        data = json.loads(text)
        if data.get("version") != VARIANTS_VERSION:
            raise MetadataError(f"expected a table of variants of version {VARIANTS_VERSION}, "
                                f"found version {data.get('version')!r}")
        return [VariantInfo(str(v["prefix"]),
                            tuple((str(n), tuple(int(d) for d in s)) for n, s in v["inputs"]))
                for v in data["variants"]]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        if isinstance(e, MetadataError):
            raise
        raise MetadataError(f"malformed table of variants: {e}") from None


def _matches(executable: Executable, shapes: Sequence[tuple[int, ...]], exact: bool) -> bool:
    specs = executable.signature.inputs
    if len(specs) != len(shapes):
        return False
    for spec, shape in zip(specs, shapes, strict=True):
        if len(shape) != len(spec.shape):
            return False
        first = 1 if spec.batch else 0
        if spec.batch and exact:
            return False
        if tuple(shape[first:]) != tuple(spec.shape[first:]):
            return False
    return True


class ShapeVariantsExecutable:
    """Executables of one model for several input shapes, called like one `Executable`:
    `m(x, ...)`, `m.run({...})`, `m.export(path)`.

    A call runs the first variant compiled for exactly its inputs' shapes, else the first whose
    dynamic batch takes them; with none, `fallback` (in process: the model compiled for the
    call's shapes on first use) or an `ExecutableError` listing the shapes it holds.
    """

    def __init__(self, variants: Sequence[Executable],
                 fallback: Callable[[], Any] | None = None,
                 exporter: Callable[..., Path] | None = None,
                 prefixes: Sequence[str] = ()) -> None:
        if not variants:
            raise ExecutableError("expected at least one variant")
        self.variants = tuple(variants)
        self._fallback_factory = fallback
        self._fallback: Any = None
        self._lock = threading.Lock()
        self._exporter = exporter
        self.prefixes = tuple(prefixes)
        """The variants' C prefixes in a library (empty in process)."""
        first = self.variants[0]
        for other in self.variants[1:]:
            if (other.input_names, other.output_names) != (first.input_names,
                                                            first.output_names):
                raise ExecutableError(
                    f"the variants disagree on the model's inputs and outputs: "
                    f"{first.input_names} -> {first.output_names} and {other.input_names} -> "
                    f"{other.output_names}")
        self.stats = [v.stats for v in self.variants]

    @property
    def input_names(self) -> tuple[str, ...]:
        return self.variants[0].input_names

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.variants[0].output_names

    def describe(self) -> str:
        """The variants' input shapes, one per line."""
        return "\n".join(variant_info("", v).describe() for v in self.variants)

    def variant(self, inputs: Sequence[object]) -> Executable | None:
        """The variant that runs these inputs, or None when none takes them."""
        shapes = [tuple(int(d) for d in np.shape(x)) for x in inputs]
        for exact in (True, False):
            for executable in self.variants:
                if _matches(executable, shapes, exact):
                    return executable
        return None

    def _runner(self, inputs: Sequence[object]) -> Any:
        chosen = self.variant(inputs)
        if chosen is not None:
            return chosen
        if self._fallback_factory is not None:
            with self._lock:  # made once, by the first call that needs it
                if self._fallback is None:
                    self._fallback = self._fallback_factory()
            return self._fallback
        given = ", ".join(f"{name}: {shape_text(np.shape(x))}"
                          for name, x in zip(self.input_names, inputs, strict=False))
        held = "; ".join(variant_info("", v).describe() for v in self.variants)
        raise ExecutableError(
            f"no variant of the model takes inputs of shapes {given}: it was compiled for "
            f"{held} (compile it with this shape too: --specialize)")

    def specialization(self, inputs: Sequence[object]) -> tuple[Executable, list[Any]]:
        """The executable that runs these inputs and the inputs to pass it (the fallback's own
        specialization where no variant takes them), as `SpecializingExecutable`'s."""
        runner = self._runner(inputs)
        if isinstance(runner, Executable):
            return runner, list(inputs)
        return runner.specialization(inputs)

    def __call__(self, *inputs: object, **options: Any) -> np.ndarray | tuple[np.ndarray, ...]:
        if len(inputs) != len(self.input_names):
            raise ExecutableError(
                f"the model expects {len(self.input_names)} inputs "
                f"({', '.join(self.input_names)}), found {len(inputs)}")
        return self._runner(inputs)(*inputs, **options)

    def run(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Runs on inputs given by name; returns the outputs by name."""
        return run_by_name(self, self.input_names, self.output_names, inputs)

    def export(self, path: str | Path, *, c_prefix: str | None = None,
               c_header: str | Path | None = None) -> Path:
        """Write every variant into one shared library that `dlc.load` opens as this
        executable (without the fallback: a library runs the shapes it holds). Its C interface
        has each variant's functions under `<c_prefix>_<tag>` (`driver.shape_variants`)."""
        return call_exporter(self._exporter, path, c_prefix, c_header)
