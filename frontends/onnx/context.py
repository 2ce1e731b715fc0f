"""What a converter sees of the ONNX node it converts: inputs, attributes, and where to emit ops.

The counterpart of the `inputs, attr, params` triple that TVM passes to `_impl_v<N>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

import numpy as np
from dlc.frontends.onnx.errors import NotConstantError, OnnxImportError
from dlc.frontends.onnx.tensors import numpy_dtype_of, tensor_to_array
from onnx import AttributeProto, GraphProto, NodeProto
from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr, TensorType, UnknownLoc
from xdsl.ir import Attribute, Block, Operation, SSAValue


class Scope(Protocol):
    """Where a converter's values live and its ops go (the function body, or a folding block)."""

    in_region: bool
    """Whether the ops go into a control-flow node's subgraph (a Loop, Scan or If body)."""

    def value(self, name: str) -> SSAValue:
        """The SSA value of ONNX value `name`, materializing a constant if need be."""
        ...

    def array(self, name: str) -> np.ndarray | None:
        """The contents of ONNX value `name` if known at import time."""
        ...

    def type_of(self, name: str) -> TensorType:
        """The tensor type of ONNX value `name`."""
        ...

    def insert(self, op: Operation) -> None:
        """Append `op` to the block being built."""
        ...

    def constant(self, array: np.ndarray) -> SSAValue:
        """A new constant holding `array`."""
        ...

    def batch_value(self) -> SSAValue | None:
        """A value whose leading dim is the dynamic batch (the first such graph input), or None
        without one."""
        ...

    def subgraph(self, graph: GraphProto, arg_types: Sequence[TensorType]
                 ) -> tuple[Block, list[SSAValue]]:
        """`graph` converted into a new block with arguments of `arg_types` (captures by name
        from this scope), and its output values."""
        ...


_REQUIRED = object()
T = TypeVar("T")

_ATTR_KINDS: dict[int, str] = {
    AttributeProto.INT: "INT",
    AttributeProto.FLOAT: "FLOAT",
    AttributeProto.STRING: "STRING",
    AttributeProto.INTS: "INTS",
    AttributeProto.FLOATS: "FLOATS",
    AttributeProto.TENSOR: "TENSOR",
    AttributeProto.STRINGS: "STRINGS",
    AttributeProto.GRAPH: "GRAPH",
}


def node_name(node: NodeProto) -> str:
    """`node 'conv1'`; an unnamed node is named by its first output (`node producing 'y'`)."""
    if node.name:
        return f"node '{node.name}'"
    if node.output and node.output[0]:
        return f"node producing '{node.output[0]}'"
    return "unnamed node"


def describe_node(node: NodeProto, opset: int | None = None) -> str:
    """`node 'conv1' (Conv, opset 13)`: the node and its op, as errors name them."""
    domain = "" if node.domain in ("", "ai.onnx") else f"{node.domain}."
    version = "" if opset is None else f", opset {opset}"
    return f"{node_name(node)} ({domain}{node.op_type}{version})"


def name_location(name: str) -> NameLoc | UnknownLoc:
    """`loc("name")`, or `loc(unknown)` for an empty name."""
    return NameLoc(StringAttr(name), NoneAttr()) if name else UnknownLoc()


def node_location(node: NodeProto) -> NameLoc | UnknownLoc:
    """The location of ops made for `node`: its name, else its first output's name."""
    return name_location(node.name or (node.output[0] if node.output else ""))


class NodeContext:
    """One ONNX node being converted: typed access to its inputs and attributes, and an emitter.

    Every error a converter raises should come from `self.error(...)`, which names the node.
    """

    def __init__(self, node: NodeProto, opset: int, scope: Scope) -> None:
        self.node = node
        self.opset = opset
        self.scope = scope
        self._attrs = {a.name: a for a in node.attribute}
        self._location = node_location(node)

    # ---------------------------------------------------------------- identity and errors

    @property
    def op_type(self) -> str:
        """The node's ONNX op type (`Conv`)."""
        return self.node.op_type

    def error(self, message: str) -> OnnxImportError:
        """An import error for this node: `node 'n' (Conv, opset 13): <message>`."""
        return OnnxImportError(f"{describe_node(self.node, self.opset)}: {message}")

    # ---------------------------------------------------------------- inputs

    @property
    def num_inputs(self) -> int:
        """How many inputs the node lists (absent optional ones, named "", included)."""
        return len(self.node.input)

    def has_input(self, index: int) -> bool:
        """Whether optional input `index` is given."""
        return index < len(self.node.input) and self.node.input[index] != ""

    def _name(self, index: int) -> str:
        if not self.has_input(index):
            raise self.error(f"expected input {index}, found none (the node lists "
                             f"{self.num_inputs} inputs)")
        return self.node.input[index]

    def input(self, index: int) -> SSAValue:
        """The SSA value of input `index` (a constant input becomes a graph constant)."""
        return self.scope.value(self._name(index))

    def inputs(self) -> list[SSAValue]:
        """The SSA values of all given inputs, in order."""
        return [self.input(i) for i in range(self.num_inputs) if self.has_input(i)]

    def input_type(self, index: int) -> TensorType:
        """The tensor type of input `index`."""
        return self.scope.type_of(self._name(index))

    def shape(self, index: int) -> tuple[int, ...]:
        """The static shape of input `index`."""
        return tuple(self.input_type(index).get_shape())

    def rank(self, index: int) -> int:
        """The rank of input `index`."""
        return len(self.shape(index))

    def element_type(self, index: int) -> Attribute:
        """The element type of input `index`."""
        return self.input_type(index).element_type

    def const(self, index: int) -> np.ndarray | None:
        """The contents of input `index` if known at import time, else None."""
        return self.scope.array(self._name(index))

    def require_const(self, index: int, what: str) -> np.ndarray:
        """The contents of input `index`, which must be known at import time."""
        array = self.const(index)
        if array is None:
            name = self.node.input[index]
            raise NotConstantError(
                f"{describe_node(self.node, self.opset)}: expected input {index} ('{name}', "
                f"{what}) to be known at import time (an initializer, a Constant, or computed "
                "from static shapes), found a value computed at run time", name)
        return array

    def optional_const_ints(self, index: int, what: str) -> list[int] | None:
        """Optional input `index` as a list of ints known at import time, or None if absent."""
        if not self.has_input(index):
            return None
        return [int(v) for v in self.require_const(index, what).reshape(-1)]

    # ---------------------------------------------------------------- attributes

    def has_attr(self, name: str) -> bool:
        """Whether the node sets attribute `name`."""
        return name in self._attrs

    def _attr(self, name: str, kind: int, default: object) -> AttributeProto | None:
        attr = self._attrs.get(name)
        if attr is None:
            if default is _REQUIRED:
                raise self.error(f"expected attribute '{name}', found none")
            return None
        if attr.type != kind:
            found = _ATTR_KINDS.get(attr.type, f"type {attr.type}")
            raise self.error(f"expected attribute '{name}' of type {_ATTR_KINDS[kind]}, "
                             f"found {found}")
        return attr

    def attr_int(self, name: str, default: int | object = _REQUIRED) -> int:
        """Integer attribute `name` (required unless a default is given)."""
        attr = self._attr(name, AttributeProto.INT, default)
        return int(attr.i) if attr is not None else default  # type: ignore[return-value]

    def attr_float(self, name: str, default: float | object = _REQUIRED) -> float:
        """Float attribute `name` (required unless a default is given)."""
        attr = self._attr(name, AttributeProto.FLOAT, default)
        return float(attr.f) if attr is not None else default  # type: ignore[return-value]

    def attr_str(self, name: str, default: str | object = _REQUIRED) -> str:
        """String attribute `name` (required unless a default is given)."""
        attr = self._attr(name, AttributeProto.STRING, default)
        if attr is None:
            return default  # type: ignore[return-value]
        try:
            return attr.s.decode("utf-8")
        except UnicodeDecodeError:
            raise self.error(f"expected attribute '{name}' to be UTF-8 text") from None

    def attr_ints(self, name: str, default: Sequence[int] | None | object = _REQUIRED
                  ) -> list[int] | None:
        """Integer-list attribute `name` (required unless a default is given)."""
        attr = self._attr(name, AttributeProto.INTS, default)
        if attr is None:
            return None if default is None else list(default)  # type: ignore[arg-type]
        return [int(v) for v in attr.ints]

    def attr_floats(self, name: str, default: Sequence[float] | None | object = _REQUIRED
                    ) -> list[float] | None:
        """Float-list attribute `name` (required unless a default is given)."""
        attr = self._attr(name, AttributeProto.FLOATS, default)
        if attr is None:
            return None if default is None else list(default)  # type: ignore[arg-type]
        return [float(v) for v in attr.floats]

    def attr_strs(self, name: str, default: Sequence[str] | None | object = _REQUIRED
                  ) -> list[str] | None:
        """String-list attribute `name` (required unless a default is given)."""
        attr = self._attr(name, AttributeProto.STRINGS, default)
        if attr is None:
            return None if default is None else list(default)  # type: ignore[arg-type]
        try:
            return [v.decode("utf-8") for v in attr.strings]
        except UnicodeDecodeError:
            raise self.error(f"expected attribute '{name}' to be UTF-8 text") from None

    def attr_tensor(self, name: str) -> np.ndarray | None:
        """Tensor attribute `name` as an array, or None if the node does not set it."""
        attr = self._attr(name, AttributeProto.TENSOR, None)
        if attr is None:
            return None
        return tensor_to_array(attr.t, f"attribute '{name}' of {describe_node(self.node)}")

    def attr_graph(self, name: str) -> GraphProto:
        """Graph attribute `name` (required): an If branch, a Loop or Scan body."""
        attr = self._attr(name, AttributeProto.GRAPH, _REQUIRED)
        assert attr is not None
        return attr.g

    def subgraph(self, name: str, arg_types: Sequence[TensorType]
                 ) -> tuple[Block, list[SSAValue]]:
        """Graph attribute `name` converted into a new block (see `Scope.subgraph`); an error
        inside names this node and the subgraph."""
        graph = self.attr_graph(name)
        try:
            return self.scope.subgraph(graph, arg_types)
        except OnnxImportError as e:
            raise self.error(f"in subgraph '{name}': {e}") from None

    # ---------------------------------------------------------------- emitting

    @property
    def location(self) -> NameLoc | UnknownLoc:
        """The location of the ops made for this node."""
        return self._location

    def emit_op(self, op: Operation) -> Operation:
        """Append `op` (located at this node) to the block being built and return it."""
        op.location = self._location
        self.scope.insert(op)
        return op

    def emit(self, op: Operation) -> SSAValue:
        """Append a single-result `op` and return its result."""
        return self.emit_op(op).results[0]

    def constant(self, array: np.ndarray) -> SSAValue:
        """A graph constant holding `array`."""
        value = self.scope.constant(np.asarray(array))
        if value.owner is not None and isinstance(value.owner, Operation):
            value.owner.location = self._location
        return value

    def batch(self) -> SSAValue:
        """A value whose leading dim is the dynamic batch, which sizes a broadcast to it (a
        shape input's leading -1, as the importer writes `BATCH` there)."""
        value = self.scope.batch_value()
        if value is None:
            raise self.error("expected a graph input with a dynamic batch for the leading -1 "
                             "of the shape")
        return value

    def scalar(self, value: float, like: int = 0) -> SSAValue:
        """A rank-0 constant `value` of the element type of input `like`."""
        return self.constant(np.array(value, dtype=numpy_dtype_of(self.element_type(like))))
