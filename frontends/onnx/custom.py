"""The ONNX converter of user-defined ops: an ONNX node of a registered custom op → `graph.custom`.

Counterpart: ONNX Runtime's custom op domains, TVM's `relay.frontend.onnx` convert map extended
by the user. `register_custom_converter` is the public wrapper over the converter registry
(`registry.register`): it makes one `OnnxOpConverter` for the definition's op type and domain,
whose method for the definition's opset reads every attribute of the node.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.graph.custom import CustomOp, CustomOpDefinition, CustomOpError
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register, unregister
from onnx import helper


def _attribute_values(node: NodeContext, definition: CustomOpDefinition) -> dict[str, object]:
    values: dict[str, object] = {}
    for attribute in node.node.attribute:
        value = helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            value = value.decode()
        elif isinstance(value, list):
            value = [v.decode() if isinstance(v, bytes) else v for v in value]
        values[attribute.name] = value
    known = set(definition.attributes)
    if known and (unknown := sorted(set(values) - known)):
        raise node.error(f"unexpected attributes {unknown} (the op takes {sorted(known)})")
    missing = [k for k, v in definition.attributes.items() if v is None and k not in values]
    if missing:
        raise node.error(f"missing required attributes {missing}")
    return values


def register_custom_converter(definition: CustomOpDefinition) -> type[OnnxOpConverter]:
    """Registers the converter of `definition`'s ONNX op (from its opset on)."""

    def convert(cls: type[OnnxOpConverter], node: NodeContext) -> Sequence[ConvertedValue]:
        attrs = _attribute_values(node, definition)
        try:
            op = CustomOp(definition, node.inputs(), attrs)
        except CustomOpError as e:
            raise node.error(str(e)) from None
        return list(node.emit_op(op).results)

    name = f"Custom{definition.op_type}Converter"
    converter = type(name, (OnnxOpConverter,), {f"_impl_v{definition.opset}": classmethod(convert)})
    return register(definition.op_type, definition.domain)(converter)


def unregister_custom_converter(definition: CustomOpDefinition) -> None:
    """Removes the converter `register_custom_converter` made for `definition`."""
    unregister(definition.op_type, definition.domain)
