"""The graph dialect: dlc's tensor-level IR (TVM's Relay / Relax), with its Dialect object last."""

from dlc.dialects.graph.attrs import FusionKind, fusion_kind
from dlc.dialects.graph.custom import CustomOp
from dlc.dialects.graph.ops import (
    AbsOp,
    AddOp,
    AvgPool2DOp,
    BatchNormOp,
    CeilOp,
    ClipOp,
    ConcatOp,
    ConstantOp,
    Conv2DOp,
    Conv2DWinogradOp,
    DivOp,
    ErfOp,
    ExpOp,
    FlattenOp,
    FloorOp,
    FusedOp,
    GlobalAvgPool2DOp,
    GraphOp,
    LogOp,
    MatmulOp,
    MaxOp,
    MaxPool2DOp,
    MinOp,
    ModOp,
    MulOp,
    NegOp,
    PowOp,
    ReciprocalOp,
    ReduceOp,
    ReluOp,
    ReshapeOp,
    RoundOp,
    SigmoidOp,
    SoftmaxOp,
    SqrtOp,
    SubOp,
    TanhOp,
    TransposeOp,
    YieldOp,
)
from dlc.dialects.graph.ops_control import IfOp, LoopOp
from dlc.dialects.graph.ops_dynamic import NonMaxSuppressionOp, NonZeroOp
from dlc.dialects.graph.ops_quant import (
    Conv2DIntegerOp,
    DequantizeOp,
    LookupOp,
    MatmulIntegerOp,
    QuantizeOp,
)
from dlc.dialects.graph.ops_recurrent import GRUOp, LSTMOp, RNNOp
from dlc.dialects.graph.ops_tensor import (
    ArangeOp,
    ArgMaxOp,
    BroadcastToOp,
    CastOp,
    CompareOp,
    ConvTranspose2DOp,
    GatherOp,
    PadOp,
    ResizeOp,
    SliceOp,
    TopKOp,
    WhereOp,
)
from xdsl.ir import Dialect

__all__ = [
    "AbsOp", "AddOp", "AvgPool2DOp", "BatchNormOp", "CeilOp", "ClipOp", "ConcatOp", "ConstantOp",
    "Conv2DOp", "Conv2DWinogradOp", "DivOp", "ErfOp", "ExpOp", "FlattenOp", "FloorOp", "FusedOp",
    "FusionKind",
    "GlobalAvgPool2DOp", "Graph", "GraphOp", "LogOp", "MatmulOp", "MaxOp", "MaxPool2DOp",
    "MinOp", "ModOp", "MulOp", "NegOp", "PowOp", "ReciprocalOp", "ReduceOp", "ReluOp", "ReshapeOp",
    "RoundOp", "SigmoidOp", "SoftmaxOp", "SqrtOp", "SubOp", "TanhOp", "TransposeOp", "YieldOp",
    "fusion_kind",
    # ops_tensor.py
    "ArangeOp", "ArgMaxOp", "BroadcastToOp", "CastOp", "CompareOp", "ConvTranspose2DOp", "GatherOp",
    "PadOp", "ResizeOp", "SliceOp", "TopKOp", "WhereOp",
    # ops_control.py
    "IfOp", "LoopOp",
    # ops_dynamic.py
    "NonMaxSuppressionOp", "NonZeroOp",
    # ops_quant.py
    "Conv2DIntegerOp", "DequantizeOp", "LookupOp", "MatmulIntegerOp", "QuantizeOp",
    # ops_recurrent.py
    "GRUOp", "LSTMOp", "RNNOp",
    # custom.py
    "CustomOp",
]

Graph = Dialect(
    "graph",
    [
        # Constants
        ConstantOp,
        # Elementwise binary, with NumPy broadcasting
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        MaxOp,
        MinOp,
        PowOp,
        ModOp,
        # Elementwise unary
        ReluOp,
        SigmoidOp,
        TanhOp,
        ExpOp,
        ErfOp,
        SqrtOp,
        NegOp,
        AbsOp,
        LogOp,
        ReciprocalOp,
        CeilOp,
        FloorOp,
        RoundOp,
        ClipOp,
        # Out-fusable: matmul, convolution, pooling
        MatmulOp,
        Conv2DOp,
        Conv2DWinogradOp,
        MaxPool2DOp,
        AvgPool2DOp,
        GlobalAvgPool2DOp,
        # Normalization and reductions
        BatchNormOp,
        SoftmaxOp,
        ReduceOp,
        # Injective: layout and shape
        ReshapeOp,
        TransposeOp,
        ConcatOp,
        FlattenOp,
        # Data movement, selection and conversion (ops_tensor.py)
        CastOp,
        CompareOp,
        WhereOp,
        GatherOp,
        ArangeOp,
        SliceOp,
        PadOp,
        BroadcastToOp,
        ResizeOp,
        ArgMaxOp,
        TopKOp,
        ConvTranspose2DOp,
        # Data-dependent extents: padded to a bound, with a count (ops_dynamic.py)
        NonZeroOp,
        NonMaxSuppressionOp,
        # Quantized: exact integer semantics (ops_quant.py)
        QuantizeOp,
        DequantizeOp,
        Conv2DIntegerOp,
        MatmulIntegerOp,
        LookupOp,
        # Recurrent: a loop over time (ops_recurrent.py)
        LSTMOp,
        GRUOp,
        RNNOp,
        # User-defined ops (custom.py)
        CustomOp,
        # Control flow: regions over the enclosing function's values (ops_control.py)
        IfOp,
        LoopOp,
        # Fused groups
        FusedOp,
        YieldOp,
    ],
    [],
)
"""The graph dialect: tensor ops with shape inference and fusion kinds."""

# The NumPy implementations of the ops_tensor.py, ops_quant.py and ops_recurrent.py ops join the
# interpreter's registry.
import dlc.dialects.graph.interpreter_dynamic  # noqa: E402, F401
import dlc.dialects.graph.interpreter_quant  # noqa: E402, F401
import dlc.dialects.graph.interpreter_recurrent  # noqa: E402, F401
import dlc.dialects.graph.interpreter_tensor  # noqa: E402, F401
