"""User-defined ONNX ops: the public API (TVM's `register_op_attr` + `te.compute` / `te.extern`).

Register an ONNX op type that dlc does not convert, once per process, before importing a model
that uses it:

    import numpy as np
    from dlc.custom_op import register_op

    def swish(te, x, beta=1.0):                    # tensor-expression definition
        return te.compute(x.shape, lambda i: x[i] * te.sigmoid(x[i] * beta))

    register_op(
        "Swish", domain="com.example", opset=1,
        shape=lambda x, beta=1.0: (x.shape, x.dtype),
        reference=lambda x, beta=1.0: x / (1 + np.exp(-beta * x)),
        compute=swish, fusion="elementwise", attributes={"beta": 1.0},
    )

The ONNX importer then makes `graph.custom` of such nodes; the graph interpreter (and so
`dlc-opt --check-semantics`) runs `reference`; `convert-graph-to-tensor-expr` runs `compute`,
so that `graph-fuse-ops`, the default schedules and the tuner treat it as a built-in op of its
fusion kind. An op computed by C code instead gives `extern=ExternFunction(name, library,
header)`: the generated code calls `void name(const T *in0, ..., T *out0, ...)` (dense row-major
tensors, inputs then outputs); the library is loaded in process to run and linked into exported
libraries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dlc.dialects.graph.attrs import FusionKind
from dlc.dialects.graph.custom import (
    CustomOpDefinition,
    CustomOpError,
    ExternFunction,
    Reference,
    ShapeFunction,
    TensorInfo,
    lookup_custom_op,
    register_definition,
    registered_custom_ops,
    unregister_definition,
)
from dlc.frontends.onnx.custom import register_custom_converter, unregister_custom_converter
from dlc.rewrites.topi.custom import Expr, Tensor, TensorExprBuilder

_FUSION_KINDS = {
    "elementwise": FusionKind.ELEMENTWISE,
    "broadcast": FusionKind.BROADCAST,
    "injective": FusionKind.INJECTIVE,
    "reduction": FusionKind.REDUCTION,
    "out-fusable": FusionKind.OUT_FUSABLE,
    "opaque": FusionKind.OPAQUE,
}
"""The fusion kinds `register_op` accepts (TVM's OpPatternKind)."""


def register_op(
    op_type: str,
    *,
    shape: ShapeFunction,
    reference: Reference,
    compute: Callable[..., Any] | None = None,
    extern: ExternFunction | None = None,
    domain: str = "",
    opset: int = 1,
    fusion: str = "opaque",
    attributes: Mapping[str, Any] | None = None,
) -> CustomOpDefinition:
    """Registers the ONNX op `op_type` of `domain` (from `opset` on) with dlc.

    Args:
        op_type: the ONNX op type.
        shape: `shape(*inputs: TensorInfo, **attrs)` -> `(shape, dtype)` or a list of them.
        reference: `reference(*arrays, **attrs)` -> the result array(s): the op's NumPy
            semantics.
        compute: `compute(te, *inputs: Tensor, **attrs)` -> `Tensor` or a list of them, built
            with `te.compute` (see `TensorExprBuilder`).
        extern: the C function that computes the op instead (exactly one of compute, extern).
        domain: the ONNX domain (a model declares it in its `opset_import`).
        opset: the first version of `domain` the definition applies to.
        fusion: elementwise, broadcast, injective, reduction, out-fusable or opaque (an
            external op is always opaque).
        attributes: the ONNX attributes the op takes, with their defaults (None: required);
            when given, any other attribute on a node is an error.

    Raises:
        CustomOpError: the op is already registered, `fusion` is unknown, or not exactly one of
            `compute` and `extern` is given.
    """
    if fusion not in _FUSION_KINDS:
        raise CustomOpError(
            f"custom op {op_type!r}: unknown fusion kind {fusion!r} (expected one of "
            f"{', '.join(_FUSION_KINDS)})"
        )
    definition = CustomOpDefinition(
        op_type=op_type, domain=domain, opset=opset, shape=shape, reference=reference,
        compute=compute, extern=extern, fusion_kind=_FUSION_KINDS[fusion],
        attributes=dict(attributes or {}),
    )
    register_definition(definition)
    try:
        register_custom_converter(definition)
    except ValueError as e:
        unregister_definition(definition.qualified_name)
        raise CustomOpError(f"custom op {op_type!r} (domain {domain!r}): {e}") from None
    return definition


def unregister_op(op_type: str, domain: str = "") -> None:
    """Removes a registered op (so that it can be registered again); no error if absent."""
    definition = lookup_custom_op(f"{domain}::{op_type}")
    if definition is None:
        return
    unregister_custom_converter(definition)
    unregister_definition(definition.qualified_name)


def load_custom_ops(path: str) -> None:
    """Runs the Python file `path`, which registers custom ops (`dlc compile --custom-ops`,
    `dlc-opt --custom-ops`).

    Raises:
        CustomOpError: the file is missing or raises (the message names it and the error).
    """
    import runpy
    from pathlib import Path

    if not Path(path).is_file():
        raise CustomOpError(f"--custom-ops: no such file: {path}")
    try:
        runpy.run_path(str(path))
    except Exception as e:
        raise CustomOpError(f"--custom-ops {path}: {type(e).__name__}: {e}") from None


__all__ = [
    "CustomOpDefinition", "CustomOpError", "Expr", "ExternFunction", "Tensor",
    "TensorExprBuilder", "TensorInfo", "load_custom_ops", "register_op", "registered_custom_ops",
    "unregister_op",
]
