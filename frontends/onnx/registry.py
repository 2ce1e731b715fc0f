"""The registry of ONNX op converters: one class per ONNX op, one method per opset version.

TVM's counterpart is `relay.frontend.onnx`'s `_get_convert_map` with `OnnxOpConverter._impl_v<N>`.
Here a converter registers itself with `@register("OpType")`; the importer picks the method
`_impl_v<N>` with the largest N not above the model's opset for the op's domain.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np
from xdsl.ir import SSAValue

if TYPE_CHECKING:
    from dlc.frontends.onnx.context import NodeContext

ConvertedValue = SSAValue | np.ndarray
"""What a converter produces for one ONNX output: an SSA value, or an array known at import time."""

Impl = Callable[["NodeContext"], Sequence[ConvertedValue]]

_IMPL_NAME = re.compile(r"_impl_v(\d+)$")

CONVERTER_MODULES: tuple[str, ...] = (
    "dlc.frontends.onnx.elementwise",
    "dlc.frontends.onnx.activation",
    "dlc.frontends.onnx.control",
    "dlc.frontends.onnx.dynamic",
    "dlc.frontends.onnx.einsum",
    "dlc.frontends.onnx.nn",
    "dlc.frontends.onnx.norm",
    "dlc.frontends.onnx.pool",
    "dlc.frontends.onnx.quant",
    "dlc.frontends.onnx.recurrent",
    "dlc.frontends.onnx.reduce",
    "dlc.frontends.onnx.resize",
    "dlc.frontends.onnx.select",
    "dlc.frontends.onnx.shape",
    "dlc.frontends.onnx.tensor",
)
"""Every module that holds converters; importing one registers its converters."""


class OnnxOpConverter:
    """Base class of a converter for one ONNX op.

    A subclass defines classmethods `_impl_v<N>(cls, node: NodeContext) -> list[ConvertedValue]`,
    one for each opset version N at which the op's semantics changed; each returns one value per
    ONNX output of the node (absent optional outputs may be left off the end).
    """

    op_type: ClassVar[str] = ""
    domain: ClassVar[str] = ""
    fold_constant_inputs: ClassVar[bool] = True
    """Whether a node whose inputs are all constants is evaluated at import time (DequantizeLinear
    says no: `graph-fold-qdq` needs to see the integer weights)."""

    @classmethod
    def versions(cls) -> list[int]:
        """The opset versions this converter has a method for, ascending."""
        found = {int(m.group(1)) for name in dir(cls) if (m := _IMPL_NAME.match(name))}
        return sorted(found)

    @classmethod
    def impl_for(cls, opset: int) -> Impl | None:
        """The method for `opset`: the largest version not above it, or None if there is none."""
        usable = [v for v in cls.versions() if v <= opset]
        if not usable:
            return None
        return getattr(cls, f"_impl_v{usable[-1]}")


_REGISTRY: dict[tuple[str, str], type[OnnxOpConverter]] = {}
_loaded = False

C = TypeVar("C", bound=type[OnnxOpConverter])


def register(op_type: str, domain: str = "") -> Callable[[C], C]:
    """Class decorator: register the class as the converter of ONNX op `op_type` in `domain`."""

    def wrap(cls: C) -> C:
        key = (domain, op_type)
        if key in _REGISTRY:
            raise ValueError(f"two converters registered for ONNX op {op_type!r}")
        cls.op_type = op_type
        cls.domain = domain
        _REGISTRY[key] = cls
        return cls

    return wrap


def _load() -> None:
    global _loaded
    if _loaded:
        return
    for module in CONVERTER_MODULES:
        importlib.import_module(module)
    _loaded = True


def lookup(op_type: str, domain: str = "") -> type[OnnxOpConverter] | None:
    """The converter registered for `op_type` in `domain` (`""` and `"ai.onnx"` are the same)."""
    _load()
    return _REGISTRY.get(("" if domain == "ai.onnx" else domain, op_type))


def supported_ops() -> dict[str, list[int]]:
    """Every ONNX op (default domain) dlc converts, with the opset versions it has methods for."""
    _load()
    return {op: cls.versions() for (domain, op), cls in sorted(_REGISTRY.items()) if not domain}


def unregister(op_type: str, domain: str = "") -> None:
    """Removes the converter of `op_type` in `domain` (no error if there is none): for
    user-defined ops (`frontends/onnx/custom.py`) that are registered again."""
    _REGISTRY.pop((domain, op_type), None)
