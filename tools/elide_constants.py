"""Large constants elided from printed IR: mlir-opt's `--mlir-elide-elementsattrs-if-larger=N`.

dlc-opt prints a dense elements attribute of more than N elements as MLIR does,
`dense_resource<__elided__> : tensor<16x3x3x3xf32>`, so that IR that holds weights stays readable.
Splats are kept: they print as one value. The data of an elided constant is gone, so reading such
IR back is an error (`elided_constant_error`), never a constant silently without its data.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input, Span

DEFAULT_ELIDE_LIMIT = 16
"""Constants of more elements than this print elided unless dlc-opt is told otherwise."""

ELIDED_HANDLE = "__elided__"
"""The resource handle of an elided constant (MLIR's spelling)."""

ELIDED_SPELLING = f"dense_resource<{ELIDED_HANDLE}>"

_RENAMED_ELIDED_HANDLE = re.compile(rf"{ELIDED_HANDLE}_\d+")
"""xDSL renames a resource handle already declared in the process: `__elided___0`, ..."""


def is_elided(attr: Attribute) -> bool:
    """Whether `attr` is an elided constant, `dense_resource<__elided__>`."""
    if not isinstance(attr, DenseResourceAttr):
        return False
    handle = attr.resource_handle.data
    return handle == ELIDED_HANDLE or _RENAMED_ELIDED_HANDLE.fullmatch(handle) is not None


def _is_large(attr: Attribute, limit: int) -> bool:
    """Whether `attr` is a dense elements attribute of more than `limit` elements, not a splat."""
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        return False
    count = len(attr)
    if count <= limit:
        return False
    raw = attr.data.data
    return raw != raw[: len(raw) // count] * count


def _large_constants(op: Operation, limit: int) -> list[tuple[dict[str, Attribute], str]]:
    """The (attribute dictionary, name) of each large constant of `op` itself."""
    return [
        (attrs, name)
        for attrs in (op.attributes, op.properties)
        for name, attr in attrs.items()
        if _is_large(attr, limit)
    ]


def elide_large_constants(module: ModuleOp, limit: int) -> ModuleOp:
    """`module` to print: a copy whose constants of more than `limit` elements are elided.

    Returns `module` itself when it has no such constant (and always when `limit` is 0).
    """
    if limit <= 0 or not any(_large_constants(op, limit) for op in module.walk()):
        return module
    copy = module.clone()
    for op in copy.walk():
        for attrs, name in _large_constants(op, limit):
            value = attrs[name]
            assert isinstance(value, DenseIntOrFPElementsAttr)
            attrs[name] = DenseResourceAttr.from_params(ELIDED_HANDLE, value.type)
    return copy


def find_elided_constant(module: ModuleOp) -> Operation | None:
    """The first op of `module` that holds an elided constant, if any."""
    for op in module.walk():
        if any(is_elided(a) for a in (*op.attributes.values(), *op.properties.values())):
            return op
    return None


def elided_constant_error(op: Operation, text: bytes, input_name: str) -> ParseError:
    """The error for reading `op`, which holds an elided constant, from the source `text`.

    It points at the first `dense_resource<__elided__>` of the text outside a `//` comment
    (at the end of the text if, oddly, there is none).
    """
    spelling = ELIDED_SPELLING.encode()
    start, line_start = len(text), 0
    for line in text.splitlines(keepends=True):
        column = line.find(spelling)
        if column >= 0 and b"//" not in line[:column]:
            start = line_start + column
            break
        line_start += len(line)
    span = Span(start, min(start + len(spelling), len(text)), Input(text, input_name))
    return ParseError(
        span,
        f"'{op.name}' op holds an elided constant ({ELIDED_SPELLING}): its data was not printed, "
        "so it cannot be read back; print the IR with --elide-elementsattrs-if-larger=0",
    )
