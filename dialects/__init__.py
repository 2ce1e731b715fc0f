"""dlc's dialects, and the lazy registry of every dialect dlc-opt knows."""

from __future__ import annotations

from collections.abc import Callable

from dlc.dialects import semi_affine  # noqa: F401 - extends xDSL's affine products, see there
from xdsl.context import Context
from xdsl.ir import Dialect


def _graph() -> Dialect:
    from dlc.dialects.graph import Graph

    return Graph


def _tensor_expr() -> Dialect:
    from dlc.dialects.tensor_expr import TensorExpr

    return TensorExpr


def _loop() -> Dialect:
    from dlc.dialects.loop import Loop

    return Loop


def _target_gpu() -> Dialect:
    from dlc.dialects.target_gpu import TargetGpu

    return TargetGpu


def _llvm() -> Dialect:
    from dlc.dialects.llvm_vector import llvm_dialect

    return llvm_dialect()


def _transform() -> Dialect:
    from dlc.dialects.transform_loop import transform_dialect

    return transform_dialect()


DLC_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "graph": _graph,
    "tensor_expr": _tensor_expr,
    "loop": _loop,
    "target_gpu": _target_gpu,
}
"""dlc's own dialects, by name, each behind a factory that imports it on first use."""

UPSTREAM_DIALECTS = (
    "builtin", "func", "arith", "math", "memref", "scf", "cf", "llvm", "vector", "transform",
    "affine", "tensor", "test",
)
"""The upstream xDSL dialects that dlc's pipelines read or produce."""


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Every dialect dlc-opt can parse: dlc's own and the upstream ones dlc uses. (Everything
    that parses text gets its dialects here, so the lexer fix of `dialects.lexer` goes in here.)"""
    from dlc.dialects.lexer import use_linear_time_string_literals
    from xdsl.dialects import get_all_dialects as upstream

    use_linear_time_string_literals()
    available = upstream()
    dialects = {name: available[name] for name in UPSTREAM_DIALECTS}
    dialects.update(DLC_DIALECTS)
    # `transform.loop.*` ops are looked up in the dialect named "transform" (the text before the
    # first dot), so dlc's transform ops come as the upstream dialect extended with them.
    dialects["transform"] = _transform
    # `llvm.fcmp` and `llvm.select` on vectors (`dialects.llvm_vector`), as the lowering makes them.
    dialects["llvm"] = _llvm
    return dialects


def make_context() -> Context:
    """An xDSL context that knows every dialect dlc reads (each loaded on first use)."""
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
