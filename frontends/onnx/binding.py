"""What an ONNX model leaves to run time, and binding it: dynamic input dimensions (with their
`dim_param` symbols) and graph inputs whose *values* the importer needs (a Reshape's shape, a
Slice's starts, a Resize's sizes passed as runtime inputs).

`driver.specialize` uses these to compile a model per call signature, and the conformance
harness to run ONNX's node cases; both bind a value input by turning it into an initializer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from dlc.frontends.onnx.errors import NotConstantError
from onnx import numpy_helper

Dim = int | str | None
"""A declared dimension: its size, its `dim_param` symbol, or None (unknown, unnamed)."""


@dataclass(frozen=True)
class DeclaredInput:
    """A graph input as the model declares it: name, NumPy dtype, and shape (None: no shape)."""

    name: str
    dtype: np.dtype
    shape: tuple[Dim, ...] | None

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) for d in self.shape)

    def describe(self) -> str:
        if self.shape is None:
            return f"{self.name}: {self.dtype} (no declared shape)"
        dims = "x".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.name}: {dims} {self.dtype}"


def declared_inputs(model: onnx.ModelProto) -> list[DeclaredInput]:
    """The graph inputs that are not initializers, in order, as declared."""
    initializers = {i.name for i in model.graph.initializer}
    inputs = []
    for value_info in model.graph.input:
        if value_info.name in initializers:
            continue
        tensor = value_info.type.tensor_type
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)) \
            if tensor.elem_type else np.dtype(np.float32)
        shape: tuple[Dim, ...] | None = None
        if tensor.HasField("shape"):
            shape = tuple(
                d.dim_value if d.HasField("dim_value") and d.dim_value >= 0
                else (d.dim_param or None) for d in tensor.shape.dim
            )
        inputs.append(DeclaredInput(value_info.name, dtype, shape))
    return inputs


def bind_inputs(model: onnx.ModelProto, values: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of `model` whose graph inputs named in `values` are initializers holding them."""
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    keep = [i for i in bound.graph.input if i.name not in values]
    del bound.graph.input[:]
    bound.graph.input.extend(keep)
    for name, array in values.items():
        bound.graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
    return bound


def graph_inputs_behind(model: onnx.ModelProto, name: str) -> set[str]:
    """The graph inputs that value `name` is computed from."""
    producers = {out: node for node in model.graph.node for out in node.output}
    inputs = {i.name for i in model.graph.input}
    found: set[str] = set()
    stack, seen = [name], set()
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        if value in inputs:
            found.add(value)
        elif value in producers:
            stack.extend(v for v in producers[value].input if v)
    return found


def inputs_to_bind(model: onnx.ModelProto, error: NotConstantError,
                   already: Iterable[str] = ()) -> list[str]:
    """The graph inputs to bind so that the value `error` names becomes known, sorted; empty
    when it does not depend on a graph input not bound yet (then binding cannot help)."""
    return sorted(graph_inputs_behind(model, error.value_name) - set(already))


def import_binding(model: onnx.ModelProto, values: Mapping[str, np.ndarray],
                   input_shapes: Mapping[str, Sequence[int]] | None = None,
                   bound: Sequence[str] = ()) -> tuple[onnx.ModelProto, object, list[str]]:
    """(model with bound inputs, imported module, names bound): imports `model`, binding to
    `values` the graph inputs listed in `bound` and every further one the importer needs the
    value of. Raises the importer's error when a needed value does not come from an input."""
    from dlc.frontends.onnx.importer import import_onnx

    names = list(bound)
    for _ in range(len(model.graph.input) + 1):
        current = bind_inputs(model, {n: values[n] for n in names}) if names else model
        shapes = {k: v for k, v in (input_shapes or {}).items() if k not in names}
        try:
            return current, import_onnx(current, shapes), names
        except NotConstantError as e:
            more = inputs_to_bind(model, e, names)
            if not more:
                raise
            names.extend(more)
    raise AssertionError("unreachable: every round binds at least one input")
