"""ONNX tensors in dlc: element types (builtin and NumPy) and TensorProto contents as arrays."""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph.attrs import BFLOAT16, from_numpy_dtype, to_numpy_dtype
from dlc.frontends.onnx.errors import OnnxImportError
from onnx import TensorProto, numpy_helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

_DTYPES: dict[int, np.dtype] = {
    TensorProto.FLOAT: np.dtype(np.float32),
    TensorProto.DOUBLE: np.dtype(np.float64),
    TensorProto.FLOAT16: np.dtype(np.float16),
    TensorProto.BFLOAT16: BFLOAT16,
    TensorProto.INT8: np.dtype(np.int8),
    TensorProto.INT16: np.dtype(np.int16),
    TensorProto.INT32: np.dtype(np.int32),
    TensorProto.INT64: np.dtype(np.int64),
    TensorProto.UINT8: np.dtype(np.uint8),
    TensorProto.UINT16: np.dtype(np.uint16),
    TensorProto.UINT32: np.dtype(np.uint32),
    TensorProto.UINT64: np.dtype(np.uint64),
    TensorProto.BOOL: np.dtype(np.bool_),
}
"""Every ONNX element type dlc imports, with its NumPy dtype. Booleans are `i1`, unsigned
integers `ui<N>`, signed ones signless `i<N>`, BFLOAT16 is `bf16` held as `ml_dtypes.bfloat16`
(see `dialects.graph.attrs.from_numpy_dtype`)."""


def onnx_type_name(elem_type: int) -> str:
    """`FLOAT`, `INT64`, ... for an ONNX element type number (for messages)."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"<unknown element type {elem_type}>"


def element_type(elem_type: int) -> Attribute | None:
    """The builtin element type of an ONNX element type, or None where dlc has none."""
    dtype = _DTYPES.get(elem_type)
    return None if dtype is None else from_numpy_dtype(dtype)


def numpy_dtype(elem_type: int) -> np.dtype | None:
    """The NumPy dtype of an ONNX element type, or None where dlc has none."""
    return _DTYPES.get(elem_type)


def numpy_dtype_of(element: Attribute) -> np.dtype:
    """The NumPy dtype of a builtin element type (`f32` -> float32, `i1` -> bool)."""
    try:
        return to_numpy_dtype(element)
    except ValueError as e:
        raise OnnxImportError(str(e)) from None


def tensor_type(elem_type: int, shape: tuple[int, ...], what: str) -> TensorType:
    """`tensor<shape x element>` of an ONNX element type; `what` names the value for errors."""
    element = element_type(elem_type)
    if element is None:
        raise OnnxImportError(
            f"{what} has element type {onnx_type_name(elem_type)}, which dlc does not import")
    return TensorType(element, shape)


def tensor_to_array(tensor: TensorProto, what: str) -> np.ndarray:
    """The contents of a TensorProto, read from its raw bytes without Python lists where stored so.

    `what` names the tensor in errors (`initializer 'w'`).
    """
    dtype = numpy_dtype(tensor.data_type)
    if dtype is None:
        raise OnnxImportError(f"{what} has element type {onnx_type_name(tensor.data_type)}, "
                              "which dlc does not import")
    if tensor.data_location == TensorProto.EXTERNAL:
        raise OnnxImportError(f"{what} keeps its data in an external file that was not loaded")
    shape = tuple(int(d) for d in tensor.dims)
    count = int(np.prod(shape, dtype=np.int64))
    if tensor.HasField("raw_data"):
        expected = count * dtype.itemsize
        if len(tensor.raw_data) != expected:
            raise OnnxImportError(
                f"{what} has {len(tensor.raw_data)} bytes of data, expected {expected} "
                f"for shape {list(shape)} of {onnx_type_name(tensor.data_type)}")
        array = np.frombuffer(tensor.raw_data, dtype=dtype.newbyteorder("<"))
        return array.astype(dtype, copy=False).reshape(shape)
    try:
        array = numpy_helper.to_array(tensor)
    except (ValueError, TypeError) as e:
        raise OnnxImportError(f"{what} cannot be read: {e}") from None
    if array.size != count:
        raise OnnxImportError(f"{what} has {array.size} values, expected {count} for shape "
                              f"{list(shape)}")
    return np.asarray(array, dtype=dtype).reshape(shape)


def array_type(array: np.ndarray) -> TensorType:
    """The tensor type of an array whose dtype dlc imports."""
    try:
        return TensorType(from_numpy_dtype(array.dtype), array.shape)
    except ValueError as e:
        raise OnnxImportError(str(e)) from None
