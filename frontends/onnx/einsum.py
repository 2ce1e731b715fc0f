"""Converter of ONNX Einsum: transposes, reshapes, diagonals (strided slices), sums and batched
matmuls, contracting the operands pairwise from left to right."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dlc.dialects.graph import MatmulOp, ReduceOp, TransposeOp
from dlc.dialects.graph.ops import broadcast_shapes
from dlc.dialects.graph.ops_tensor import BroadcastToOp, SliceOp
from dlc.frontends.onnx.common import reshape, shape_of
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from xdsl.ir import SSAValue

_ELLIPSIS_LABELS = "0123456789!#$%&*+:;<=>?@^_|~"
"""Labels standing for the dims of `...`: no letter, so none is one of the equation's own
labels (ASCII letters of either case: torch writes `BGHID,BGHJD->BGHIJ`)."""


@dataclass
class _Term:
    """An operand with one label per axis."""

    value: SSAValue
    labels: str


def parse_equation(node: NodeContext, equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """(labels of each input, labels of the output), with `...` expanded to the labels of
    `_ELLIPSIS_LABELS` aligned from the right, and the implicit output (labels used once, in
    ASCII order as NumPy sorts them) made explicit."""
    equation = equation.replace(" ", "")
    inputs_text, arrow, output_text = equation.partition("->")
    terms = inputs_text.split(",")
    if len(terms) != len(ranks):
        raise node.error(f"expected {len(ranks)} operand terms in equation '{equation}', found "
                         f"{len(terms)}")
    ellipsis_rank = 0
    labels: list[str] = []
    for term, rank in zip(terms, ranks, strict=True):
        explicit = term.replace("...", "")
        if explicit and not (explicit.isascii() and explicit.isalpha()):
            raise node.error(f"expected letters as labels in equation '{equation}'")
        if "..." in term:
            count = rank - len(explicit)
            ellipsis_rank = max(ellipsis_rank, count)
            term = term.replace("...", _ELLIPSIS_LABELS[len(_ELLIPSIS_LABELS) - count:])
        if len(term) != rank:
            raise node.error(f"expected term '{term}' of equation '{equation}' to label "
                             f"{rank} axes")
        labels.append(term)
    ellipsis = _ELLIPSIS_LABELS[len(_ELLIPSIS_LABELS) - ellipsis_rank:]
    if arrow:
        output = output_text.replace("...", ellipsis)
    else:
        counts = {c: "".join(labels).count(c) for c in "".join(labels) if c.isalpha()}
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
    return labels, output


def _diagonals(node: NodeContext, term: _Term) -> _Term:
    """`term` with each repeated label reduced to its diagonal (a strided slice)."""
    while (repeated := next((c for c in term.labels if term.labels.count(c) > 1), None)):
        first = term.labels.index(repeated)
        second = term.labels.index(repeated, first + 1)
        rest = [i for i in range(len(term.labels)) if i not in (first, second)]
        value = term.value
        perm = [*rest, first, second]
        if perm != list(range(len(perm))):
            value = node.emit(TransposeOp(value, perm))
        shape = shape_of(value)
        n = shape[-1]
        if shape[-2] != n:
            raise node.error(f"expected the axes labelled '{repeated}' to have one size, found "
                             f"{shape[-2]} and {n}")
        flat = reshape(node, value, [*shape[:-2], n * n])
        rank = len(shape) - 1
        diagonal = node.emit(SliceOp(flat, [0] * rank, [*shape[:-2], n],
                                     [1] * (rank - 1) + [n + 1]))
        term = _Term(diagonal, "".join(term.labels[i] for i in rest) + repeated)
    return term


def _sum_out(node: NodeContext, term: _Term, keep: set[str]) -> _Term:
    """`term` summed over its labels not in `keep`."""
    axes = [i for i, c in enumerate(term.labels) if c not in keep]
    if not axes:
        return term
    value = node.emit(ReduceOp(term.value, "sum", axes, keepdims=False))
    return _Term(value, "".join(c for c in term.labels if c in keep))


def _permuted(node: NodeContext, term: _Term, order: str) -> SSAValue:
    perm = [term.labels.index(c) for c in order]
    if perm == list(range(len(perm))):
        return term.value
    return node.emit(TransposeOp(term.value, perm))


def _contract(node: NodeContext, a: _Term, b: _Term, keep: set[str]) -> _Term:
    """The product of `a` and `b` summed over their shared labels not in `keep`."""
    a = _sum_out(node, a, keep | set(b.labels))
    b = _sum_out(node, b, keep | set(a.labels))
    batch = "".join(c for c in a.labels if c in b.labels and c in keep)
    contracted = "".join(c for c in a.labels if c in b.labels and c not in keep)
    left = "".join(c for c in a.labels if c not in b.labels)
    right = "".join(c for c in b.labels if c not in a.labels)
    a_dims = dict(zip(a.labels, shape_of(a.value), strict=True))
    b_dims = dict(zip(b.labels, shape_of(b.value), strict=True))
    for c in contracted:
        if a_dims[c] != b_dims[c]:
            raise node.error(f"expected the axes labelled '{c}' to have one size, found "
                             f"{a_dims[c]} and {b_dims[c]}")
    batch_shape = broadcast_shapes([a_dims[c] for c in batch], [b_dims[c] for c in batch])
    if batch_shape is None:
        raise node.error(f"expected broadcastable batch axes '{batch}'")
    sizes = {c: batch_shape[i] for i, c in enumerate(batch)}
    sizes.update({c: a_dims[c] for c in left + contracted})
    sizes.update({c: b_dims[c] for c in right})

    def as_3d(term: _Term, order: str, groups: tuple[str, str, str]) -> SSAValue:
        value = _permuted(node, term, order)
        full = [sizes[c] for c in order]
        if list(shape_of(value)) != full:
            value = node.emit(BroadcastToOp(value, full))
        return reshape(node, value, [math.prod(sizes[c] for c in g) for g in groups])

    lhs = as_3d(a, batch + left + contracted, (batch, left, contracted))
    rhs = as_3d(b, batch + contracted + right, (batch, contracted, right))
    product = node.emit(MatmulOp(lhs, rhs))
    labels = batch + left + right
    return _Term(reshape(node, product, [sizes[c] for c in labels]), labels)


@register("Einsum")
class Einsum(OnnxOpConverter):
    """`Einsum` (from opset 12): diagonals, sums, transposes and batched matmuls; `...`
    broadcasts."""

    @classmethod
    def _impl_v12(cls, node: NodeContext) -> list[ConvertedValue]:
        values = node.inputs()
        labels, output = parse_equation(node, node.attr_str("equation"),
                                        [len(shape_of(v)) for v in values])
        terms = [_diagonals(node, _Term(v, t)) for v, t in zip(values, labels, strict=True)]
        result = _sum_out(node, terms[0], set(output) | set("".join(labels[1:])))
        for index, term in enumerate(terms[1:], start=1):
            later = set(output) | set("".join(labels[index + 1:]))
            result = _contract(node, result, term, later)
        result = _sum_out(node, result, set(output))
        if sorted(result.labels) != sorted(output):
            raise node.error(f"expected output labels '{output}' to appear in the inputs")
        return [_permuted(node, result, output)]
