"""ONNX -> graph dialect: `import_onnx` builds a `func.func @main` over static tensors.

The counterpart of TVM's `relay.frontend.from_onnx` and of MLIR's `mlir-translate --import-*`.
Initializers and Constant nodes become graph constants holding raw bytes; a node whose inputs
are all known at import time is folded into a constant through the graph interpreter, so that
shape computations (Shape, Gather, Concat, ...) and weights made by ConstantOfShape never reach
the IR as ops.

Weights are read with `np.frombuffer` from the initializers' raw bytes and printed as the hex form
of `dense<"0x...">`, straight from the bytes (`graph.constant`'s printer); that is fast enough not
to need `dense_resource` blobs: ResNet-50 with 102 MB of random weights imports in 1.2 s and prints
(205 MB of text) in 0.5 s; `dlc-translate` writes it in 5.3 s, process start included.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from dlc.dialects.contracts import DIM_SYMBOLS_ATTR, ONNX_NAME_ATTR
from dlc.dialects.dim_symbols import (
    has_dynamic_leading_dim,
    has_runtime_extent,
    symbols_attr,
    verify_dim_symbols,
)
from dlc.dialects.graph.attrs import from_numpy_dtype
from dlc.dialects.graph.extents import ExtentError, extent_of, mark_valid_extents
from dlc.dialects.graph.ops import ReshapeOp
from dlc.dialects.graph.ops_tensor import ArangeOp, BroadcastToOp, GatherOp, ResizeOp
from dlc.dialects.shape_bounds import verify_shape_bounds
from dlc.frontends.onnx.batch_shape import (
    ELEMENTWISE_OPS,
    MOVING_OPS,
    Symbol,
    as_shape_array,
    carry_symbols,
    fold_symbolic,
    has_batch,
    symbolic_reshape_target,
    symbolic_shape,
)
from dlc.frontends.onnx.batch_shape import reshape_target as batch_reshape_target
from dlc.frontends.onnx.common import RUNTIME_TARGET_SUFFIX
from dlc.frontends.onnx.context import (
    NodeContext,
    describe_node,
    name_location,
    node_location,
    node_name,
)
from dlc.frontends.onnx.errors import DynamicInputError, OnnxImportError, ShapeHintWarning
from dlc.frontends.onnx.registry import ConvertedValue, Impl, lookup
from dlc.frontends.onnx.tensors import array_type, onnx_type_name, tensor_to_array, tensor_type
from dlc.frontends.onnx.unbind import sink_unbinds
from google.protobuf.message import DecodeError
from onnx.external_data_helper import load_external_data_for_model
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    LocationAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnknownLoc,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

MIN_OPSET = 7
"""The oldest default-domain opset dlc imports."""

MAX_OPSET = onnx.defs.onnx_opset_version()
"""The newest default-domain opset dlc imports: the installed onnx package's."""

InputShapes = Mapping[str, Sequence[int]]

_DEFAULT_DOMAINS = ("", "ai.onnx")

BATCH_POLYMORPHIC_OPS = frozenset({
    # elementwise and broadcasting
    "Abs", "Add", "Ceil", "Clip", "Div", "Elu", "Erf", "Exp", "Floor", "HardSigmoid",
    "HardSwish", "Identity", "LeakyRelu", "Log", "Max", "Min", "Mul", "Neg", "Pow",
    "Reciprocal", "Relu", "Round", "Sigmoid", "Sqrt", "Sub", "Tanh", "Dropout",
    # windows over the inner axes, per batch row
    "AveragePool", "BatchNormalization", "Conv", "GlobalAveragePool", "MaxPool",
    "ReduceMean",  # over the height and width: a global average pool
    # the batch in the rows (M), the weights static
    "Gemm", "MatMul",
    # layout ops that keep axis 0 (their graph ops verify that they do)
    "Concat", "Flatten", "Reshape", "Softmax", "Transpose", "Squeeze", "Unsqueeze",
    # elementwise selection and conversion (graph.cast, compare, where)
    "Cast", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Where",
    # over other axes than the batch (the graph ops refuse axis 0 of a dynamic batch)
    "ArgMax", "Gather", "GlobalMaxPool", "InstanceNormalization", "LayerNormalization",
    "LogSoftmax", "Pad", "Slice", "Split", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum",
    "ReduceSumSquare",
    # decomposed into the ops above
    "ConvTranspose", "Gelu", "Mean", "PRelu", "Sum",
    # a broadcast along other axes than the batch (graph.broadcast_to with a leading -1)
    "Expand",
    # interpolation along other axes (graph.resize: the batch's scale 1)
    "Resize", "Upsample",
    # static quantization (per tensor, or per channel along another axis; not
    # DynamicQuantizeLinear, whose scale is the whole batch's range)
    "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger",
    "MatMulInteger",
})
"""The ONNX ops a value with a dynamic batch (`import_onnx(dynamic_batch=True)`) may flow
through: each maps every batch row on its own, and its graph ops keep the leading dim. A
node of one of them whose conversion still fails on a batched value (a reduction or a gather
over axis 0, a pad of the batch) raises `DynamicInputError`, so that the driver falls back to
shapes per call."""

SHAPE_POLYMORPHIC_OPS = ELEMENTWISE_OPS | frozenset({  # elementwise and broadcasting, and
    # sliding windows, global pools and per-channel maps over runtime heights and widths
    "AveragePool", "BatchNormalization", "Conv", "ConvTranspose", "GlobalAveragePool",
    "MaxPool",
    "ReduceMean",  # over the height and width: a global average pool
    # along a static axis, or by constant scales
    "Concat", "Resize", "Upsample",
    # data movement over any dims; slices and splits of static axes; reshapes keeping each
    # runtime dim (their Shape folded at import time)
    "Transpose", "Slice", "Split", "Reshape",
    # products, normalizations and reductions over any axes but a runtime batch (a
    # transformer's runtime sequence, a channels-last image's runtime plane)
    "MatMul", "Softmax", "LogSoftmax", "LayerNormalization", "InstanceNormalization",
    "GlobalMaxPool", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
    "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Gelu",
    # an index along a static axis at each point of runtime others (a segmentation map)
    "ArgMax",
    # a table's rows at runtime positions (an embedding of a runtime sequence's tokens), the
    # positions themselves (Range from 0 by 1 to a runtime size: `graph.arange`), and unit
    # dims added or removed around runtime ones
    "Gather", "Range", "Unsqueeze", "Squeeze",
    # the elements of a table along one axis at runtime positions (BERT's token types; an
    # Expand to runtime sizes is `_runtime_expand`'s)
    "GatherElements",
})
"""The ONNX ops a value with runtime dims (`import_onnx(dynamic_shapes=True)`) may flow
through: their graph ops are shape-polymorphic (`GraphOp.DYNAMIC_DIMS`) and have compute
definitions over runtime extents. A value whose only dynamic dim is its leading one (a batch,
after a global pool) may also flow through the batch-polymorphic ops (`BATCH_POLYMORPHIC_OPS`:
a classifier's Flatten and Gemm). Any other node reading a value with dynamic dims, or one of
these whose conversion fails on it (a concat along a runtime axis, a resize to given sizes),
raises `DynamicInputError`, so that the driver falls back to shapes per call."""

BATCH_POLYMORPHIC_MICROSOFT_OPS = frozenset({
    "QLinearAdd", "QGemm", "QLinearGlobalAveragePool", "MatMulIntegerToFloat",
})
"""ONNX Runtime's `com.microsoft` ops that map each batch row on its own (not
DynamicQuantizeMatMul: its activations' scale is the whole batch's range)."""

BATCH_TARGET_INPUTS = {"Reshape": 1, "Expand": 1, "ConstantOfShape": 0, "Resize": 3}
"""The ops whose shape input may hold the dynamic batch's size (`BATCH`, first): the importer
gives their converters -1 there (`_with_batch_target`), which keep the dynamic leading dim (a
Reshape's target, a broadcast to the batch: Hugging Face's `x.expand(batch, ...)`, a mask made
by ConstantOfShape, the sizes of torchvision's `F.interpolate(x, size=...)`)."""


def import_onnx(
    model: onnx.ModelProto | str | Path, input_shapes: InputShapes | None = None,
    *, dynamic_batch: bool = False, dynamic_shapes: bool = False,
) -> ModuleOp:
    """Import an ONNX model as a module holding `func.func @main` over graph dialect ops.

    Args:
        model: a ModelProto, or the path of a `.onnx` file.
        input_shapes: static shapes for graph inputs, by name; needed for inputs whose declared
            shape has dynamic dimensions, and checked against the declared shape otherwise.
        dynamic_batch: keep a dynamic leading dim as `?` (the batch): an input not in
            `input_shapes` whose declared shape is a named `dim_param` followed by static dims
            keeps it, named in `dlc.dim_symbols`; all such inputs must share the symbol, and
            every node that reads a batched value must be batch-polymorphic
            (`BATCH_POLYMORPHIC_OPS`, and its graph op's verifier), else `DynamicInputError`.
        dynamic_shapes: keep every named dynamic dim (`dim_param`) of an input not in
            `input_shapes` as `?`, named in `dlc.dim_symbols` (inputs sharing a name share the
            size); every node that reads a value with a dynamic dim must be shape-polymorphic
            (`SHAPE_POLYMORPHIC_OPS`, and its graph op's verifier), else `DynamicInputError`.
            Not with `dynamic_batch`.

    Raises:
        OnnxImportError: the model cannot be read, uses ops or opsets dlc does not convert, has
            dynamic shapes not fixed by `input_shapes`, or is malformed; the message names the
            node and op (all unsupported ops are listed in one error).
    """
    assert not (dynamic_batch and dynamic_shapes), "one way of keeping dynamic dims"
    if isinstance(model, onnx.ModelProto):
        return _Importer(model, dict(input_shapes or {}), dynamic_batch=dynamic_batch,
                         dynamic_shapes=dynamic_shapes).run()
    proto, serialized = _read_model(model)
    return _Importer(proto, dict(input_shapes or {}), serialized,
                     dynamic_batch=dynamic_batch, dynamic_shapes=dynamic_shapes).run()


def load_model(path: str | Path) -> onnx.ModelProto:
    """Read a `.onnx` file (and its external data); any failure is an `OnnxImportError`."""
    return _read_model(path)[0]


def _read_model(path: str | Path) -> tuple[onnx.ModelProto, bytes | None]:
    """`load_model`, also returning the file's bytes when they are the whole model (no
    external data): the checker reads them instead of a re-serialization of the model."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise OnnxImportError(f"cannot read ONNX model '{path}': {e.strerror}") from None
    model = parse_model(data, str(path))
    if not _has_external_data(model.graph):
        return model, data
    try:
        load_external_data_for_model(model, str(path.parent))
    except (OSError, ValueError, onnx.checker.ValidationError) as e:
        raise OnnxImportError(f"cannot read the external data of '{path}': {e}") from None
    return model, None


def _has_external_data(graph: onnx.GraphProto) -> bool:
    """Whether a tensor of `graph` (initializers, node attributes, subgraphs) keeps its data
    in another file."""
    external = onnx.TensorProto.EXTERNAL
    if any(t.data_location == external for t in graph.initializer):
        return True
    for node in graph.node:
        for attr in node.attribute:
            if attr.t.data_location == external or any(
                t.data_location == external for t in attr.tensors
            ):
                return True
            if any(_has_external_data(g) for g in (attr.g, *attr.graphs)):
                return True
    return False


def parse_model(data: bytes, source: str) -> onnx.ModelProto:
    """Parse the bytes of a `.onnx` file; `source` names it in errors."""
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, ValueError) as e:
        raise OnnxImportError(f"cannot parse '{source}' as an ONNX model: {e}") from None
    if not model.HasField("graph"):
        raise OnnxImportError(f"'{source}' is not an ONNX model: it has no graph")
    return model


_INVALID_NAME_CHAR = re.compile(r"[^\w$.-]")


def ssa_name(onnx_name: str) -> str:
    """An SSA name hint for an ONNX value name (`gpu_0/conv1` -> `gpu_0_conv1`)."""
    name = _INVALID_NAME_CHAR.sub("_", onnx_name)
    return name if re.match(r"[A-Za-z_$.-]", name) else f"v{name}"


@dataclass
class _Entry:
    """An ONNX value during import: its type, its SSA value once it has one, its contents if
    known at import time, and where it came from."""

    type: TensorType
    location: LocationAttr
    ssa: SSAValue | None = None
    array: np.ndarray | None = None


class _FunctionScope:
    """The body of `@main`: every ONNX value by name; constants materialized on first use.

    `importer` converts the subgraphs of control-flow nodes (`subgraph`)."""

    in_region = False
    """Whether this scope is a control-flow node's subgraph (whose shapes cannot be specialized
    per call: they would have to be fixed for every iteration)."""

    def __init__(self, block: Block, importer: _Importer | None = None) -> None:
        self.block = block
        self.importer = importer
        self.entries: dict[str, _Entry] = {}
        self.symbols: dict[str, tuple[Symbol | None, ...]] = {}
        """The `Symbol` of each runtime dim of a value (`dynamic_shapes`), where known."""
        self.dropped_outputs: dict[str, str] = {}
        self.inserted: list[Operation] = []

    def subgraph(self, graph: onnx.GraphProto, arg_types: Sequence[TensorType]
                 ) -> tuple[Block, list[SSAValue]]:
        """Converts `graph` (an If branch, a Loop or Scan body) into a new block whose arguments
        have `arg_types` (one per graph input); its nodes may use this scope's values by name
        (captures). Returns the block, without terminator, and the graph's output values."""
        assert self.importer is not None, "only an importer's scopes convert subgraphs"
        return self.importer.convert_subgraph(graph, self, arg_types)

    def entry(self, name: str) -> _Entry:
        entry = self.entries.get(name)
        if entry is None:
            raise OnnxImportError(self.dropped_outputs.get(
                name, f"value '{name}' is used before any node, initializer or input defines it"))
        return entry

    def value(self, name: str) -> SSAValue:
        entry = self.entry(name)
        if entry.ssa is None:
            assert entry.array is not None
            if has_batch(entry.array):
                raise DynamicInputError(
                    f"'{name}' ({entry.array.tolist()}) holds a size known only at run time "
                    "(the dynamic batch's or a runtime dim's) and is used as a tensor: compile "
                    "it for static shapes",
                    name)
            entry.ssa = self._materialize(entry.array, entry.location)
            entry.ssa.name_hint = ssa_name(name)
        return entry.ssa

    def array(self, name: str) -> np.ndarray | None:
        return self.entry(name).array

    def type_of(self, name: str) -> TensorType:
        return self.entry(name).type

    def insert(self, op: Operation) -> None:
        self.block.add_op(op)
        self.inserted.append(op)

    def constant(self, array: np.ndarray) -> SSAValue:
        return self._materialize(array, UnknownLoc())

    def batch_value(self) -> SSAValue | None:
        return next((arg for arg in self.block.args if has_dynamic_leading_dim(arg.type)), None)

    def _materialize(self, array: np.ndarray, location: LocationAttr) -> SSAValue:
        op = _constant_op(array)
        op.location = location
        self.insert(op)
        return op.results[0]


class _SubgraphScope(_FunctionScope):
    """The block of a subgraph: its own values by name first, then its enclosing scope's (an
    outer value is used directly in the region, and an outer constant is materialized in the
    outer block, before the region op)."""

    in_region = True

    def __init__(self, block: Block, outer: _FunctionScope) -> None:
        super().__init__(block, outer.importer)
        self.outer = outer
        self.dropped_outputs = outer.dropped_outputs

    def entry(self, name: str) -> _Entry:
        if name in self.entries:
            return self.entries[name]
        return self.outer.entry(name)

    def value(self, name: str) -> SSAValue:
        if name in self.entries:
            return super().value(name)
        return self.outer.value(name)

    def batch_value(self) -> SSAValue | None:
        return self.outer.batch_value()


class _FoldScope(_FunctionScope):
    """A scratch block in which a node whose inputs are all constants is converted, to be
    evaluated by the graph interpreter and replaced by constants."""

    def __init__(self, outer: _FunctionScope) -> None:
        super().__init__(Block())
        self.outer = outer
        self.cache: dict[str, SSAValue] = {}
        self.known: dict[SSAValue, np.ndarray] = {}

    def entry(self, name: str) -> _Entry:
        return self.outer.entry(name)

    def batch_value(self) -> SSAValue | None:
        return self.outer.batch_value()

    def value(self, name: str) -> SSAValue:
        if name not in self.cache:
            array = self.entry(name).array
            assert array is not None
            self.cache[name] = self._materialize(array, UnknownLoc())
            self.known[self.cache[name]] = array
        return self.cache[name]


class _Importer:
    """One import: checks the model, then converts its nodes in order into `@main`."""

    def __init__(self, model: onnx.ModelProto, input_shapes: dict[str, Sequence[int]],
                 serialized: bytes | None = None, *, dynamic_batch: bool = False,
                 dynamic_shapes: bool = False) -> None:
        self.model = model
        self.dynamic_batch = dynamic_batch
        self.dynamic_shapes = dynamic_shapes
        self.input_symbols: dict[str, tuple[str, ...]] = {}
        """The `dim_param` of each dynamic dim of each input kept as `?` (`dynamic_shapes`)."""
        self.dim_symbols: dict[str, Symbol] = {}
        """The `Symbol` of each `dim_param` kept (`dynamic_shapes`)."""
        self.batch_symbol: str | None = None
        """The `dim_param` of the dynamic leading dims kept as `?` (`dynamic_batch`)."""
        self.serialized = serialized
        self.graph = model.graph
        self.input_shapes = input_shapes
        self.opsets: dict[str, int] = {}
        self.block = Block()
        self.scope = _FunctionScope(self.block, self)
        self.arg_names: list[str] = []

    def run(self) -> ModuleOp:
        self._read_opsets()
        self._check_supported()
        self._check_model()
        if self.dynamic_batch:  # an unbinding of a transpose that moves the batch, reordered
            self.model = sink_unbinds(self.model)
            self.graph = self.model.graph
        self._read_initializers()
        self._read_inputs()
        for node in self.graph.node:
            self._convert(node, self.scope)
        return self._finish()

    # ---------------------------------------------------------------- checks before converting

    def _read_opsets(self) -> None:
        for entry in self.model.opset_import:
            domain = "" if entry.domain in _DEFAULT_DOMAINS else entry.domain
            self.opsets[domain] = int(entry.version)
        if "" not in self.opsets:
            raise OnnxImportError("model declares no opset for the default domain 'ai.onnx'")
        version = self.opsets[""]
        if not MIN_OPSET <= version <= MAX_OPSET:
            raise OnnxImportError(
                f"model opset {version} (domain 'ai.onnx') is out of range: dlc imports opsets "
                f"{MIN_OPSET} to {MAX_OPSET}")

    def _check_supported(self) -> None:
        """Raise one error listing every node whose op (at the model's opset) dlc cannot convert."""
        problems: list[str] = []
        for node in _nodes_with_subgraphs(self.graph):
            domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
            opset = self.opsets.get(domain)
            where = f"{node.op_type} (domain '{domain or 'ai.onnx'}', " + (
                f"opset {opset})" if opset else "no opset declared)")
            converter = lookup(node.op_type, domain)
            if converter is None:
                problems.append(f"  {where} in {node_name(node)}")
            elif opset is None or converter.impl_for(opset) is None:
                first = converter.versions()[0]
                problems.append(f"  {where} in {node_name(node)}: dlc converts it from opset "
                                f"{first}")
        if problems:
            plural = "s" if len(problems) > 1 else ""
            raise OnnxImportError(f"unsupported ONNX op{plural} in {len(problems)} node{plural}:\n"
                                  + "\n".join(problems))

    def _check_model(self) -> None:
        data = self.serialized
        if data is None:
            if self.model.ByteSize() >= 2**31:
                return  # the checker cannot take protos over 2 GB in memory
            data = self.model.SerializeToString()
        if len(data) >= 2**31:
            return
        if _shapeless_graph_values(self.graph):
            data = _with_unknown_rank_shapes(self.model).SerializeToString()
        try:
            onnx.checker.check_model(data)
        except onnx.checker.ValidationError as e:
            raise OnnxImportError(f"invalid ONNX model: {_checker_message(str(e))}") from None
        except UnicodeDecodeError as e:
            raise OnnxImportError(f"invalid ONNX model: a text field is not UTF-8 ({e.reason} at "
                                  f"byte {e.start})") from None

    # ---------------------------------------------------------------- values that exist up front

    def _read_initializers(self) -> None:
        if len(self.graph.sparse_initializer):
            raise OnnxImportError("sparse initializers are not supported: "
                                  f"'{self.graph.sparse_initializer[0].values.name}'")
        for init in self.graph.initializer:
            array = tensor_to_array(init, f"initializer '{init.name}'")
            self.scope.entries[init.name] = _Entry(
                array_type(array), name_location(init.name), array=array)

    def _read_inputs(self) -> None:
        names = [i.name for i in self.graph.input if i.name not in self.scope.entries]
        unknown = sorted(set(self.input_shapes) - set(names))
        if unknown:
            raise OnnxImportError(f"input shape given for '{unknown[0]}', which is not a graph "
                                  f"input; the inputs are: {', '.join(names) or '(none)'}")
        for value_info in self.graph.input:
            if value_info.name in self.scope.entries:
                continue  # an initializer listed as an input (IR < 4): a constant
            ty = self._input_type(value_info)
            arg = self.block.insert_arg(ty, len(self.block.args))
            arg.name_hint = ssa_name(value_info.name)
            self.arg_names.append(value_info.name)
            self.scope.entries[value_info.name] = _Entry(ty, UnknownLoc(), ssa=arg)
            if value_info.name in self.input_symbols:  # inputs sharing a dim_param share it
                self.scope.symbols[value_info.name] = tuple(
                    self.dim_symbols.setdefault(param, Symbol(param)) if param else None
                    for param in self.input_symbols[value_info.name])

    def _first_user(self, name: str) -> str:
        for node in self.graph.node:
            if name in node.input:
                return f", first used by {describe_node(node)}"
        return ""

    def _input_type(self, value_info: onnx.ValueInfoProto) -> TensorType:
        name = value_info.name
        if value_info.type.WhichOneof("value") != "tensor_type":
            kind = (value_info.type.WhichOneof("value") or "no").removesuffix("_type")
            raise OnnxImportError(f"graph input '{name}' has {kind} type; dlc imports tensors "
                                  "only")
        tensor = value_info.type.tensor_type
        declared: list[int | str] | None = None
        if tensor.HasField("shape"):
            declared = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0
                        else (d.dim_param or "?") for d in tensor.shape.dim]
        given = self.input_shapes.get(name)
        if given is not None:
            shape = self._check_given_shape(name, declared, given)
        elif self.dynamic_batch and self._keeps_batch(name, declared):
            assert declared is not None
            shape = (DYNAMIC_INDEX, *(int(d) for d in declared[1:]))
        elif self.dynamic_shapes and declared is not None and all(d != "?" for d in declared):
            shape = tuple(DYNAMIC_INDEX if isinstance(d, str) else int(d) for d in declared)
            self.input_symbols[name] = tuple(d if isinstance(d, str) else "" for d in declared)
        elif declared is None or any(isinstance(d, str) for d in declared):
            raise self._dynamic_input_error(name, declared)
        else:
            shape = tuple(int(d) for d in declared)
        return tensor_type(tensor.elem_type, shape, f"graph input '{name}'")

    def _keeps_batch(self, name: str, declared: list[int | str] | None) -> bool:
        """Whether `declared` is a named leading `dim_param` and static dims (`dynamic_batch`);
        a second symbol is an error, since the inputs share one batch."""
        if not declared or not isinstance(declared[0], str) or declared[0] == "?":
            return False
        if any(isinstance(d, str) for d in declared[1:]):
            return False
        if self.batch_symbol is None:
            self.batch_symbol = declared[0]
        elif declared[0] != self.batch_symbol:
            raise DynamicInputError(
                f"graph input '{name}' has leading dim '{declared[0]}', but the batch of the "
                f"other inputs is '{self.batch_symbol}': a dynamic batch is one symbol", name)
        return True

    def _check_given_shape(self, name: str, declared: list[int | str] | None,
                           given: Sequence[int]) -> tuple[int, ...]:
        shape = tuple(int(d) for d in given)
        text = "x".join(map(str, shape))
        if any(d <= 0 for d in shape):
            raise OnnxImportError(f"input shape {text} for '{name}' must have positive dimensions")
        if declared is None:
            return shape
        if len(declared) != len(shape):
            raise OnnxImportError(f"input shape {text} for '{name}' has rank {len(shape)}, but "
                                  f"the model declares rank {len(declared)}")
        for axis, (want, got) in enumerate(zip(declared, shape, strict=True)):
            if isinstance(want, int) and want != got:
                raise OnnxImportError(f"input shape {text} for '{name}' has {got} at dimension "
                                      f"{axis}, but the model declares {want}")
        return shape

    def _dynamic_input_error(self, name: str, declared: list[int | str] | None
                             ) -> DynamicInputError:
        user = self._first_user(name)
        if declared is None:
            return DynamicInputError(
                f"graph input '{name}' has no declared shape{user}; dlc needs static shapes: "
                f"give one with --input-shape {name}=<d0>x<d1>x... (input_shapes={{'{name}': "
                "(...)}} from Python)", name)
        axis = next(i for i, d in enumerate(declared) if isinstance(d, str))
        example = "x".join(str(d) if isinstance(d, int) else "1" for d in declared)
        shown = "x".join(str(d) for d in declared)
        as_tuple = str(tuple(int(d) for d in example.split("x")))
        return DynamicInputError(
            f"graph input '{name}' has dynamic dimension {axis} ('{declared[axis]}') in shape "
            f"{shown}{user}; dlc needs static shapes: give one with --input-shape "
            f"{name}={example} (input_shapes={{'{name}': {as_tuple}}} from Python)", name)

    # ---------------------------------------------------------------- nodes

    def convert_subgraph(self, graph: onnx.GraphProto, outer: _FunctionScope,
                         arg_types: Sequence[TensorType]) -> tuple[Block, list[SSAValue]]:
        """See `_FunctionScope.subgraph`."""
        if len(graph.input) != len(arg_types):
            raise OnnxImportError(f"subgraph '{graph.name}' expected {len(arg_types)} inputs, "
                                  f"found {len(graph.input)}")
        block = Block(arg_types=arg_types)
        scope = _SubgraphScope(block, outer)
        for init in graph.initializer:
            array = tensor_to_array(init, f"initializer '{init.name}'")
            scope.entries[init.name] = _Entry(array_type(array), name_location(init.name),
                                              array=array)
        for value_info, arg in zip(graph.input, block.args, strict=True):
            arg.name_hint = ssa_name(value_info.name)
            assert isinstance(arg.type, TensorType)
            scope.entries[value_info.name] = _Entry(arg.type, UnknownLoc(), ssa=arg)
        for node in graph.node:
            self._convert(node, scope)
        return block, [scope.value(output.name) for output in graph.output]

    def _convert(self, node: onnx.NodeProto, scope: _FunctionScope) -> None:
        domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
        opset = self.opsets[domain]
        converter = lookup(node.op_type, domain)
        assert converter is not None
        impl = converter.impl_for(opset)
        assert impl is not None
        if self.dynamic_batch and node.domain in _DEFAULT_DOMAINS:
            folded = self._fold_batch_shape(node, scope, opset)
            if folded is not None:
                self._record(scope, node, [folded])
                return
            node, to_batch = self._with_batch_target(node, scope, opset)
        else:
            to_batch = False
        given = [name for name in node.input if name]
        batched = self._batched_input(scope, given) if self.dynamic_batch else None
        if batched is not None:
            self._check_batch_polymorphic(node, scope, batched, opset)
        elif self.dynamic_shapes:
            checked = self._check_shape_polymorphic(node, scope, opset, given)
            if checked is None:
                return
            node, batched = checked
        try:
            if converter.fold_constant_inputs and not to_batch and all(
                    scope.entry(n).array is not None for n in given):
                outputs = self._fold(scope, node, opset, impl)
            else:
                outputs = self._convert_in(scope, node, opset, impl)
        except DynamicInputError:
            raise
        except (OnnxImportError, DiagnosticException, VerifyException) as e:
            if batched is not None and self.dynamic_shapes:
                raise self._not_shape_polymorphic(node, scope, batched, opset, str(e)) from None
            if batched is not None:
                raise self._not_batch_polymorphic(node, scope, batched, opset, str(e)) from None
            if isinstance(e, OnnxImportError) and str(e).startswith(describe_node(node, opset)):
                raise e from None
            raise OnnxImportError(f"{describe_node(node, opset)}: {e}") from None
        except Exception as e:  # noqa: BLE001 - a converter bug must still name the node
            raise OnnxImportError(f"{describe_node(node, opset)}: internal error in dlc's "
                                  f"converter: {type(e).__name__}: {e}") from None
        if batched is not None and not self.dynamic_shapes and any(
                has_runtime_extent(out.type) for out in outputs if isinstance(out, SSAValue)):
            raise self._not_batch_polymorphic(node, scope, batched, opset,
                                              "its result's batch would not be its leading dim")
        self._record(scope, node, outputs)
        if self.dynamic_shapes:
            carry_symbols(node, scope.symbols, {
                name: scope.entry(name).type.get_shape() for name in (*given, *node.output)
                if name and name in scope.entries and isinstance(scope.entry(name).type,
                                                                 TensorType)})

    def _fold_batch_shape(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int
                          ) -> np.ndarray | None:
        """`node` folded on the dynamic batch's shape (`batch_shape`): a Shape of a batched
        value, or an op moving the elements of a shape array that holds `BATCH`; None for
        any other node. A node that would compute with `BATCH` is a `DynamicInputError`."""
        if node.op_type == "Shape" and node.input and node.input[0]:
            type = scope.entry(node.input[0]).type
            if isinstance(type, TensorType) and has_dynamic_leading_dim(type):
                attrs = _attributes(node)
                end = attrs.get("end")
                return symbolic_shape(type.get_shape(), int(attrs.get("start", 0)),
                                      None if end is None else int(end))
        symbolic = [name for name in node.input if name and has_batch(scope.array(name))]
        target = BATCH_TARGET_INPUTS.get(node.op_type)
        if not symbolic or (target is not None and len(node.input) > target
                            and symbolic == [node.input[target]]):
            return None  # none, or only the shape input: `_with_batch_target`'s
        folded = _fold_moving(node, scope)
        if folded is None:
            raise self._uses_the_batch(node, scope, symbolic[0], opset)
        return folded

    def _runtime_dims(self, scope: _FunctionScope, name: str) -> tuple[Symbol | None, ...]:
        """The symbols of the runtime dims of `name` (a fresh one for each not known)."""
        shape = scope.entry(name).type.get_shape()
        known = scope.symbols.get(name)
        if known is None or len(known) != len(shape):
            known = (None,) * len(shape)
        dims = tuple(symbol if symbol is not None or dim >= 0 else Symbol(f"{name}[{axis}]")
                     for axis, (dim, symbol) in enumerate(zip(shape, known, strict=True)))
        scope.symbols[name] = dims
        return dims

    def _fold_runtime_shape(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int
                            ) -> np.ndarray | None:
        """`node` folded at import time on runtime sizes (`dynamic_shapes`): a Shape of a
        value with runtime dims (their `Symbol`s), or an op moving the elements of a shape
        array holding symbols (`fold_symbolic`); None for any other node. A node computing
        with a symbol is a `DynamicInputError`."""
        if node.op_type == "Shape" and node.input and node.input[0]:
            type = scope.entry(node.input[0]).type
            if isinstance(type, TensorType) and any(d < 0 for d in type.get_shape()):
                attrs = _attributes(node)
                end = attrs.get("end")
                elements = [symbol if symbol is not None else dim for dim, symbol in zip(
                    type.get_shape(), self._runtime_dims(scope, node.input[0]), strict=True)]
                return as_shape_array(elements[slice(int(attrs.get("start", 0)),
                                                     None if end is None else int(end))])
        symbolic = [name for name in node.input if name and has_batch(scope.array(name))]
        if not symbolic or (node.op_type == "Reshape" and symbolic == node.input[1:2]):
            return None
        folded = _fold_moving(node, scope)
        if folded is None:
            raise DynamicInputError(
                f"{describe_node(node, opset)} computes with '{symbolic[0]}' "
                f"({scope.array(symbolic[0]).tolist()}), which holds runtime sizes (only "  # type: ignore[union-attr]
                "moved into a Reshape's target, each kept, are they taken): compile it for "
                "static shapes", symbolic[0])
        return folded

    def _check_shape_polymorphic(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int,
                                 given: list[str]) -> tuple[onnx.NodeProto, str | None] | None:
        """`node` over runtime shapes (`dynamic_shapes`): None when it was converted here
        (positions up to a runtime size: `_runtime_positions`) or folded on runtime sizes
        (`_fold_runtime_shape`); else the node to convert (a Reshape's target resolved) and
        the input with runtime dims it reads (None: none), which its op must take
        (`SHAPE_POLYMORPHIC_OPS`; a `DynamicInputError` otherwise)."""
        sized = self._runtime_positions(node, scope, opset) or \
            self._runtime_expand(node, scope, opset) or self._runtime_resize(node, scope, opset)
        if sized is not None:
            self._record(scope, node, sized)
            return None
        folded = self._fold_runtime_shape(node, scope, opset)
        if folded is not None:
            self._record(scope, node, [folded])
            return None
        merged = self._runtime_merge(node, scope, opset)
        if merged is not None:
            self._record(scope, node, merged)
            return None
        node = self._with_runtime_target(node, scope, opset)
        batched = self._dynamic_input(scope, given)
        allowed = SHAPE_POLYMORPHIC_OPS if batched is None or self._dynamic_input(
            scope, given, after_leading=True) else SHAPE_POLYMORPHIC_OPS | BATCH_POLYMORPHIC_OPS
        if batched is not None and not (node.op_type in allowed
                                        and node.domain in _DEFAULT_DOMAINS):
            raise self._not_shape_polymorphic(node, scope, batched, opset)
        span = _dilated_span(node, scope) if node.op_type == "Conv" else 1
        if batched is not None and span > MAX_RUNTIME_DILATED_SPAN:
            raise self._not_shape_polymorphic(
                node, scope, batched, opset,
                f"a dilated conv spanning {span} pixels: over the planes it "
                "meets most of its taps read padding, which only a compile for static shapes "
                "splits off (graph-conv-split-bands)")
        return node, batched

    def _sized_by(self, scope: _FunctionScope, symbol: object) -> tuple[SSAValue, int] | None:
        """A value one of whose dims is the runtime size `symbol`, and that dim."""
        for name, dims in scope.symbols.items():
            if symbol in dims and name in scope.entries and scope.entry(name).array is None:
                return scope.value(name), dims.index(symbol)
        return None

    def _runtime_positions(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int
                           ) -> list[ConvertedValue] | None:
        """`node` over positions up to a runtime size (`dynamic_shapes`): a Range from 0 by 1
        to a symbol is `graph.arange` along a dim of that size (a transformer's positions);
        a Slice of a value without symbols from 0 by 1 to symbols, on the axes they end, is
        a `graph.gather` of it at such positions along each (a causal mask's first S rows
        and columns: the gather reads inside the axis where its size checks hold). None for
        any other node."""
        arrays = [scope.array(name) if name else None for name in node.input]
        context = NodeContext(node, opset, scope)
        if node.op_type == "Gather" and len(node.input) == 2 and arrays[1] is None:
            self._bound_positions(scope, node, opset)
            return None
        if node.op_type == "Range" and len(arrays) == 3 and all(a is not None for a in arrays):
            start, limit, delta = (np.asarray(a).reshape(-1) for a in arrays)  # type: ignore[arg-type]
            scope.inserted = []
            if not (start.size == limit.size == delta.size == 1 and has_batch(limit)
                    and not has_batch(start) and not has_batch(delta)
                    and start[0] == 0 and delta[0] == 1):
                return None
            sized = self._sized_by(scope, limit[0])
            if sized is None:
                return None
            scope.symbols[node.output[0]] = (limit[0],)
            return self._emitted(scope, [context.emit(
                ArangeOp(sized[0], sized[1], from_numpy_dtype(start.dtype)))])
        if node.op_type != "Slice" or len(arrays) < 3 or not node.input[0] or \
                has_batch(arrays[0]) or not has_batch(arrays[2]):
            return None
        if any(a is None or has_batch(a) for a in (arrays[1], *arrays[3:5])):
            return None
        starts, ends = np.asarray(arrays[1]).reshape(-1), np.asarray(arrays[2]).reshape(-1)
        rank = len(scope.type_of(node.input[0]).get_shape())
        axes = (np.asarray(arrays[3]).reshape(-1) if len(arrays) > 3 and arrays[3] is not None
                else np.arange(len(ends)))
        steps = (np.asarray(arrays[4]).reshape(-1) if len(arrays) > 4 and arrays[4] is not None
                 else np.ones(len(ends), np.int64))
        if not (len(starts) == len(ends) == len(axes) == len(steps)) or any(
                int(v) != 0 for v in starts) or any(int(v) != 1 for v in steps):
            return None
        sizes = [self._sized_by(scope, end) if isinstance(end, Symbol) else None
                 for end in ends]
        if any(sized is None for sized in sizes) or len({int(a) % rank for a in axes}) < len(axes):
            return None
        value = context.input(0)
        symbols = list(scope.symbols.get(node.input[0], (None,) * rank))
        scope.inserted = []
        data = scope.type_of(node.input[0]).get_shape()
        for axis, end, sized in zip(axes, ends, sizes, strict=True):
            assert sized is not None
            positions = context.emit(ArangeOp(*sized))
            if data[int(axis) % rank] >= 0:
                positions.owner.limit_bound(data[int(axis) % rank])  # type: ignore[union-attr]
            value = context.emit(GatherOp(value, positions, int(axis) % rank))
            symbols[int(axis) % rank] = end
        scope.symbols[node.output[0]] = tuple(symbols)
        return self._emitted(scope, [value])

    @staticmethod
    def _sizing_value(scope: _FunctionScope, target: list[object],
                      carried: Sequence[object] | None = None) -> str | None:
        """A graph value of `target`'s rank whose dims carry `target`'s symbols where it has
        them (`scope.symbols`), which sizes an op to `target` at run time. With `carried`
        (the symbols an operand broadcast to `target` has, aligned with its end), one of any
        rank up to it, aligned likewise, carrying at least the symbols that operand lacks
        (the first found that carries the most: `graph.broadcast_to` takes each size from
        it where it has it)."""
        runtime = [d for d, size in enumerate(target) if isinstance(size, Symbol)]
        if carried is None:
            return next((name for name, dims in scope.symbols.items()
                         if len(dims) == len(target) and name in scope.entries
                         and scope.entry(name).array is None
                         and all(dims[d] is target[d] for d in runtime)), None)
        have = [None] * (len(target) - len(carried)) + list(carried)
        best: tuple[int, str] | None = None
        for name, dims in scope.symbols.items():
            offset = len(target) - len(dims)
            if offset < 0 or name not in scope.entries or scope.entry(name).array is not None:
                continue
            shape = scope.type_of(name).get_shape()
            ours = [d for d in runtime if d >= offset and dims[d - offset] is target[d]]
            if any(d not in ours and have[d] is not target[d] for d in runtime) or any(
                    d >= offset and shape[d - offset] < 0 and d not in ours for d in runtime):
                continue  # a size it lacks, or another runtime size where the target has one
            if best is None or len(ours) > best[0]:
                best = (len(ours), name)
        return None if best is None else best[1]

    def _runtime_resize(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int
                        ) -> list[ConvertedValue] | None:
        """A Resize of a graph value to `sizes` holding runtime sizes (`dynamic_shapes`: a
        segmentation model's pooled features and logits resized to a feature map's or the
        input's height and width): a `graph.resize` sized by a value carrying those symbols
        (`_sizing_value`), its other axes kept. None for any other node (or another form:
        scales, a crop, `axes`, a size against a static dim)."""
        if node.op_type != "Resize" or opset < 11 or len(node.input) < 4 or \
                not node.input[3] or scope.array(node.input[0]) is not None:
            return None
        sizes = scope.array(node.input[3])
        attrs = _attributes(node)
        if sizes is None or not has_batch(sizes) or "axes" in attrs or \
                attrs.get("keep_aspect_ratio_policy", b"stretch") != b"stretch":
            return None
        target = list(np.asarray(sizes).reshape(-1))
        source = list(scope.type_of(node.input[0]).get_shape())
        like = self._sizing_value(scope, target)
        if like is None or len(target) != len(source) or any(
                not isinstance(size, Symbol) and int(size) != dim  # type: ignore[call-overload]
                for size, dim in zip(target, source, strict=True)):
            return None
        text = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
        context = NodeContext(node, opset, scope)
        scope.inserted = []
        try:
            result = context.emit(ResizeOp(
                context.input(0), [-1 if isinstance(size, Symbol) else int(size)  # type: ignore[call-overload]
                                   for size in target], [1.0] * len(target),
                like=scope.value(like), mode=text.get("mode", "nearest"),
                coordinate_transformation_mode=text.get("coordinate_transformation_mode",
                                                        "half_pixel"),
                nearest_mode=text.get("nearest_mode", "round_prefer_floor"),
                cubic_coeff_a=float(text.get("cubic_coeff_a", -0.75)),
                exclude_outside=bool(text.get("exclude_outside", 0)),
                antialias=bool(text.get("antialias", 0))))
        except VerifyException:
            return None  # a mode the runtime sizes do not take: the polymorphic check refuses
        scope.symbols[node.output[0]] = tuple(
            size if isinstance(size, Symbol) else None for size in target)
        return self._emitted(scope, [result])

    def _runtime_expand(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int
                        ) -> list[ConvertedValue] | None:
        """An Expand of a value to a target holding runtime sizes (`dynamic_shapes`: BERT's
        token types expanded to its input's `N x S`), or a ConstantOfShape of such a target
        (a mask of ones over the input's `N x S`): a `graph.broadcast_to` of the value (of the
        one element) sized by a value of the target's rank with those sizes at the same dims
        (`scope.symbols`). None for any other node, or where no value has them or the two-way
        broadcast would move a runtime size."""
        constant = node.op_type == "ConstantOfShape" and len(node.input) == 1
        if not constant and (node.op_type != "Expand" or len(node.input) != 2
                             or scope.array(node.input[0]) is not None):
            return None
        target = scope.array(node.input[-1])
        if target is None or not has_batch(target):
            return None
        target = list(np.asarray(target).reshape(-1))
        runtime = {d for d, size in enumerate(target) if isinstance(size, Symbol)}
        like = self._sizing_value(scope, target, () if constant else self._runtime_dims(
            scope, node.input[0]))
        if like is None:
            return None
        context = NodeContext(node, opset, scope)
        scope.inserted = []
        if constant:
            value = context.attr_tensor("value")
            value = np.zeros((1,), np.float32) if value is None else value
            if value.size != 1:
                return None  # the converter's error
            element = context.constant(value.reshape((1,) * len(target)))
            result = context.emit(BroadcastToOp(element, [
                -1 if d in runtime else int(size) for d, size in enumerate(target)],  # type: ignore[call-overload]
                scope.value(like)))
            scope.symbols[node.output[0]] = tuple(size if d in runtime else None
                                                  for d, size in enumerate(target))
            return self._emitted(scope, [result])
        source = list(scope.type_of(node.input[0]).get_shape())
        offset = len(target) - len(source)
        if offset < 0:
            return None
        shape: list[int] = []
        for d, size in enumerate(target):
            dim = source[d - offset] if d >= offset else 1
            if d in runtime:
                shape.append(-1)
            elif dim < 0 or (dim != 1 and int(size) not in (1, dim)):
                return None  # a runtime size against a static one, or no broadcast
            else:
                shape.append(max(dim, int(size)))
        known = scope.symbols.get(node.input[0]) or (None,) * len(source)
        if offset == 0 and tuple(shape) == tuple(source) and all(
                known[d] is target[d] for d in runtime):
            result = context.input(0)
        else:
            result = context.emit(BroadcastToOp(context.input(0), shape, scope.value(like)))
        scope.symbols[node.output[0]] = tuple(size if d in runtime else None
                                              for d, size in enumerate(target))
        return self._emitted(scope, [result])

    @staticmethod
    def _bound_positions(scope: _FunctionScope, node: onnx.NodeProto, opset: int) -> None:
        """A Gather at `graph.arange` positions (through reshapes) bounds them by the size of
        its axis (`ArangeOp.bound`): a sequence longer than a position table is a size check
        that fails, not positions clamped into the table."""
        indices = scope.value(node.input[1])
        while isinstance(indices.owner, ReshapeOp):
            indices = indices.owner.x
        data = scope.type_of(node.input[0]).get_shape()
        axis = int(_attributes(node).get("axis", 0)) % max(len(data), 1)
        if isinstance(indices.owner, ArangeOp) and data and data[axis] >= 0:
            indices.owner.limit_bound(data[axis])

    @staticmethod
    def _emitted(scope: _FunctionScope, outputs: list[ConvertedValue]) -> list[ConvertedValue]:
        """`outputs` of ops just inserted into `scope`, which are verified."""
        for op in scope.inserted:
            op.verify()
        return outputs

    def _runtime_reshape_target(self, node: onnx.NodeProto, scope: _FunctionScope,
                                opset: int) -> tuple[list[int], list[int]] | None:
        """For a Reshape of a value with runtime dims other than its leading one, or to a
        target holding runtime sizes (a grid's `y.view(ny, 1)`): `graph.reshape`'s shape and
        groups (`symbolic_reshape_target`); None for other nodes. A target that does not keep
        the runtime dims is a `DynamicInputError`."""
        if node.op_type != "Reshape" or len(node.input) < 2 or not node.input[1]:
            return None
        type = scope.entry(node.input[0]).type
        target = scope.array(node.input[1])
        if not isinstance(type, TensorType) or (
                all(d >= 0 for d in type.get_shape()[1:]) and not has_batch(target)):
            return None
        resolved = None if target is None else symbolic_reshape_target(
            list(type.get_shape()), list(self._runtime_dims(scope, node.input[0])),
            list(target.reshape(-1)), bool(_attributes(node).get("allowzero", 0)))
        if resolved is None:
            raise DynamicInputError(
                f"{describe_node(node, opset)} reshapes '{node.input[0]}' ({type}) to "
                f"{None if target is None else target.tolist()}, which does not keep each of "
                "its runtime dims: compile it for static shapes", node.input[0])
        return resolved

    def _runtime_merge(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int
                       ) -> list[ConvertedValue] | None:
        """A Reshape over runtime dims merging static dims beside runtime ones (a YOLOv5
        head's `y.view(n, -1, 8)` of `?x3x?x?x8`), which only `graph.reshape`'s `groups` say:
        that op, its kept runtime dims keeping their symbols. None for any other node."""
        resolved = self._runtime_reshape_target(node, scope, opset)
        if resolved is None or not resolved[1]:
            return None
        shape, groups = resolved
        scope.inserted = []
        result = NodeContext(node, opset, scope).emit(ReshapeOp(scope.value(node.input[0]),
                                                                shape, groups))
        symbols = self._runtime_dims(scope, node.input[0])
        out_axes = [axis for axis, size in enumerate(shape) if size < 0]
        carried: list[Symbol | None] = [None] * len(shape)
        for out_axis, lo, hi in zip(out_axes, groups[::2], groups[1::2], strict=True):
            runtime = [axis for axis in range(lo, hi) if symbols[axis] is not None]
            if hi - lo == 1 and runtime:
                carried[out_axis] = symbols[runtime[0]]
        scope.symbols[node.output[0]] = tuple(carried)
        return self._emitted(scope, [result])

    def _with_runtime_target(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int
                             ) -> onnx.NodeProto:
        """A Reshape `_runtime_reshape_target` resolves, as a copy whose target is
        `graph.reshape`'s shape (-1 for each runtime dim, kept or merged); other nodes as
        they are."""
        resolved = self._runtime_reshape_target(node, scope, opset)
        if resolved is None:
            return node
        resolved = resolved[0]
        name = f"{node.input[1]}{RUNTIME_TARGET_SUFFIX}"
        array = np.array(resolved, np.int64)
        scope.entries[name] = _Entry(array_type(array), scope.entry(node.input[1]).location,
                                     array=array)
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.input[1] = name
        del copy.attribute[:]  # the target is resolved: no allowzero left to read
        return copy

    def _with_batch_target(self, node: onnx.NodeProto, scope: _FunctionScope, opset: int
                           ) -> tuple[onnx.NodeProto, bool]:
        """A Reshape, Expand, ConstantOfShape or Resize whose shape input
        (`BATCH_TARGET_INPUTS`) is a shape array with `BATCH` first, as a copy reading it with
        -1 there (the converters keep the dynamic leading dim: Reshape's -1, a broadcast to the
        batch, a resize that keeps the rows), and True; other nodes as they are, and False."""
        index = BATCH_TARGET_INPUTS.get(node.op_type)
        if index is None or len(node.input) <= index or not node.input[index]:
            return node, False
        target = scope.array(node.input[index])
        if not has_batch(target):
            return node, False
        assert target is not None
        resolved = batch_reshape_target(target)
        if resolved is None:
            raise self._uses_the_batch(node, scope, node.input[index], opset)
        name = f"{node.input[index]}.batch_target"
        scope.entries[name] = _Entry(array_type(resolved),
                                     scope.entry(node.input[index]).location, array=resolved)
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.input[index] = name
        return copy, True

    def _uses_the_batch(self, node: onnx.NodeProto, scope: _FunctionScope, name: str,
                        opset: int) -> DynamicInputError:
        return DynamicInputError(
            f"{describe_node(node, opset)} computes with '{name}' "
            f"({scope.array(name).tolist()}), which holds the dynamic batch "  # type: ignore[union-attr]
            f"'{self.batch_symbol}' (only moved into a Reshape's leading dim is it kept): "
            "compile it for static shapes", name)

    @staticmethod
    def _batched_input(scope: _FunctionScope, given: list[str]) -> str | None:
        """The first of `given` whose type has the dynamic batch, if any."""
        for name in given:
            type = scope.entry(name).type
            if isinstance(type, TensorType) and has_dynamic_leading_dim(type):
                return name
        return None

    @staticmethod
    def _dynamic_input(scope: _FunctionScope, given: list[str], after_leading: bool = False
                       ) -> str | None:
        """The first of `given` whose type has a dynamic dim (`after_leading`: other than its
        leading one), if any."""
        for name in given:
            type = scope.entry(name).type
            if isinstance(type, TensorType) and any(
                    d < 0 for d in type.get_shape()[1 if after_leading else 0:]):
                return name
        return None

    def _not_shape_polymorphic(self, node: onnx.NodeProto, scope: _FunctionScope, name: str,
                               opset: int, why: str = "") -> DynamicInputError:
        """The error of `node`, which reads `name` (a value with runtime dims) but has no
        definition over runtime extents (`why`: what its conversion said)."""
        because = f" ({why})" if why else ""
        return DynamicInputError(
            f"{describe_node(node, opset)} reads '{name}' ({scope.entry(name).type}), which has "
            f"dynamic dims, and is not shape-polymorphic{because}: compile it for static "
            "shapes", name)

    def _check_batch_polymorphic(self, node: onnx.NodeProto, scope: _FunctionScope,
                                 batched: str, opset: int) -> None:
        """A node that reads a value with a dynamic batch must be batch-polymorphic."""
        if node.op_type in BATCH_POLYMORPHIC_OPS and node.domain in _DEFAULT_DOMAINS:
            return
        if node.op_type in BATCH_POLYMORPHIC_MICROSOFT_OPS and node.domain == "com.microsoft":
            return
        raise self._not_batch_polymorphic(node, scope, batched, opset)

    def _not_batch_polymorphic(self, node: onnx.NodeProto, scope: _FunctionScope, batched: str,
                               opset: int, why: str = "") -> DynamicInputError:
        """The error of `node`, which reads the batched value `batched` but cannot keep its
        rows apart (`why`: what its conversion said)."""
        because = f" ({why})" if why else ""
        return DynamicInputError(
            f"{describe_node(node, opset)} reads '{batched}' ({scope.entry(batched).type}), "
            f"whose leading dim is the dynamic batch '{self.batch_symbol}', and is not "
            f"batch-polymorphic{because}: compile it for static shapes", batched)

    def _convert_in(self, scope: _FunctionScope, node: onnx.NodeProto, opset: int,
                    impl: Impl) -> list[ConvertedValue]:
        scope.inserted = []
        outputs = list(impl(NodeContext(node, opset, scope)))
        for op in scope.inserted:
            op.verify()
            verify_shape_bounds(op)
        return outputs[:len(node.output)]  # converters may give optional outputs not asked for

    def _fold(self, outer: _FunctionScope, node: onnx.NodeProto, opset: int, impl: Impl
              ) -> list[ConvertedValue]:
        """Convert a node whose inputs are all constants, and evaluate it to constants."""
        scope = _FoldScope(outer)
        outputs = self._convert_in(scope, node, opset, impl)
        for i, out in enumerate(outputs):
            if isinstance(out, SSAValue) and out in scope.known:
                outputs[i] = scope.known[out]
        computed = [i for i, out in enumerate(outputs) if isinstance(out, SSAValue)]
        if not computed:
            return outputs
        values = [out for out in outputs if isinstance(out, SSAValue)]
        try:
            arrays = _evaluate(scope.block, values)
        except Exception:  # noqa: BLE001 - the interpreter cannot fold it: keep the ops
            return self._convert_in(outer, node, opset, impl)
        for i, array in zip(computed, arrays, strict=True):
            outputs[i] = array
        return outputs

    def _record(self, scope: _FunctionScope, node: onnx.NodeProto,
                outputs: list[ConvertedValue]) -> None:
        location = node_location(node)
        for index, name in enumerate(node.output):
            if not name:
                continue
            if index >= len(outputs):
                scope.dropped_outputs[name] = (
                    f"output {index} ('{name}') of {describe_node(node)} is not supported by dlc")
                continue
            out = outputs[index]
            if isinstance(out, np.ndarray):
                type = TensorType(i64, out.shape) if has_batch(out) else array_type(out)
                scope.entries[name] = _Entry(type, location, array=out)
                continue
            if not isinstance(out.type, TensorType):
                raise OnnxImportError(f"{describe_node(node)}: converter produced a value of "
                                      f"type {out.type}, expected a tensor")
            if not isinstance(out, BlockArgument) and out.name_hint is None:
                out.name_hint = ssa_name(name)
            scope.entries[name] = _Entry(out.type, location, ssa=out)

    # ---------------------------------------------------------------- the function

    def _finish(self) -> ModuleOp:
        results: list[SSAValue] = []
        for value_info in self.graph.output:
            value = self.scope.value(value_info.name)
            self._check_output_type(value_info, value)
            results.append(value)
        self.block.add_op(ReturnOp(*results))
        func = FuncOp(
            "main",
            ([a.type for a in self.block.args], [r.type for r in results]),
            Region(self.block),
            arg_attrs=self._name_attrs(self.arg_names, [a.type for a in self.block.args],
                                       [self.input_symbols.get(n) for n in self.arg_names]),
            res_attrs=self._name_attrs([o.name for o in self.graph.output],
                                       [r.type for r in results]),
        )
        try:
            mark_valid_extents(func)
        except ExtentError as e:
            raise OnnxImportError(str(e)) from None
        module = ModuleOp([func])
        try:
            verify_dim_symbols(func)
            module.verify()
        except VerifyException as e:
            raise OnnxImportError(f"internal error: the imported IR does not verify: {e}") from None
        return module

    def _name_attrs(self, names: list[str], types: Sequence[Attribute],
                    symbols: Sequence[tuple[str, ...] | None] | None = None
                    ) -> ArrayAttr[DictionaryAttr]:
        """Each value's ONNX name, and the symbols of its dynamic dims: `symbols` where given
        (the inputs' `dim_param`s), else the batch symbol of a dynamic leading dim (a result of
        `dynamic_shapes` gets none: its sizes are computed, `rewrites/output_sizes.py`)."""
        attrs: list[DictionaryAttr] = []
        for index, (name, type) in enumerate(zip(names, types, strict=True)):
            entries: dict[str, Attribute] = {ONNX_NAME_ATTR: StringAttr(name)}
            given = symbols[index] if symbols is not None else None
            if given is not None:
                entries[DIM_SYMBOLS_ATTR] = symbols_attr(given)
            elif self.dynamic_batch and isinstance(type, TensorType) and \
                    has_dynamic_leading_dim(type):
                assert self.batch_symbol is not None
                rank = type.get_num_dims()
                entries[DIM_SYMBOLS_ATTR] = symbols_attr([self.batch_symbol] + [""] * (rank - 1))
            attrs.append(DictionaryAttr(entries))
        return ArrayAttr(attrs)

    def _check_output_type(self, value_info: onnx.ValueInfoProto, value: SSAValue) -> None:
        """A declared element type must match what the graph computes (a compile error names the
        producer). A declared shape is a hint, as in ONNX Runtime: unknown dims (`dim_param`, no
        value, or a negative value as some exporters write) match anything; a static dim or a
        rank that disagrees with inference is a `ShapeHintWarning`, and the inferred shape wins.
        A data-dependent extent (NonZero's, padded to its bound) matches any declared size."""
        if value_info.type.WhichOneof("value") != "tensor_type":
            return
        tensor = value_info.type.tensor_type
        found = value.type
        assert isinstance(found, TensorType)
        producer = next((describe_node(n) for n in self.graph.node
                         if value_info.name in n.output), "its producer")
        declared_elem = tensor.elem_type
        if declared_elem:
            want = tensor_type(declared_elem, (), f"graph output '{value_info.name}'")
            if want.element_type != found.element_type:
                raise OnnxImportError(
                    f"graph output '{value_info.name}' is declared with element type "
                    f"{onnx_type_name(declared_elem)}, but {producer} produces {found}")
        if not tensor.HasField("shape"):
            return
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
                for d in tensor.shape.dim]
        shape = found.get_shape()
        try:
            extent = extent_of(value)
        except ExtentError:
            extent = None  # reported with its node by mark_valid_extents
        if extent is not None and extent.axis < len(dims):
            dims[extent.axis] = None  # known at run time only: the data decides it
        if len(dims) != len(shape) or any(
                d is not None and d != s for d, s in zip(dims, shape, strict=False)):
            declared = "x".join("?" if d is None else str(d) for d in dims)
            warnings.warn(
                f"graph output '{value_info.name}' is declared with shape {declared}, but "
                f"{producer} produces {found}: the declared shape is a hint, the inferred one "
                "is used", ShapeHintWarning, stacklevel=2)


def _shapeless_graph_values(graph: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    """The graph inputs and outputs whose tensor type has no shape at all (unknown rank, which
    ONNX allows and ONNX Runtime runs, but `onnx.checker` rejects: "Field 'shape' of 'type' is
    required but missing")."""
    return [value for value in (*graph.input, *graph.output)
            if value.type.WhichOneof("value") == "tensor_type"
            and not value.type.tensor_type.HasField("shape")]


def _with_unknown_rank_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` for the checker alone, each shapeless graph input and output given an
    empty shape: the checker validates the rest of the model as it is, and the importer reads
    the original (an output's missing shape is no hint at all; an input's is asked for)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for value in _shapeless_graph_values(copy.graph):
        value.type.tensor_type.shape.SetInParent()
    return copy


_CHECKER_CONTEXT = re.compile(
    r"\s*==> Context: Bad node spec for node\. Name: (?P<name>\S*) OpType: (?P<op>\S+)\s*$")


def _checker_message(text: str) -> str:
    """The ONNX checker's message on one line, its node context first (`node 'n' (Add): ...`)."""
    context = _CHECKER_CONTEXT.search(text)
    if context is not None:
        text = text[: context.start()]
        who = f"node '{context['name']}'" if context["name"] else "unnamed node"
        text = f"{who} ({context['op']}): {text}"
    return " ".join(text.split())


def _constant_op(array: np.ndarray) -> Operation:
    """`graph.constant` holding `array`; a splat (every element equal) holds one element, as
    the parser makes of `dense<1.0> : tensor<64x3x7x7xf32>`."""
    from dlc.dialects.graph import ConstantOp

    if array.ndim == 0 or _is_splat(array):
        # (ConstantOp.from_array goes through np.ascontiguousarray, which makes 0-D arrays 1-D.)
        element = from_numpy_dtype(array.dtype)
        first = np.asarray(array.flat[0], dtype=array.dtype.newbyteorder("<"))
        attr = DenseIntOrFPElementsAttr(TensorType(element, array.shape),
                                        BytesAttr(first.tobytes()))
        return ConstantOp(attr)
    return ConstantOp.from_array(array)


def _is_splat(array: np.ndarray) -> bool:
    if array.size <= 1:
        return False
    if all(stride == 0 for stride in array.strides):  # np.broadcast_to of one value
        return True
    flat = array.reshape(-1)
    return bool(flat[0] == flat[-1]) and bool((flat == flat[0]).all())


def _nodes_with_subgraphs(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The nodes of `graph` and, recursively, of the subgraphs in their attributes."""
    nodes: list[onnx.NodeProto] = []
    for node in graph.node:
        nodes.append(node)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                nodes += _nodes_with_subgraphs(sub)
    return nodes




def _evaluate(block: Block, values: list[SSAValue]) -> list[np.ndarray]:
    """Run the ops of `block` (no arguments) in the graph interpreter and return `values`."""
    from dlc.dialects.graph.interpreter import run_module

    block.add_op(ReturnOp(*values))
    func = FuncOp("fold", ([], [v.type for v in values]), Region(block))
    results = run_module(ModuleOp([func]), [])
    return [np.asarray(r) for r in results]


def _fold_moving(node: onnx.NodeProto, scope: _FunctionScope) -> np.ndarray | None:
    """`node` folded on constant shape arrays holding symbols (`fold_symbolic`), when it is
    one of `MOVING_OPS` and all its inputs are known; else None."""
    if node.op_type not in MOVING_OPS:
        return None
    arrays = [scope.array(name) if name else None for name in node.input]
    if any(array is None for name, array in zip(node.input, arrays, strict=True) if name):
        return None
    try:
        return fold_symbolic(node.op_type, arrays, _attributes(node))
    except (TypeError, ValueError, IndexError):
        return None


MAX_RUNTIME_DILATED_SPAN = 16
"""The widest window dilated along two axes (`dilation * (kernel - 1) + 1` pixels along each,
the narrower counted: `_dilated_span`) a Conv over runtime sizes takes (`dynamic_shapes`); a
wider one falls back to a compile per shape. Over a runtime plane its padded input is read at
every tap, where a static compile splits off the bands of taps that read only padding
(`graph-conv-split-bands`), the waste compounding along both axes: DeepLab's ASPP convs
(dilations 12, 24, 36: spans 25-73) on 28x28 maps ran 3.3-31x their static compile and the
model 3.1x; its backbone's depthwise convs of dilation 2 (span 9) ran as fast as their static
compile, and so do 1-D convs dilated along their one runtime axis."""


def _dilated_span(node: onnx.NodeProto, scope: _FunctionScope) -> int:
    """The span in pixels of a Conv node's window dilated along two axes or more (the
    narrower of them; its kernel's shape from `kernel_shape`, else from its weight's type), 1
    for any other: a window dilated along one axis (a speech model's 87 frames of dilation 2,
    173 wide, over a runtime length) wastes its padded taps along that axis only, and ran as
    fast as its static compile (QuartzNet at 256 and 1000 frames: 0.97-1.03)."""
    attrs = _attributes(node)
    kernel = [int(k) for k in attrs.get("kernel_shape", [])]  # type: ignore[attr-defined]
    if not kernel and len(node.input) > 1 and node.input[1] in scope.entries:
        kernel = list(scope.type_of(node.input[1]).get_shape()[2:])
    dilations = [int(d) for d in attrs.get("dilations", [1] * len(kernel))]  # type: ignore[attr-defined]
    spans = [d * (k - 1) + 1 for d, k in zip(dilations, kernel, strict=False) if d > 1]
    return min(spans) if len(spans) >= 2 else 1


def _attributes(node: onnx.NodeProto) -> dict[str, object]:
    """The node's attributes by name, as Python values."""
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
