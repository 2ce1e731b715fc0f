"""A pattern applier that tries only the patterns written for an op's type.

xDSL's `GreedyRewritePatternApplier` calls every pattern on every op until one acts: a lowering
with fifty patterns over a kernel of ten thousand ops makes half a million calls that only check
`isinstance` (most of `convert-loop-to-llvm`'s time). Patterns written with
`@op_type_rewrite_pattern` say which op types they rewrite; `TypeDispatchApplier` reads that
once, keeps one list of candidates per op class (in the patterns' order, with the patterns that
take any op), and calls only those. A table-driven pattern declares its op classes as
`op_types`. Same results, same order of attempts as the greedy applier.

Counterpart: MLIR's `FrozenRewritePatternSet`, which indexes patterns by their root op name.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from types import UnionType
from typing import Union, get_args, get_origin

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.transforms.dead_code_elimination import is_trivially_dead


def rewritten_op_types(pattern: RewritePattern) -> tuple[type[Operation], ...] | None:
    """The op classes `pattern` rewrites: its `op_types` attribute (a pattern driven by a table
    of op classes), or the annotation of a `match_and_rewrite` decorated with
    `@op_type_rewrite_pattern` (read from the decorator's closure); None when it may rewrite
    any op."""
    declared = getattr(pattern, "op_types", None)
    if declared is not None:
        return tuple(declared)
    method = type(pattern).match_and_rewrite
    try:
        expected = inspect.getclosurevars(method).nonlocals.get("expected_type")
    except TypeError:  # not a Python function (a builtin, a C extension)
        return None
    if expected is None:
        return None
    types = get_args(expected) if get_origin(expected) in (Union, UnionType) else (expected,)
    if not all(isinstance(t, type) and issubclass(t, Operation) for t in types):
        return None
    return types


class TypeDispatchApplier(RewritePattern):
    """Applies the first of `patterns` that acts on an op, trying only those whose op types
    match it (and those that take any op), in order; erases trivially dead ops first, as the
    greedy applier does."""

    def __init__(self, patterns: Sequence[RewritePattern]) -> None:
        self.patterns = tuple(patterns)
        self._types = [rewritten_op_types(p) for p in self.patterns]
        self._candidates: dict[type[Operation], tuple[RewritePattern, ...]] = {}

    def candidates(self, op_type: type[Operation]) -> tuple[RewritePattern, ...]:
        """The patterns that may rewrite an op of class `op_type`, in order."""
        found = self._candidates.get(op_type)
        if found is None:
            found = tuple(
                pattern for pattern, types in zip(self.patterns, self._types, strict=True)
                if types is None or issubclass(op_type, types)
            )
            self._candidates[op_type] = found
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if is_trivially_dead(op):
            rewriter.erase(op)
            return
        for pattern in self.candidates(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return
