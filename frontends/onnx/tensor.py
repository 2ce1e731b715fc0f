"""Converters of ONNX ops that move or select data without arithmetic: Identity, Dropout, ..."""

from __future__ import annotations

import numpy as np

from frontends.onnx.context import NodeContext
from frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register


def _passthrough(node: NodeContext, index: int = 0) -> ConvertedValue:
    """Input `index` unchanged: its contents if known at import time, else its SSA value."""
    array = node.const(index)
    return array if array is not None else node.input(index)


@register("Identity")
class Identity(OnnxOpConverter):
    """`Identity`: its input."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return [_passthrough(node)]


@register("Dropout")
class Dropout(OnnxOpConverter):
    """`Dropout` at inference: its input, and an all-true mask if the mask is asked for.

    v12 takes `ratio` and `training_mode` as inputs; a training mode that is not known to be
    false at import time is an error.
    """

    @classmethod
    def _outputs(cls, node: NodeContext) -> list[ConvertedValue]:
        mask = np.ones(node.shape(0), dtype=np.bool_)
        return [_passthrough(node), mask]

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._outputs(node)

    @classmethod
    def _impl_v12(cls, node: NodeContext) -> list[ConvertedValue]:
        if node.has_input(2):
            training = node.require_const(2, "training_mode")
            if bool(training.reshape(-1)[0]):
                raise node.error("expected training_mode false (dlc imports models for "
                                 "inference), found true")
        return cls._outputs(node)
