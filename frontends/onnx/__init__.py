"""dlc's ONNX frontend: `import_onnx` turns an ONNX model into graph dialect IR (`@main`)."""

from dlc.frontends.onnx.errors import (
    DynamicInputError,
    NotConstantError,
    OnnxImportError,
    ShapeHintWarning,
)
from dlc.frontends.onnx.importer import MAX_OPSET, MIN_OPSET, import_onnx, load_model
from dlc.frontends.onnx.registry import OnnxOpConverter, register, supported_ops

__all__ = [
    "MAX_OPSET",
    "MIN_OPSET",
    "DynamicInputError",
    "NotConstantError",
    "OnnxImportError",
    "OnnxOpConverter",
    "ShapeHintWarning",
    "import_onnx",
    "load_model",
    "register",
    "supported_ops",
]
