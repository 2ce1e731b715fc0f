"""Op classes side by side: dlc vs ONNX Runtime, one tiny ONNX model per op and shape.

Run: `python3 benchmarks/ops.py [--threads 2] [--repeats 7] [--filter convT] [--check]`.
Each case (conv 1x1, 3x3 s1/s2, depthwise, grouped, dilated, Kx1 and 1xK, 1-D, 7x7, transposed
conv, pooling, Resize, squeeze-excite, GEMM shapes, LayerNorm, Softmax, attention,
Concat/Split/Transpose blocks, MobileNetV2 inverted residual blocks, LSTM/GRU/RNN) is one ONNX
model built with onnx.helper
(random weights as initializers), compiled by `dlc.compile(model, threads=N)` and run by ONNX
Runtime with `intra_op_num_threads=N`. Each row prints both medians, dlc's throughput (GFLOP/s
counting multiply-adds as 2 flops, or GB/s of input plus output bytes for the ops that only move
data) and `ratio`: ORT's median time over dlc's (above 1: dlc is faster), and in parentheses the
same ratio of CPU times (steadier on a loaded machine for one thread; see `common.Timing`). With
`--check` a row also gives dlc's largest error relative to ORT's largest output magnitude. The
summary lists the rows below `--bar` (default 0.7).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import time_calls  # noqa: E402

OPSET = 17


@dataclass
class Case:
    """One row: an ONNX model, its inputs, and the work it does (flops, or bytes moved)."""

    name: str
    model: object
    inputs: dict[str, np.ndarray]
    flops: float = 0.0
    bytes: float = 0.0
    notes: list[str] = field(default_factory=list)


class Builder:
    """Collects nodes, initializers and inputs of one ONNX graph."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[object] = []
        self.initializers: list[object] = []
        self.inputs: dict[str, np.ndarray] = {}
        self.count = 0

    def input(self, shape: tuple[int, ...], name: str = "x") -> str:
        self.inputs[name] = self.rng.standard_normal(shape, dtype=np.float32)
        return name

    def weight(self, shape: tuple[int, ...], scale: float | None = None) -> str:
        from onnx import numpy_helper

        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        scale = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        name = f"w{len(self.initializers)}"
        array = (self.rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def ints(self, values: list[int]) -> str:
        from onnx import numpy_helper

        name = f"c{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    def floats(self, values: list[float]) -> str:
        from onnx import numpy_helper

        name = f"c{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.array(values, np.float32), name))
        return name

    def node(self, op: str, inputs: list[str], outputs: int = 1, **attrs: object) -> list[str]:
        from onnx import helper

        names = [f"t{self.count}_{i}" for i in range(outputs)]
        self.count += 1
        self.nodes.append(helper.make_node(op, inputs, names, **attrs))
        return names

    def one(self, op: str, inputs: list[str], **attrs: object) -> str:
        return self.node(op, inputs, **attrs)[0]

    def model(self, outputs: list[str]) -> object:
        import onnx
        from onnx import TensorProto, helper

        graph = helper.make_graph(
            self.nodes, "op",
            [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(array.shape))
             for name, array in self.inputs.items()],
            [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        onnx.checker.check_model(model)
        return model


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------


def conv(
    name: str, c: int, o: int, hw: tuple[int, int], kernel: tuple[int, int],
    stride: int = 1, groups: int = 1, dilation: int = 1, pads: tuple[int, int] | None = None,
) -> Case:
    """Conv (2-D, batch 1, with bias); 'same' padding unless `pads` (top/left) is given."""
    b = Builder()
    x = b.input((1, c, *hw))
    kh, kw = kernel
    if pads is None:
        pads = (dilation * (kh - 1) // 2, dilation * (kw - 1) // 2)
    w = b.weight((o, c // groups, kh, kw))
    bias = b.weight((o,), 0.1)
    y = b.one("Conv", [x, w, bias], kernel_shape=[kh, kw], strides=[stride, stride],
              group=groups, dilations=[dilation, dilation], pads=[*pads, *pads])
    oh = (hw[0] + 2 * pads[0] - dilation * (kh - 1) - 1) // stride + 1
    ow = (hw[1] + 2 * pads[1] - dilation * (kw - 1) - 1) // stride + 1
    flops = 2.0 * o * (c // groups) * kh * kw * oh * ow
    return Case(name, b.model([y]), b.inputs, flops=flops)


def conv1d(name: str, c: int, o: int, length: int, k: int, groups: int = 1) -> Case:
    b = Builder()
    x = b.input((1, c, length))
    w = b.weight((o, c // groups, k))
    y = b.one("Conv", [x, w], kernel_shape=[k], pads=[k // 2, k // 2], group=groups)
    out_length = length + 2 * (k // 2) - k + 1
    return Case(name, b.model([y]), b.inputs, flops=2.0 * o * (c // groups) * k * out_length)


def conv_transpose(
    name: str, c: int, o: int, hw: int, k: int, stride: int, pad: int, out_pad: int = 0,
) -> Case:
    b = Builder()
    x = b.input((1, c, hw, hw))
    w = b.weight((c, o, k, k), 1.0 / np.sqrt(c * k * k / stride / stride))
    bias = b.weight((o,), 0.1)
    y = b.one("ConvTranspose", [x, w, bias], kernel_shape=[k, k], strides=[stride, stride],
              pads=[pad] * 4, output_padding=[out_pad] * 2)
    # Useful multiply-adds: every input element times every kernel tap, less the cropped ones
    # (counted as all of them: the crop is at most a border).
    return Case(name, b.model([y]), b.inputs, flops=2.0 * c * o * k * k * hw * hw)


def pool(name: str, op: str, c: int, hw: int, k: int, stride: int, pad: int = 0) -> Case:
    b = Builder()
    x = b.input((1, c, hw, hw))
    if op.startswith("Global"):
        y = b.one(op, [x])
        out = c
    else:
        y = b.one(op, [x], kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)
        side = (hw + 2 * pad - k) // stride + 1
        out = c * side * side
    return Case(name, b.model([y]), b.inputs, bytes=4.0 * (c * hw * hw + out))


def resize(name: str, mode: str, c: int, hw: int, scale: int) -> Case:
    b = Builder()
    x = b.input((1, c, hw, hw))
    scales = b.floats([1.0, 1.0, float(scale), float(scale)])
    attrs: dict[str, object] = {"mode": mode}
    if mode == "nearest":
        attrs["nearest_mode"] = "floor"
        attrs["coordinate_transformation_mode"] = "asymmetric"
    else:
        attrs["coordinate_transformation_mode"] = "half_pixel"
    y = b.one("Resize", [x, "", scales], **attrs)
    return Case(name, b.model([y]), b.inputs,
                bytes=4.0 * c * hw * hw * (1 + scale * scale))


def squeeze_excite(name: str, c: int, hw: int, squeeze: int) -> Case:
    """EfficientNet's squeeze-excite: x * sigmoid(conv(silu(conv(global_avg_pool(x)))))."""
    b = Builder()
    x = b.input((1, c, hw, hw))
    pooled = b.one("GlobalAveragePool", [x])
    h = b.one("Conv", [pooled, b.weight((squeeze, c, 1, 1)), b.weight((squeeze,), 0.1)])
    h = b.one("Mul", [h, b.one("Sigmoid", [h])])
    s = b.one("Conv", [h, b.weight((c, squeeze, 1, 1)), b.weight((c,), 0.1)])
    y = b.one("Mul", [x, b.one("Sigmoid", [s])])
    return Case(name, b.model([y]), b.inputs, bytes=4.0 * 3 * c * hw * hw)


def matmul(name: str, batch: tuple[int, ...], m: int, k: int, n: int) -> Case:
    """`x @ W` with a constant W (a layer), or with batch dims two inputs (activations)."""
    b = Builder()
    x = b.input((*batch, m, k))
    w = b.input((*batch, k, n), "w") if batch else b.weight((k, n))
    y = b.one("MatMul", [x, w])
    return Case(name, b.model([y]), b.inputs, flops=2.0 * int(np.prod(batch or (1,))) * m * k * n)


def gemm(name: str, m: int, k: int, n: int) -> Case:
    """ONNX Gemm with transB=1 and a bias (a classifier layer)."""
    b = Builder()
    x = b.input((m, k))
    y = b.one("Gemm", [x, b.weight((n, k)), b.weight((n,), 0.1)], transB=1)
    return Case(name, b.model([y]), b.inputs, flops=2.0 * m * k * n)


def layer_norm(name: str, rows: int, width: int) -> Case:
    b = Builder()
    x = b.input((1, rows, width))
    y = b.one("LayerNormalization", [x, b.weight((width,), 1.0), b.weight((width,), 0.1)],
              axis=-1, epsilon=1e-5)
    return Case(name, b.model([y]), b.inputs, bytes=8.0 * rows * width)


def softmax(name: str, shape: tuple[int, ...]) -> Case:
    b = Builder()
    x = b.input(shape)
    y = b.one("Softmax", [x], axis=-1)
    return Case(name, b.model([y]), b.inputs, bytes=8.0 * int(np.prod(shape)))


def attention(name: str, heads: int, seq: int, dim: int) -> Case:
    """softmax(Q K^T / sqrt(d)) V over `heads` heads (Q, K, V inputs)."""
    b = Builder()
    q = b.input((1, heads, seq, dim), "q")
    k = b.input((1, heads, seq, dim), "k")
    v = b.input((1, heads, seq, dim), "v")
    kt = b.one("Transpose", [k], perm=[0, 1, 3, 2])
    scores = b.one("MatMul", [q, kt])
    scaled = b.one("Mul", [scores, b.floats([1.0 / np.sqrt(dim)])])
    probs = b.one("Softmax", [scaled], axis=-1)
    y = b.one("MatMul", [probs, v])
    return Case(name, b.model([y]), b.inputs, flops=4.0 * heads * seq * seq * dim)


def channel_shuffle(name: str, c: int, hw: int) -> Case:
    """ShuffleNet v2 unit: Split in two, 1x1 conv + ReLU on one half, Concat, channel shuffle
    (Reshape, Transpose, Reshape)."""
    b = Builder()
    x = b.input((1, c, hw, hw))
    half = c // 2
    left, right = b.node("Split", [x, b.ints([half, half])], outputs=2, axis=1)
    right = b.one("Relu", [b.one("Conv", [right, b.weight((half, half, 1, 1))],
                                 kernel_shape=[1, 1])])
    y = b.one("Concat", [left, right], axis=1)
    y = b.one("Reshape", [y, b.ints([1, 2, half, hw, hw])])
    y = b.one("Transpose", [y], perm=[0, 2, 1, 3, 4])
    y = b.one("Reshape", [y, b.ints([1, c, hw, hw])])
    return Case(name, b.model([y]), b.inputs, flops=2.0 * half * half * hw * hw)


def inverted_residual(name: str, c: int, hw: int, blocks: int, expand: int = 6) -> Case:
    """MobileNetV2's inverted residual blocks, `blocks` of them in a row: 1x1 expansion to
    `expand * c` channels + ReLU6, depthwise 3x3 + ReLU6, 1x1 projection back to `c`, plus the
    block's input (batch norms folded into the convs' biases, as the exported nets have them)."""
    b = Builder()
    y = b.input((1, c, hw, hw))
    wide = expand * c
    low, high = b.floats([0.0]), b.floats([6.0])
    for _ in range(blocks):
        e = b.one("Conv", [y, b.weight((wide, c, 1, 1)), b.weight((wide,), 0.1)],
                  kernel_shape=[1, 1])
        e = b.one("Clip", [e, low, high])
        d = b.one("Conv", [e, b.weight((wide, 1, 3, 3)), b.weight((wide,), 0.1)],
                  kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=wide)
        d = b.one("Clip", [d, low, high])
        p = b.one("Conv", [d, b.weight((c, wide, 1, 1)), b.weight((c,), 0.1)],
                  kernel_shape=[1, 1])
        y = b.one("Add", [p, y])
    flops = blocks * 2.0 * hw * hw * (2 * c * wide + 9 * wide)
    return Case(name, b.model([y]), b.inputs, flops=flops)


def transpose(name: str, shape: tuple[int, ...], perm: list[int]) -> Case:
    b = Builder()
    x = b.input(shape)
    y = b.one("Transpose", [x], perm=perm)
    return Case(name, b.model([y]), b.inputs, bytes=8.0 * int(np.prod(shape)))


def concat_block(name: str, c: int, hw: int, branches: int) -> Case:
    """Inception-style: `branches` 1x1 convs of one input, concatenated on channels."""
    b = Builder()
    x = b.input((1, c, hw, hw))
    outs = [b.one("Relu", [b.one("Conv", [x, b.weight((c // 2, c, 1, 1))], kernel_shape=[1, 1])])
            for _ in range(branches)]
    y = b.one("Concat", outs, axis=1)
    return Case(name, b.model([y]), b.inputs, flops=2.0 * branches * (c // 2) * c * hw * hw)


def recurrent(name: str, op: str, seq: int, batch: int, inputs: int, hidden: int,
              direction: str = "forward") -> Case:
    """LSTM, GRU or RNN (weights and biases as initializers, no initial state): the Y output."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    d = 2 if direction == "bidirectional" else 1
    b = Builder()
    x = b.input((seq, batch, inputs))
    w = b.weight((d, gates * hidden, inputs), scale=1.0 / np.sqrt(hidden))
    r = b.weight((d, gates * hidden, hidden), scale=1.0 / np.sqrt(hidden))
    bias = b.weight((d, 2 * gates * hidden), scale=0.1)
    y = b.node(op, [x, w, r, bias], outputs=1, hidden_size=hidden, direction=direction)[0]
    flops = 2.0 * d * seq * batch * gates * hidden * (inputs + hidden)
    return Case(name, b.model([y]), b.inputs, flops=flops)


CASES: list[Callable[[], Case]] = [
    functools.partial(conv, "conv1x1 64->128 28", 64, 128, (28, 28), (1, 1)),
    functools.partial(conv, "conv1x1 256->64 56", 256, 64, (56, 56), (1, 1)),
    functools.partial(conv, "conv1x1 512->1000 13", 512, 1000, (13, 13), (1, 1)),
    # Mobile nets' pointwise convs: many channels over small planes (MobileNetV2's 7x7 and
    # 14x14 stages) and few channels over large ones (SqueezeNet's squeeze and expand).
    functools.partial(conv, "conv1x1 960->160 7", 960, 160, (7, 7), (1, 1)),
    functools.partial(conv, "conv1x1 160->960 7", 160, 960, (7, 7), (1, 1)),
    functools.partial(conv, "conv1x1 384->64 14", 384, 64, (14, 14), (1, 1)),
    functools.partial(conv, "conv1x1 64->384 14", 64, 384, (14, 14), (1, 1)),
    # DeepLabV3's ASPP 1x1 convs: rows of one vector.
    functools.partial(conv, "conv1x1 960->256 16", 960, 256, (16, 16), (1, 1)),
    functools.partial(conv, "conv1x1 160->960 16", 160, 960, (16, 16), (1, 1)),
    functools.partial(conv, "conv1x1 128->16 55", 128, 16, (55, 55), (1, 1)),
    functools.partial(conv, "conv1x1 16->64 55", 16, 64, (55, 55), (1, 1)),
    functools.partial(conv, "conv3x3 s1 64->64 56", 64, 64, (56, 56), (3, 3)),
    functools.partial(conv, "conv3x3 s1 256->256 14", 256, 256, (14, 14), (3, 3)),
    functools.partial(conv, "conv3x3 s2 64->128 56", 64, 128, (56, 56), (3, 3), stride=2),
    functools.partial(conv, "conv3x3 s2 128->256 28", 128, 256, (28, 28), (3, 3), stride=2),
    functools.partial(conv, "depthwise3x3 s1 96 56", 96, 96, (56, 56), (3, 3), groups=96),
    functools.partial(conv, "depthwise3x3 s2 144 56", 144, 144, (56, 56), (3, 3), stride=2,
                      groups=144),
    functools.partial(conv, "depthwise3x3 s1 576 14", 576, 576, (14, 14), (3, 3), groups=576),
    functools.partial(conv, "depthwise3x3 s2 96 112", 96, 96, (112, 112), (3, 3), stride=2,
                      groups=96),
    functools.partial(conv, "depthwise3x3 s1 960 7", 960, 960, (7, 7), (3, 3), groups=960),
    functools.partial(conv, "depthwise7x7 s1 96 56", 96, 96, (56, 56), (7, 7), groups=96),
    functools.partial(conv, "depthwise3x3 s1 672 14", 672, 672, (14, 14), (3, 3), groups=672),
    functools.partial(conv, "depthwise5x5 s2 672 14", 672, 672, (14, 14), (5, 5), stride=2,
                      groups=672),
    functools.partial(conv, "depthwise5x5 s1 1152 7", 1152, 1152, (7, 7), (5, 5),
                      groups=1152),
    functools.partial(conv, "grouped3x3 g32 128 56", 128, 128, (56, 56), (3, 3), groups=32),
    functools.partial(conv, "grouped3x3 g8 256 28", 256, 256, (28, 28), (3, 3), groups=8),
    functools.partial(conv, "dilated3x3 d2 128 28", 128, 128, (28, 28), (3, 3), dilation=2),
    functools.partial(conv, "dilated3x3 d4 64 56", 64, 64, (56, 56), (3, 3), dilation=4),
    # DeepLabV3's ASPP: the dilation close to the map, most taps read padding.
    functools.partial(conv, "dilated3x3 d12 960->256 16", 960, 256, (16, 16), (3, 3),
                      dilation=12),
    functools.partial(conv, "conv5x1 64->64 256x1", 64, 64, (256, 1), (5, 1)),
    functools.partial(conv, "conv7x1 128->128 17", 128, 128, (17, 17), (7, 1)),
    functools.partial(conv, "conv1x7 128->128 17", 128, 128, (17, 17), (1, 7)),
    functools.partial(conv, "conv1x5 64->64 1x256", 64, 64, (1, 256), (1, 5)),
    functools.partial(conv1d, "conv1d k3 64->64 1024", 64, 64, 1024, 3),
    functools.partial(conv1d, "conv1d k5 128->128 512", 128, 128, 512, 5),
    functools.partial(conv, "conv7x7 s2 3->64 224", 3, 64, (224, 224), (7, 7), stride=2),
    functools.partial(conv, "conv7x7 s1 64->64 28", 64, 64, (28, 28), (7, 7)),
    functools.partial(conv_transpose, "convT k2s2 64->32 56", 64, 32, 56, 2, 2, 0),
    functools.partial(conv_transpose, "convT k3s2 128->64 28", 128, 64, 28, 3, 2, 1, 1),
    functools.partial(conv_transpose, "convT k4s2 256->128 16", 256, 128, 16, 4, 2, 1),
    functools.partial(conv_transpose, "convT k4s2 128->64 32", 128, 64, 32, 4, 2, 1),
    functools.partial(pool, "maxpool3x3 s2 64 112", "MaxPool", 64, 112, 3, 2, 1),
    functools.partial(pool, "avgpool2x2 s2 128 56", "AveragePool", 128, 56, 2, 2),
    functools.partial(pool, "globalavgpool 512 14", "GlobalAveragePool", 512, 14, 0, 0),
    functools.partial(squeeze_excite, "squeeze-excite 144 56", 144, 56, 6),
    functools.partial(squeeze_excite, "squeeze-excite 672 14", 672, 14, 28),
    functools.partial(resize, "resize nearest x2 64 56", "nearest", 64, 56, 2),
    functools.partial(resize, "resize bilinear x2 64 56", "linear", 64, 56, 2),
    # DeepLabV3's last op: the 21 class maps upsampled 16x to the input.
    functools.partial(resize, "resize bilinear x16 21 16", "linear", 21, 16, 16),
    functools.partial(matmul, "matmul 512^3", (), 512, 512, 512),
    functools.partial(matmul, "matmul 1024^3", (), 1024, 1024, 1024),
    functools.partial(matmul, "matmul skinny 16x1024x1024", (), 16, 1024, 1024),
    functools.partial(matmul, "matmul tall 4096x64x256", (), 4096, 64, 256),
    functools.partial(matmul, "gemv 1x1024x1024", (), 1, 1024, 1024),
    functools.partial(gemm, "gemm fc 1x2048x1000", 1, 2048, 1000),
    functools.partial(matmul, "matmul odd 257^3", (), 257, 257, 257),
    functools.partial(matmul, "matmul odd 1000x512x1000", (), 1000, 512, 1000),
    functools.partial(matmul, "batched matmul 12x128x64x128", (1, 12), 128, 64, 128),
    functools.partial(layer_norm, "layernorm 128x768", 128, 768),
    functools.partial(layer_norm, "layernorm 512x1024", 512, 1024),
    functools.partial(softmax, "softmax 128x1000", (128, 1000)),
    functools.partial(softmax, "softmax 12x128x128", (1, 12, 128, 128)),
    functools.partial(attention, "attention 12h 128x64", 12, 128, 64),
    functools.partial(attention, "attention 8h 256x64", 8, 256, 64),
    functools.partial(channel_shuffle, "shuffle unit 232 14", 232, 14),
    functools.partial(inverted_residual, "inverted residual x2 24 56", 24, 56, 2),
    functools.partial(inverted_residual, "inverted residual x3 32 28", 32, 28, 3),
    functools.partial(inverted_residual, "inverted residual x4 64 14", 64, 14, 4),
    functools.partial(inverted_residual, "inverted residual x2 160 7", 160, 7, 2),
    functools.partial(concat_block, "concat 4x1x1 256 28", 256, 28, 4),
    functools.partial(transpose, "transpose NCHW->NHWC 64 56", (1, 64, 56, 56), [0, 2, 3, 1]),
    functools.partial(recurrent, "lstm bidir seq50 b1 256->256", "LSTM", 50, 1, 256, 256,
                      "bidirectional"),
    functools.partial(recurrent, "lstm seq50 b16 256->256", "LSTM", 50, 16, 256, 256),
    functools.partial(recurrent, "gru seq50 b1 256->256", "GRU", 50, 1, 256, 256),
    functools.partial(recurrent, "rnn seq100 b4 128->128", "RNN", 100, 4, 128, 128),
]


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


def run_case(
    case: Case, threads: int, repeats: int, check: bool, settle: float, pipeline: str,
) -> tuple[float, str]:
    """Times one case; returns (ratio, the row's text)."""
    import onnxruntime as ort

    import dlc

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        case.model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, case.inputs)[0]
    start = time.perf_counter()
    executable = dlc.compile(case.model, threads=threads, cache=False, pipeline=pipeline)
    compile_s = time.perf_counter() - start
    args = list(case.inputs.values())
    out = np.empty_like(expected)
    executable(*args, out=(out,))
    error = ""
    if check:
        scale = max(float(np.abs(expected).max()), 1e-30)
        error = f"  err {float(np.abs(out - expected).max()) / scale:7.1e}"
    timings = time_calls(
        {"dlc": functools.partial(executable, *args, out=(out,)),
         "ort": functools.partial(session.run, None, case.inputs)},
        repeats=repeats, warmup=2, settle_seconds=settle,
    )
    dlc_s, ort_s = timings["dlc"].median, timings["ort"].median
    if case.flops:
        rate = f"{case.flops / dlc_s / 1e9:7.1f} GFLOP/s (ort {case.flops / ort_s / 1e9:7.1f})"
    else:
        rate = f"{case.bytes / dlc_s / 1e9:7.1f} GB/s    (ort {case.bytes / ort_s / 1e9:7.1f})"
    ratio = ort_s / dlc_s
    cpu_ratio = timings["ort"].cpu / max(timings["dlc"].cpu, 1e-12)
    return ratio, (
        f"{case.name:<32} dlc {dlc_s * 1e3:8.3f} ms  ort {ort_s * 1e3:8.3f} ms  {rate}"
        f"  ratio {ratio:5.2f} (cpu {cpu_ratio:5.2f}){error}  (compile {compile_s:4.1f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--filter", nargs="*", default=[],
                        help="run only the cases whose name contains one of these substrings")
    parser.add_argument("--check", action="store_true",
                        help="print dlc's largest error relative to ORT's largest output")
    parser.add_argument("--settle", type=float, default=0.1,
                        help="seconds of sleep before each timed batch (see common.time_calls)")
    parser.add_argument("--pipeline", default="cpu")
    parser.add_argument("--bar", type=float, default=0.7,
                        help="list the rows whose ratio is below this at the end")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    args = parser.parse_args()

    import onnxruntime as ort

    print(f"ONNX Runtime {ort.__version__}; {args.threads} thread(s); pipeline {args.pipeline};"
          f" ratio = ORT time / dlc time")
    below: list[str] = []
    for make in CASES:
        name = make.args[0] if isinstance(make, functools.partial) else ""
        if args.filter and not any(f in name for f in args.filter):
            continue
        if args.list:
            print(name)
            continue
        case = make()
        try:
            ratio, row = run_case(case, args.threads, args.repeats, args.check, args.settle,
                                  args.pipeline)
        except Exception as error:  # noqa: BLE001 - a benchmark row reports and goes on
            print(f"{case.name:<32} FAILED: {type(error).__name__}: {error}"[:300], flush=True)
            below.append(f"{case.name} (failed)")
            continue
        print(row, flush=True)
        if ratio < args.bar:
            below.append(f"{case.name} ({ratio:.2f})")
    if below:
        print(f"below {args.bar}x ORT: " + ", ".join(below))


if __name__ == "__main__":
    main()
