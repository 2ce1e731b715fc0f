"""Unbinding before transposing: a rewrite of ONNX graphs that keeps a dynamic batch leading.

Attention as timm and many exporters write it, `qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1,
4)` then `q, k, v = qkv.unbind(0)` (ONNX: Transpose, then Split along axis 0 into ones and a
Squeeze of axis 0 of each piece, or a Gather of index i along axis 0), moves the batch off the
leading axis for one op; the pieces have it leading again. `sink_unbinds` rewrites such a
Transpose and its unbinding consumers as the unbinding of its input along the axis the
transpose brought first, and a transpose of each piece by the other axes' order:

    Split(Transpose(x, perm), axis 0) -> Squeeze(axis 0)  ==  Transpose(Squeeze(Split(x, axis
    perm[0]), axis perm[0]), perm')       perm' = perm[1:], each axis above perm[0] less one

(and the same with Gather for Split and Squeeze). Both are data movement, so the values are the
same; with a dynamic batch every op of the second form keeps it leading
(`import_onnx(dynamic_batch=True)` applies the rewrite first).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            values[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    return values


def _attribute(node: onnx.NodeProto, name: str, default: object = None) -> object:
    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def _axes(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> list[int] | None:
    """A Squeeze's axes (its attribute before opset 13, its constant input after)."""
    if len(node.input) > 1 and node.input[1]:
        value = constants.get(node.input[1])
        return None if value is None else [int(a) for a in np.asarray(value).reshape(-1)]
    axes = _attribute(node, "axes")
    return None if axes is None else [int(a) for a in axes]  # type: ignore[union-attr]


def sink_unbinds(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with every Transpose whose result is only unbound along axis 0 rewritten as the
    unbinding of its input followed by transposes (the module docstring); the model itself
    when there is none."""
    graph = model.graph
    opset = next((int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    constants = _constants(graph)
    users: dict[str, list[onnx.NodeProto]] = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            users[name].append(node)
    outputs = {o.name for o in graph.output}
    replaced: dict[int, list[onnx.NodeProto]] = {}  # id of an old node -> its replacement
    added: list[onnx.TensorProto] = []
    for transpose in graph.node:
        if transpose.op_type != "Transpose" or transpose.output[0] in outputs:
            continue
        perm = _attribute(transpose, "perm")
        if not perm or perm[0] == 0:  # type: ignore[index]
            continue
        perm = [int(p) for p in perm]  # type: ignore[union-attr]
        rest = [p - (p > perm[0]) for p in perm[1:]]
        plan = _unbinding(transpose, users, constants, outputs)
        if plan is None:
            continue
        axes_name = f"{transpose.output[0]}.unbind_axes"
        if opset >= 13 and any(pieces for _, pieces in plan):  # Squeeze's axes as an input
            added.append(numpy_helper.from_array(np.array([perm[0]], np.int64), axes_name))
        replaced[id(transpose)] = []
        source = transpose.input[0]
        for consumer, pieces in plan:
            nodes: list[onnx.NodeProto] = []
            if consumer.op_type == "Gather":
                piece = f"{consumer.output[0]}.unbound"
                nodes.append(helper.make_node("Gather", [source, consumer.input[1]], [piece],
                                              axis=perm[0]))
                nodes.append(helper.make_node("Transpose", [piece], [consumer.output[0]],
                                              perm=rest))
            else:
                split = helper.make_node("Split", [source, *consumer.input[1:]],
                                         [f"{o}.unbound" for o in consumer.output],
                                         axis=perm[0])
                for attribute in consumer.attribute:
                    if attribute.name != "axis":
                        split.attribute.append(attribute)
                nodes.append(split)
                for output, squeeze in zip(consumer.output, pieces, strict=True):
                    squeezed = f"{output}.squeezed"
                    nodes.append(  # Squeeze's axes: an attribute before opset 13, an input after
                        helper.make_node("Squeeze", [f"{output}.unbound"], [squeezed],
                                         axes=[perm[0]]) if opset < 13 else
                        helper.make_node("Squeeze", [f"{output}.unbound", axes_name],
                                         [squeezed]))
                    nodes.append(helper.make_node("Transpose", [squeezed], [squeeze.output[0]],
                                                  perm=rest))
                    replaced[id(squeeze)] = []
            replaced[id(consumer)] = nodes
    if not replaced:
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    del copy.graph.node[:]
    for node in graph.node:
        copy.graph.node.extend(replaced.get(id(node), [node]))
    copy.graph.initializer.extend(added)
    return copy


def _unbinding(transpose: onnx.NodeProto, users: dict[str, list[onnx.NodeProto]],
               constants: dict[str, np.ndarray], outputs: set[str]
               ) -> list[tuple[onnx.NodeProto, list[onnx.NodeProto]]] | None:
    """The consumers of `transpose`'s result, each a Gather of a scalar constant index along
    axis 0, or a Split along axis 0 whose pieces are each only Squeezed on axis 0 (with those
    Squeezes); None when any consumer is something else."""
    plan: list[tuple[onnx.NodeProto, list[onnx.NodeProto]]] = []
    consumers = users.get(transpose.output[0], [])
    if not consumers:
        return None
    for consumer in consumers:
        if consumer.input[0] != transpose.output[0] or int(_attribute(consumer, "axis", 0)) != 0:
            return None
        if consumer.op_type == "Gather":
            index = constants.get(consumer.input[1])
            if index is None or np.ndim(index) != 0:
                return None
            plan.append((consumer, []))
            continue
        if consumer.op_type != "Split":
            return None
        squeezes = []  # each piece squeezed on axis 0: pieces of one (else the model is invalid)
        for output in consumer.output:
            readers = users.get(output, [])
            if output in outputs or len(readers) != 1 or readers[0].op_type != "Squeeze" or \
                    _axes(readers[0], constants) != [0]:
                return None
            squeezes.append(readers[0])
        plan.append((consumer, squeezes))
    return plan
