"""Whole models for dlc's benchmarks and tests, built as ONNX with `onnx.helper` and seeded weights.

Counterpart: TVM's `tvm.relay.testing` workloads (resnet, mlp) — here as ONNX files, so that every
peer (ONNX Runtime, ONNX's reference evaluator, dlc) reads the same model.

- `resnet18`: torchvision's ResNet-18 (BasicBlocks 2-2-2-2, batch norm, 1000 classes);
- `transformer_block`: one post-norm transformer encoder layer (multi-head self-attention + MLP);
- `mlp`: a multilayer perceptron (784-512-512-10 by default);
- `light_resnet50`: the `light_resnet50` graph that the onnx package ships for its backend tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
"""The default-domain opset the builders target (LayerNormalization needs 17)."""


@dataclass
class GraphBuilder:
    """Accumulates the nodes and initializers of one ONNX graph, naming values uniquely.

    Weights are drawn from `rng` with He-style scaling, so that activations stay in range through
    deep networks (and comparisons against a reference stay meaningful).
    """

    rng: np.random.Generator
    nodes: list[onnx.NodeProto] = field(default_factory=list[onnx.NodeProto])
    initializers: list[onnx.TensorProto] = field(default_factory=list[onnx.TensorProto])
    counts: dict[str, int] = field(default_factory=dict[str, int])

    def fresh(self, base: str) -> str:
        """`base` the first time, then `base_1`, `base_2`, ..."""
        count = self.counts.get(base, 0)
        self.counts[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def weight(self, name: str, array: np.ndarray) -> str:
        """Adds `array` as an initializer; returns its name."""
        name = self.fresh(name)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def normal(self, name: str, shape: tuple[int, ...], scale: float) -> str:
        """An initializer of normal samples with standard deviation `scale`."""
        return self.weight(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def node(self, op_type: str, inputs: list[str], name: str, **attributes: object) -> str:
        """Adds one node with one output (named after the node); returns the output's name."""
        name = self.fresh(name)
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attributes))
        return name

    def model(
        self, name: str, inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto]
    ) -> onnx.ModelProto:
        """The finished model at `OPSET`, checked by `onnx.checker`."""
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model

    # -- layers ----------------------------------------------------------------------------------

    def conv_bn(
        self, x: str, cin: int, cout: int, kernel: int, stride: int, name: str, relu: bool
    ) -> str:
        """Conv (no bias) + BatchNormalization (+ Relu), as exported from PyTorch."""
        pad = kernel // 2
        w = self.normal(f"{name}.weight", (cout, cin, kernel, kernel),
                        np.sqrt(2.0 / (cin * kernel * kernel)))
        y = self.node("Conv", [x, w], name, kernel_shape=[kernel, kernel],
                      strides=[stride, stride], pads=[pad] * 4)
        scale = self.weight(f"{name}.bn.weight",
                            self.rng.uniform(0.5, 1.0, cout).astype(np.float32))
        shift = self.normal(f"{name}.bn.bias", (cout,), 0.1)
        mean = self.normal(f"{name}.bn.running_mean", (cout,), 0.1)
        var = self.weight(f"{name}.bn.running_var",
                          self.rng.uniform(0.5, 1.5, cout).astype(np.float32))
        y = self.node("BatchNormalization", [y, scale, shift, mean, var], f"{name}.bn",
                      epsilon=1e-5)
        return self.node("Relu", [y], f"{name}.relu") if relu else y

    def linear(self, x: str, din: int, dout: int, name: str) -> str:
        """MatMul by a (din, dout) weight + Add of a bias (a `nn.Linear` as exported)."""
        w = self.normal(f"{name}.weight", (din, dout), np.sqrt(1.0 / din))
        b = self.normal(f"{name}.bias", (dout,), 0.02)
        y = self.node("MatMul", [x, w], f"{name}.matmul")
        return self.node("Add", [y, b], f"{name}.add")

    def layer_norm(self, x: str, dim: int, name: str) -> str:
        """LayerNormalization over the last axis with a learned scale and shift."""
        scale = self.weight(f"{name}.weight", self.rng.uniform(0.8, 1.2, dim).astype(np.float32))
        shift = self.normal(f"{name}.bias", (dim,), 0.05)
        return self.node("LayerNormalization", [x, scale, shift], name, axis=-1, epsilon=1e-5)

    def shape(self, name: str, dims: list[int]) -> str:
        """An int64 initializer holding a target shape (for Reshape)."""
        return self.weight(name, np.array(dims, dtype=np.int64))


def _value(name: str, shape: list[int], elem_type: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, shape)


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------


def resnet18(batch: int = 1, image: int = 224, classes: int = 1000, seed: int = 0
             ) -> onnx.ModelProto:
    """ResNet-18 (He et al. 2016, torchvision's layout) with seeded random weights.

    Input `input` of shape (batch, 3, image, image), output `logits` (batch, classes).
    """
    g = GraphBuilder(np.random.default_rng(seed))
    y = g.conv_bn("input", 3, 64, 7, 2, "conv1", relu=True)
    y = g.node("MaxPool", [y], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512), start=1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            name = f"layer{stage}.{block}"
            h = g.conv_bn(y, cin, cout, 3, stride, f"{name}.conv1", relu=True)
            h = g.conv_bn(h, cout, cout, 3, 1, f"{name}.conv2", relu=False)
            shortcut = y
            if stride != 1 or cin != cout:
                shortcut = g.conv_bn(y, cin, cout, 1, stride, f"{name}.downsample", relu=False)
            y = g.node("Add", [h, shortcut], f"{name}.add")
            y = g.node("Relu", [y], f"{name}.relu")
            cin = cout
    y = g.node("GlobalAveragePool", [y], "avgpool")
    y = g.node("Flatten", [y], "flatten", axis=1)
    w = g.normal("fc.weight", (classes, cin), np.sqrt(1.0 / cin))
    b = g.normal("fc.bias", (classes,), 0.01)
    y = g.node("Gemm", [y, w, b], "fc", transB=1)
    g.nodes[-1].output[0] = "logits"
    return g.model("resnet18", [_value("input", [batch, 3, image, image])],
                   [_value("logits", [batch, classes])])


def transformer_block(seq: int = 128, hidden: int = 256, heads: int = 4, mlp: int = 1024,
                      batch: int | str = 1, seed: int = 0) -> onnx.ModelProto:
    """One post-norm transformer encoder layer (BERT's): self-attention, residual, LayerNorm,
    MLP with GELU, residual, LayerNorm. Input `x` and output `y` of shape (batch, seq, hidden);
    a symbolic `batch` ("N") makes the head views from `x`'s shape, as exporters write
    `x.view(x.size(0), ...)` (Shape, Gather, Unsqueeze, Concat)."""
    if hidden % heads:
        raise ValueError(f"expected hidden {hidden} divisible by heads {heads}")
    head = hidden // heads
    g = GraphBuilder(np.random.default_rng(seed))
    if isinstance(batch, str):
        size = g.node("Gather", [g.node("Shape", ["x"], "x.shape"),
                                 g.weight("zero", np.array(0, np.int64))], "x.size0", axis=0)
        rows = g.node("Unsqueeze", [size, g.weight("axis0", np.array([0], np.int64))], "rows")
        split = g.node("Concat", [rows, g.shape("split_heads", [seq, heads, head])],
                       "split_heads.concat", axis=0)
        merge = g.node("Concat", [rows, g.shape("merge_heads", [seq, hidden])],
                       "merge_heads.concat", axis=0)
    else:
        split = g.shape("split_heads", [batch, seq, heads, head])
        merge = g.shape("merge_heads", [batch, seq, hidden])

    def heads_of(name: str, transpose: list[int]) -> str:
        projected = g.linear("x", hidden, hidden, f"attn.{name}")
        reshaped = g.node("Reshape", [projected, split], f"attn.{name}.reshape")
        return g.node("Transpose", [reshaped], f"attn.{name}.transpose", perm=transpose)

    q = heads_of("q", [0, 2, 1, 3])
    k = heads_of("k", [0, 2, 3, 1])
    v = heads_of("v", [0, 2, 1, 3])
    scores = g.node("MatMul", [q, k], "attn.scores")
    scale = g.weight("attn.scale", np.array(1.0 / np.sqrt(head), dtype=np.float32))
    scores = g.node("Mul", [scores, scale], "attn.scale_scores")
    probs = g.node("Softmax", [scores], "attn.softmax", axis=-1)
    context = g.node("MatMul", [probs, v], "attn.context")
    context = g.node("Transpose", [context], "attn.context.transpose", perm=[0, 2, 1, 3])
    context = g.node("Reshape", [context, merge], "attn.context.reshape")
    attended = g.linear(context, hidden, hidden, "attn.out")
    y = g.node("Add", ["x", attended], "attn.residual")
    y = g.layer_norm(y, hidden, "norm1")
    h = g.linear(y, hidden, mlp, "mlp.fc1")
    h = _gelu(g, h)
    h = g.linear(h, mlp, hidden, "mlp.fc2")
    y = g.node("Add", [y, h], "mlp.residual")
    y = g.layer_norm(y, hidden, "norm2")
    g.nodes[-1].output[0] = "y"
    return g.model("transformer_block", [_value("x", [batch, seq, hidden])],
                   [_value("y", [batch, seq, hidden])])


def _gelu(g: GraphBuilder, x: str) -> str:
    """GELU (erf form) from opset-17 ops: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    inv_sqrt2 = g.weight("gelu.inv_sqrt2", np.array(1.0 / np.sqrt(2.0), dtype=np.float32))
    one = g.weight("gelu.one", np.array(1.0, dtype=np.float32))
    half = g.weight("gelu.half", np.array(0.5, dtype=np.float32))
    t = g.node("Mul", [x, inv_sqrt2], "mlp.gelu.scale")
    t = g.node("Erf", [t], "mlp.gelu.erf")
    t = g.node("Add", [t, one], "mlp.gelu.add")
    t = g.node("Mul", [x, t], "mlp.gelu.mul")
    return g.node("Mul", [t, half], "mlp.gelu.half")


def mlp(batch: int = 64, sizes: tuple[int, ...] = (784, 512, 512, 10), seed: int = 0
        ) -> onnx.ModelProto:
    """A multilayer perceptron: Gemm + Relu between `sizes`, logits out (no softmax).

    Input `x` (batch, sizes[0]), output `logits` (batch, sizes[-1]).
    """
    g = GraphBuilder(np.random.default_rng(seed))
    y = "x"
    for index, (din, dout) in enumerate(zip(sizes, sizes[1:], strict=False)):
        w = g.normal(f"fc{index}.weight", (dout, din), np.sqrt(2.0 / din))
        b = g.normal(f"fc{index}.bias", (dout,), 0.01)
        y = g.node("Gemm", [y, w, b], f"fc{index}", transB=1)
        if index < len(sizes) - 2:
            y = g.node("Relu", [y], f"relu{index}")
    g.nodes[-1].output[0] = "logits"
    return g.model("mlp", [_value("x", [batch, sizes[0]])], [_value("logits", [batch, sizes[-1]])])


def yolo_style(channels: int = 8, batch: int | str = "N", height: int | str = "H",
               width: int | str = "W", seed: int = 3, flat_head: bool = False
               ) -> onnx.ModelProto:
    """A small YOLO-style detector over `x` (batch, 3, height, width), dims symbolic by default
    (height and width multiples of 8 at run time): three strided conv + SiLU stages, an SPPF
    block (three chained 5x5 max pools, concatenated, 1x1 conv), a nearest x2 upsample
    concatenated with the stride-4 features, and two 1x1 detection heads (`head4`, `head8`).
    With `flat_head`, as YOLOv8 exports its head: each head's plane flattened
    (`x.view(n, c, -1)`: Shape, Slice, Concat with -1, Reshape) and both concatenated along
    it into one output `boxes` (batch, 6, H4 * W4 + H8 * W8)."""
    g = GraphBuilder(np.random.default_rng(seed))

    def conv_silu(x: str, cin: int, cout: int, k: int, stride: int, name: str) -> str:
        w = g.normal(f"{name}.weight", (cout, cin, k, k), np.sqrt(1.0 / (cin * k * k)))
        b = g.normal(f"{name}.bias", (cout,), 0.1)
        c = g.node("Conv", [x, w, b], name, strides=[stride] * 2, pads=[k // 2] * 4)
        return g.node("Mul", [c, g.node("Sigmoid", [c], f"{name}.sigmoid")], f"{name}.silu")

    c = channels
    s4 = conv_silu(conv_silu("x", 3, c, 3, 2, "stem"), c, 2 * c, 3, 2, "stage4")
    pools = [conv_silu(s4, 2 * c, 4 * c, 3, 2, "stage8")]
    for i in range(3):
        pools.append(g.node("MaxPool", [pools[-1]], f"sppf.pool{i}", kernel_shape=[5, 5],
                            pads=[2] * 4))
    sppf = conv_silu(g.node("Concat", pools, "sppf.concat", axis=1), 16 * c, 4 * c, 1, 1, "sppf")
    scales = g.weight("upsample.scales", np.array([1, 1, 2, 2], np.float32))
    up = g.node("Resize", [sppf, "", scales], "upsample", mode="nearest")
    neck = conv_silu(g.node("Concat", [up, s4], "neck.concat", axis=1), 6 * c, 2 * c, 3, 1, "neck")
    for head, source, cin in (("head4", neck, 2 * c), ("head8", sppf, 4 * c)):
        w = g.normal(f"{head}.weight", (6, cin, 1, 1), 0.1)
        g.node("Conv", [source, w], head)
    if flat_head:
        starts, ends = g.weight("view.starts", np.array([0], np.int64)), g.weight(
            "view.ends", np.array([2], np.int64))
        rest = g.weight("view.rest", np.array([-1], np.int64))
        flat = [g.node("Reshape", [head, g.node("Concat", [g.node(
            "Slice", [g.node("Shape", [head], f"{head}.shape"), starts, ends], f"{head}.nc"),
            rest], f"{head}.target", axis=0)], f"{head}.flat") for head in ("head4", "head8")]
        g.node("Concat", flat, "boxes", axis=2)
        return g.model("yolo_style", [_value("x", [batch, 3, height, width])],  # type: ignore[list-item]
                       [_value("boxes", [batch, 6, "A"])])  # type: ignore[list-item]
    return g.model("yolo_style", [_value("x", [batch, 3, height, width])],  # type: ignore[list-item]
                   [_value("head4", [batch, 6, "H4", "W4"]),  # type: ignore[list-item]
                    _value("head8", [batch, 6, "H8", "W8"])])  # type: ignore[list-item]


def light_resnet50_path() -> Path:
    """The `light_resnet50.onnx` the onnx package ships (weights made by ConstantOfShape)."""
    return Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"


def light_resnet50() -> onnx.ModelProto:
    """ResNet-50 from the onnx package's light model set (input `data_0`, 1x3x224x224)."""
    return onnx.load(light_resnet50_path())


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet18": resnet18,
    "light_resnet50": light_resnet50,
    "transformer": transformer_block,
    "mlp": mlp,
}
"""The benchmark models by name, each a builder with its default (benchmarked) configuration."""


def random_inputs(model: onnx.ModelProto, seed: int = 0, int_high: int = 4
                  ) -> dict[str, np.ndarray]:
    """Seeded inputs for `model`'s graph inputs: standard-normal floats, integers (token ids,
    indices) drawn from [0, int_high)."""
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    inputs: dict[str, np.ndarray] = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        shape = [d.dim_value for d in tensor_type.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        if np.issubdtype(dtype, np.floating):
            inputs[value.name] = rng.standard_normal(shape).astype(dtype)
        else:
            inputs[value.name] = rng.integers(0, int_high, shape).astype(dtype)
    return inputs
