"""Post-training static quantization of ONNX models into the standard QDQ format (`dlc quantize`).

Counterpart: `onnxruntime.quantization.quantize_static` (QDQ format) and TVM's
`relay.quantize` calibration. The float model runs (compiled by dlc) on the calibration samples;
each activation that a quantized Conv / MatMul / Gemm reads or writes gets a uint8 range from
the chosen calibration method (min-max, percentile, or KL divergence / entropy as TensorRT and
TVM do it); weights are int8, symmetric, per output channel (or per tensor); biases int32 at
the scale `input_scale * weight_scale`. The result is a plain ONNX model with
`QuantizeLinear` / `DequantizeLinear` pairs, which ONNX Runtime runs as well as dlc (whose
`graph-fold-qdq` turns each pair around a conv or matmul into an integer op). A report gives,
for each quantized layer, the error of its quantized output against the float one on the
calibration data, worst layers first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

METHODS = ("minmax", "percentile", "entropy")
"""The calibration methods."""

_QUANTIZABLE = ("Conv", "MatMul", "Gemm")
"""The ONNX ops whose inputs and outputs get quantized (the weights must be initializers)."""


class QuantizationError(Exception):
    """Bad input to the quantizer: the model, the calibration data or an option."""


# ---------------------------------------------------------------------------------------------
# Calibration data
# ---------------------------------------------------------------------------------------------


def _model_inputs(model: onnx.ModelProto) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    initializers = {t.name for t in model.graph.initializer}
    inputs: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else -1
                     for d in tensor_type.shape.dim)
        dtype = helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        inputs[value.name] = (dims, np.dtype(dtype))
    return inputs


def _matches(shape: Sequence[int], expected: Sequence[int]) -> bool:
    return len(shape) == len(expected) and all(
        e < 0 or s == e for s, e in zip(shape, expected, strict=True))


def load_calibration(source: str | Path | Mapping[str, np.ndarray] | Sequence[Mapping[str, Any]],
                     model: onnx.ModelProto) -> list[dict[str, np.ndarray]]:
    """The calibration samples, one dict of model inputs each, checked against the model.

    `source` is an `.npz` file or a mapping holding, for each model input, either one sample
    (the input's shape) or a stack of them (a leading sample axis); a directory of such `.npz`
    files; or a list of sample dicts. A name that is no model input, a missing input or a
    shape that fits neither form is an error naming the input, raised before any work is done.
    """
    inputs = _model_inputs(model)
    if isinstance(source, str | Path):
        path = Path(source)
        if path.is_dir():
            files = sorted(path.glob("*.npz"))
            if not files:
                raise QuantizationError(f"calibration directory {path}: no .npz files")
            samples: list[dict[str, np.ndarray]] = []
            for file in files:
                samples += _split(dict(np.load(file)), inputs, str(file))
            return samples
        if not path.is_file():
            raise QuantizationError(f"calibration data {path}: no such file or directory")
        with np.load(path) as data:
            return _split(dict(data), inputs, str(path))
    if isinstance(source, Mapping):
        return _split({k: np.asarray(v) for k, v in source.items()}, inputs, "calibration data")
    samples = []
    for index, sample in enumerate(source):
        samples += _split({k: np.asarray(v) for k, v in sample.items()}, inputs,
                          f"calibration sample {index}")
    if not samples:
        raise QuantizationError("calibration data: no samples")
    return samples


def _split(arrays: dict[str, np.ndarray], inputs: Mapping[str, tuple[tuple[int, ...], np.dtype]],
           where: str) -> list[dict[str, np.ndarray]]:
    for name in arrays:
        if name not in inputs:
            raise QuantizationError(
                f"{where}: '{name}' is not an input of the model (inputs: {', '.join(inputs)})")
    counts: set[int] = set()
    stacked: dict[str, np.ndarray] = {}
    for name, (shape, dtype) in inputs.items():
        if name not in arrays:
            raise QuantizationError(f"{where}: no data for model input '{name}' (shape "
                                    f"{list(shape)})")
        array = arrays[name]
        if _matches(array.shape, shape):
            array = array[None]
        elif not _matches(array.shape[1:], shape):
            raise QuantizationError(
                f"{where}: input '{name}' expected shape {list(shape)} (one sample) or "
                f"[N, {', '.join(map(str, shape))}] (N samples), found {list(array.shape)}")
        stacked[name] = array.astype(dtype, copy=False)
        counts.add(array.shape[0])
    if len(counts) > 1:
        raise QuantizationError(f"{where}: inputs hold different numbers of samples: "
                                f"{sorted(counts)}")
    count = counts.pop() if counts else 0
    return [{name: stacked[name][i] for name in inputs} for i in range(count)]


# ---------------------------------------------------------------------------------------------
# Calibration methods: a [low, high] range per tensor
# ---------------------------------------------------------------------------------------------


def minmax_range(values: np.ndarray) -> tuple[float, float]:
    """The observed minimum and maximum."""
    return float(values.min()), float(values.max())


def percentile_range(values: np.ndarray, percentile: float = 99.999) -> tuple[float, float]:
    """The `100 - percentile` and `percentile` percentiles (outliers clipped)."""
    return (float(np.percentile(values, 100 - percentile)),
            float(np.percentile(values, percentile)))


def _kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


def entropy_threshold(magnitudes: np.ndarray, bins: int = 2048, quantized_bins: int = 128
                      ) -> float:
    """The clipping threshold that minimizes the KL divergence between the histogram of
    `magnitudes` and its quantized form (TensorRT's entropy calibration, TVM's `kl_divergence`).

    For each candidate threshold (bin i >= `quantized_bins`): P is the histogram up to i with
    the outliers added to its last bin; Q merges the histogram up to i (without the outliers)
    into `quantized_bins` levels and spreads each level back over its non-empty bins (empty
    ones where P has mass get a small floor); the threshold is the edge of the i with the least
    KL(P || Q).
    """
    top = float(magnitudes.max())
    if top == 0.0:
        return 0.0
    hist, edges = np.histogram(magnitudes, bins=bins, range=(0.0, top))
    hist = hist.astype(np.float64)
    best_i, best_kl = bins, math.inf
    for i in range(quantized_bins, bins + 1, 4 if bins > 512 else 1):
        sliced = hist[:i]
        p = sliced.copy()
        p[-1] += hist[i:].sum()
        nonzero = p > 0
        q = np.zeros(i)
        for chunk in np.array_split(np.arange(i), quantized_bins):
            used = chunk[sliced[chunk] > 0]
            if used.size:
                q[used] = sliced[chunk].sum() / used.size
        p_sum, q_sum = p.sum(), q.sum()
        if p_sum == 0 or q_sum == 0:
            continue
        # Q lacks the clipped outliers: a bin P has and Q has not costs as much as a tiny Q.
        q = np.where(nonzero & (q == 0), 1e-4 * q_sum / i, q)
        kl = _kl_divergence(p / p_sum, q / q.sum())
        if kl < best_kl:
            best_i, best_kl = i, kl
    return float(edges[best_i])


def entropy_range(values: np.ndarray) -> tuple[float, float]:
    """A KL-optimal range: [0, t] for non-negative tensors (255 levels, from the histogram of
    the non-zero values), else [-t, t] (128 levels per sign)."""
    low = float(values.min())
    if low >= 0:  # exact zeros (ReLU's) quantize exactly whatever the threshold: left out
        positive = values[values > 0]
        return 0.0, entropy_threshold(positive, quantized_bins=255) if positive.size else 0.0
    threshold = entropy_threshold(np.abs(values.reshape(-1)), quantized_bins=128)
    return -threshold, threshold


def _range_fn(method: str, percentile: float) -> Callable[[np.ndarray], tuple[float, float]]:
    if method == "minmax":
        return minmax_range
    if method == "percentile":
        if not 50 < percentile <= 100:
            raise QuantizationError(f"expected a percentile in (50, 100], found {percentile}")
        return lambda values: percentile_range(values, percentile)
    if method == "entropy":
        return entropy_range
    raise QuantizationError(f"expected a calibration method in {', '.join(METHODS)}, found "
                            f"'{method}'")


def uint8_params(low: float, high: float) -> tuple[np.float32, np.uint8]:
    """Scale and zero point of uint8 asymmetric quantization of [low, high] (widened to hold
    0, as ONNX Runtime does): `scale = (high - low) / 255`, `zp = round(-low / scale)`."""
    low, high = min(low, 0.0), max(high, 0.0)
    scale = np.float32((high - low) / 255.0)
    if not scale > 0 or not math.isfinite(float(scale)):
        return np.float32(1.0), np.uint8(0)
    zero_point = np.clip(np.rint(-low / float(scale)), 0, 255)
    return scale, np.uint8(zero_point)


def int8_weight_params(weight: np.ndarray, axis: int | None) -> np.ndarray:
    """Symmetric int8 scales (`max |w| / 127`) per channel along `axis`, or one."""
    if axis is None:
        top = np.abs(weight).max(initial=0.0)
    else:
        top = np.abs(np.moveaxis(weight, axis, 0).reshape(weight.shape[axis], -1)).max(axis=1)
    scales = np.asarray(top, np.float64) / 127.0
    return np.where(scales > 0, scales, 1.0).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# The plan: which nodes, which tensors
# ---------------------------------------------------------------------------------------------


@dataclass
class _Layer:
    """A quantized node: its activation input, weight, bias, and the tensor where its output is
    quantized (after a following bias Add and/or Relu)."""

    node: onnx.NodeProto
    index: int
    """The node's position in the graph."""
    activation: str
    weight: str
    weight_axis: int
    bias: str | None
    output: str


def _consumers(graph: onnx.GraphProto) -> dict[str, list[onnx.NodeProto]]:
    users: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    return users


def fold_batch_norms(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` with each BatchNormalization that is the only consumer of a Conv with
    initializer weights folded into the conv's weights and bias (ORT's quantization
    pre-processing does the same), so that the quantized conv computes the normalized value."""
    folded = onnx.ModelProto()
    folded.CopyFrom(model)
    graph = folded.graph
    initializers = {t.name: t for t in graph.initializer}
    users = _consumers(graph)
    outputs = {o.name for o in graph.output}
    removed: set[int] = set()
    for conv in graph.node:
        if conv.op_type != "Conv" or len(conv.input) < 2 or conv.input[1] not in initializers:
            continue
        followers = users.get(conv.output[0], [])
        if len(followers) != 1 or followers[0].op_type != "BatchNormalization":
            continue
        bn = followers[0]
        if conv.output[0] in outputs or not all(n in initializers for n in bn.input[1:5]):
            continue
        if len(conv.input) > 2 and conv.input[2] and conv.input[2] not in initializers:
            continue
        gamma, beta, mean, var = (numpy_helper.to_array(initializers[n]).astype(np.float64)
                                  for n in bn.input[1:5])
        epsilon = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        scale = gamma / np.sqrt(var + epsilon)
        weight = numpy_helper.to_array(initializers[conv.input[1]]).astype(np.float64)
        bias = (numpy_helper.to_array(initializers[conv.input[2]]).astype(np.float64)
                if len(conv.input) > 2 and conv.input[2] else np.zeros(weight.shape[0]))
        w_name, b_name = f"{conv.input[1]}_bn_folded", f"{bn.output[0]}_bias"
        graph.initializer.extend([
            numpy_helper.from_array((weight * scale[:, None, None, None]).astype(np.float32),
                                    w_name),
            numpy_helper.from_array(((bias - mean) * scale + beta).astype(np.float32), b_name)])
        del conv.input[1:]
        conv.input.extend([w_name, b_name])
        conv.output[0] = bn.output[0]
        removed.add(id(bn))
    kept = [n for n in graph.node if id(n) not in removed]
    del graph.node[:]
    graph.node.extend(kept)
    used = {n for node in graph.node for n in node.input}
    live = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live)
    return folded


def _weight_axis(node: onnx.NodeProto, weight: np.ndarray) -> int | None:
    """The output-channel axis of a quantizable node's weight, or None when the node does not
    qualify (a Conv that is not 2-D, a Gemm with transA, alpha or beta, a non-matrix MatMul)."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "Conv":
        return 0 if weight.ndim == 4 else None
    if weight.ndim != 2:
        return None
    if node.op_type == "Gemm":
        scaled = attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0
        if attrs.get("transA", 0) or scaled:
            return None
        return 0 if attrs.get("transB", 0) else 1
    return 1


def _quantized_output(node: onnx.NodeProto, has_bias: bool, users: dict[str, list[onnx.NodeProto]],
                      initializers: Mapping[str, onnx.TensorProto], graph_outputs: set[str],
                      keep_float: Sequence[str]) -> str:
    """Where a layer's output is quantized: after a following bias Add (MatMul) or residual
    Add (a Conv's output plus another tensor, ResNet's shortcut) and a Relu, when each is the
    only consumer. Both convs of a residual Add (the block's and a downsample shortcut's) then
    share one quantized output, the sum's."""
    output = node.output[0]
    for follower in ("Add", "Relu"):
        followers = users.get(output, [])
        if (len(followers) != 1 or followers[0].op_type != follower
                or output in graph_outputs or followers[0].name in keep_float):
            continue
        if follower == "Add":
            other = [i for i in followers[0].input if i != output]
            if len(other) != 1:
                continue
            bias_add = node.op_type == "MatMul" and not has_bias and other[0] in initializers
            # A residual connection: conv + shortcut [+ ReLU] quantized once, at the end (as
            # TensorRT fuses it), not the conv's output and then the sum again.
            residual = node.op_type == "Conv" and other[0] not in initializers
            if not (bias_add or residual):
                continue
        output = followers[0].output[0]
    return output


def _plan(model: onnx.ModelProto, keep_float: Sequence[str]) -> list[_Layer]:
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    users = _consumers(graph)
    graph_outputs = {o.name for o in graph.output}
    names = {n.name for n in graph.node}
    unknown = [k for k in keep_float if k not in names]
    if unknown:
        raise QuantizationError(f"--keep-float: no node named {', '.join(map(repr, unknown))} "
                                f"in the model")
    layers: list[_Layer] = []
    for position, node in enumerate(graph.node):
        if node.op_type not in _QUANTIZABLE or node.name in keep_float:
            continue
        if len(node.input) < 2 or node.input[1] not in initializers:
            continue
        weight = numpy_helper.to_array(initializers[node.input[1]])
        axis = _weight_axis(node, weight)
        if weight.dtype != np.float32 or axis is None:
            continue
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        if bias is not None and (bias not in initializers
                                 or len(initializers[bias].dims) != 1):
            continue
        output = _quantized_output(node, bias is not None, users, initializers, graph_outputs,
                                   keep_float)
        layers.append(_Layer(node, position, node.input[0], node.input[1], axis, bias, output))
    return layers


# ---------------------------------------------------------------------------------------------
# Running models (dlc compiles them) with intermediate tensors as outputs
# ---------------------------------------------------------------------------------------------


def _with_outputs(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """A copy of `model` that also outputs the tensors `names` (types from shape inference)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    known = {v.name: v for v in (*inferred.graph.value_info, *inferred.graph.input,
                                 *inferred.graph.output)}
    extended = onnx.ModelProto()
    extended.CopyFrom(model)
    present = {o.name for o in extended.graph.output}
    for name in names:
        if name in present:
            continue
        if name not in known:
            raise QuantizationError(f"cannot infer the type of tensor '{name}'")
        extended.graph.output.append(known[name])
        present.add(name)
    return extended


Runner = Callable[[onnx.ModelProto], Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]]
"""Compiles a model and returns a function from inputs to all named outputs."""


def dlc_runner(model: onnx.ModelProto) -> Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """Run with dlc itself (the default)."""
    from dlc.api import compile as dlc_compile

    executable = dlc_compile(model)
    return executable.run


def onnxruntime_runner(model: onnx.ModelProto
                       ) -> Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """Run with ONNX Runtime (CPU), where it is installed."""
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return dict(zip(names, session.run(names, inputs), strict=True))

    return run


RUNNERS: dict[str, Runner] = {"dlc": dlc_runner, "onnxruntime": onnxruntime_runner}
"""How the quantizer runs models, by name."""


# ---------------------------------------------------------------------------------------------
# Building the QDQ model
# ---------------------------------------------------------------------------------------------


@dataclass
class LayerError:
    """The quantization error of one layer's output on the calibration data."""

    node: str
    op_type: str
    tensor: str
    relative_error: float
    """||q - f|| / ||f|| over all samples."""
    max_abs_error: float
    sqnr_db: float
    """Signal to quantization noise ratio, 10 log10(||f||² / ||q - f||²)."""


@dataclass
class QuantizeResult:
    """The quantized model and what the quantizer found."""

    model: onnx.ModelProto
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    layers: list[LayerError] = field(default_factory=list)
    """Per-layer errors, worst (largest relative error) first."""
    quantized_nodes: list[str] = field(default_factory=list)
    kept_float: list[str] = field(default_factory=list)

    def report(self) -> str:
        """The per-layer error table, worst layers first."""
        lines = [f"quantized {len(self.quantized_nodes)} nodes"
                 + (f"; kept in float: {', '.join(self.kept_float)}" if self.kept_float else ""),
                 f"{'node':<28} {'op':<7} {'rel. error':>10} {'max |err|':>10} {'SQNR dB':>8}"]
        for layer in self.layers:
            lines.append(f"{layer.node[:28]:<28} {layer.op_type:<7} {layer.relative_error:>10.4%} "
                         f"{layer.max_abs_error:>10.4g} {layer.sqnr_db:>8.1f}")
        return "\n".join(lines)


def _unique(taken: set[str], base: str) -> str:
    name, count = base, 0
    while name in taken:
        count += 1
        name = f"{base}_{count}"
    taken.add(name)
    return name


def _conv_tap_means(node: onnx.NodeProto, input_mean: np.ndarray, kernel: tuple[int, int],
                    out_shape: tuple[int, int]) -> np.ndarray | None:
    """`A[i, kh, kw]`: the mean over a conv's output positions of the input value that tap
    (kh, kw) of input channel i reads (0 in the padding), from the mean input map
    `input_mean` [C, H, W]; None for an `auto_pad` other than NOTSET."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    if (auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad) != "NOTSET":
        return None
    strides = list(attrs.get("strides", [1, 1]))
    dilations = list(attrs.get("dilations", [1, 1]))
    pads = list(attrs.get("pads", [0, 0, 0, 0]))
    padded = np.pad(input_mean, ((0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    taps = np.zeros((input_mean.shape[0], *kernel))
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            h0, w0 = kh * dilations[0], kw * dilations[1]
            window = padded[:, h0:h0 + strides[0] * (out_shape[0] - 1) + 1:strides[0],
                            w0:w0 + strides[1] * (out_shape[1] - 1) + 1:strides[1]]
            taps[:, kh, kw] = window.mean(axis=(1, 2))
    return taps


def _bias_correction(layer: _Layer, weight: np.ndarray, dequantized: np.ndarray,
                     input_mean: np.ndarray, out_shape: Sequence[int] | None = None
                     ) -> np.ndarray | None:
    """The mean error that int8 weights add to each output channel of a layer on the
    calibration data, to be added to its bias (Nagel et al. 2019, "Data-Free Quantization",
    empirical bias correction): `sum_k (w - dequantize(quantize(w)))[n, k] * E[x_k]`, E[x]
    the calibrated mean input (for a conv, the mean input map, so that taps in the padding
    read 0). Rounding the weights leaves each output channel an error that is constant for a
    constant input; ReLU outputs have a positive mean, so it does not average out, and a
    global pool then passes it to the logits whole (the white rounding noise it averages
    away). None for a MatMul without a bias to put it in."""
    error = weight.astype(np.float64) - dequantized.astype(np.float64)
    if layer.node.op_type == "Conv":
        groups = next((a.i for a in layer.node.attribute if a.name == "group"), 1)
        out_channels, in_per_group = error.shape[:2]
        taps = None
        if input_mean.ndim == 3 and out_shape is not None:
            taps = _conv_tap_means(layer.node, input_mean, error.shape[2:], tuple(out_shape))
        if taps is None:  # the per-channel mean at every tap
            channel = input_mean.reshape(input_mean.shape[0], -1).mean(axis=1)
            taps = np.broadcast_to(channel[:, None, None], (channel.size, *error.shape[2:]))
        taps = taps.reshape(groups, in_per_group, *error.shape[2:])
        group_of = np.arange(out_channels) // (out_channels // groups)
        return np.einsum("oikl,oikl->o", error, taps[group_of])
    if layer.node.op_type == "MatMul" and layer.bias is None:
        return None
    # Gemm's weight is [N, K] with transB (axis 0 is the output), MatMul's [K, N].
    matrix = error if layer.weight_axis == 0 else error.T
    return matrix @ input_mean


def _quantized_weights(layer: _Layer, initializers: Mapping[str, onnx.TensorProto],
                       x_scale: float, per_channel: bool, taken: set[str],
                       input_mean: tuple[np.ndarray, Sequence[int]] | None = None
                       ) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto],
                                  tuple[str, str | None]]:
    """The DequantizeLinear nodes and initializers of a layer's int8 weight (symmetric, per
    channel or per tensor) and int32 bias (at scale x_scale * w_scale), and the names of the
    dequantized weight and bias. With `input_mean` (the calibrated mean input and the layer's
    output spatial shape, see `_channel_mean`) the bias absorbs the mean error of the int8
    weights (`_bias_correction`; a conv or Gemm without a bias gets one)."""
    weight = numpy_helper.to_array(initializers[layer.weight]).astype(np.float32)
    axis = layer.weight_axis if per_channel else None
    w_scale = int8_weight_params(weight, axis)
    shape = [1] * weight.ndim
    if axis is not None:
        shape[axis] = weight.shape[axis]
    w_q = np.clip(np.rint(weight / w_scale.reshape(shape)), -127, 127).astype(np.int8)
    names = [_unique(taken, f"{layer.weight}_{s}") for s in ("quantized", "scale",
                                                            "zero_point", "dequantized")]
    param_shape = w_scale.shape if axis is not None else ()
    tensors = [numpy_helper.from_array(w_q, names[0]),
               numpy_helper.from_array(w_scale.reshape(param_shape), names[1]),
               numpy_helper.from_array(np.zeros(param_shape, np.int8), names[2])]
    axis_attrs = {"axis": axis} if axis is not None else {}
    nodes = [helper.make_node("DequantizeLinear", names[:3], [names[3]],
                              name=_unique(taken, f"{layer.weight}_DequantizeLinear"),
                              **axis_attrs)]
    correction = None
    if input_mean is not None:
        correction = _bias_correction(layer, weight, (w_q * w_scale.reshape(shape)).astype(
            np.float32), *input_mean)
    if layer.bias is None and correction is None:
        return nodes, tensors, (names[3], None)
    if layer.bias is None:
        bias = np.zeros(correction.shape, np.float64)
    else:
        bias = numpy_helper.to_array(initializers[layer.bias]).astype(np.float64)
    if correction is not None:
        bias = bias + correction
    bias_name = layer.bias or f"{layer.weight}_bias"
    b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
    b_q = np.clip(np.rint(bias / np.broadcast_to(b_scale, bias.shape)), -(2**31),
                  2**31 - 1).astype(np.int32)
    b_names = [_unique(taken, f"{bias_name}_{s}") for s in ("quantized", "scale",
                                                            "zero_point", "dequantized")]
    tensors += [numpy_helper.from_array(b_q, b_names[0]),
                numpy_helper.from_array(b_scale.reshape(param_shape), b_names[1]),
                numpy_helper.from_array(np.zeros(param_shape, np.int32), b_names[2])]
    nodes.append(helper.make_node("DequantizeLinear", b_names[:3], [b_names[3]],
                                  name=_unique(taken, f"{bias_name}_DequantizeLinear"),
                                  **({"axis": 0} if axis is not None else {})))
    return nodes, tensors, (names[3], b_names[3])


def _rewired(node: onnx.NodeProto, dequantized: Mapping[str, str],
             weights: tuple[str, str | None] | None, renamed: Mapping[str, str]
             ) -> onnx.NodeProto:
    """A copy of `node` reading dequantized activations (and weights, for a quantized layer)
    and writing its outputs under their `renamed` names."""
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    for index, name in enumerate(copy.input):
        if name in dequantized:
            copy.input[index] = dequantized[name]
    if weights is not None:
        copy.input[1] = weights[0]
        if weights[1] is not None:
            if len(copy.input) > 2:
                copy.input[2] = weights[1]
            else:  # a bias that bias correction added
                copy.input.append(weights[1])
    for index, name in enumerate(copy.output):
        copy.output[index] = renamed.get(name, name)
    return copy


def _build_qdq(model: onnx.ModelProto, layers: list[_Layer],
               params: dict[str, tuple[np.float32, np.uint8]], per_channel: bool,
               input_means: Mapping[int, tuple[np.ndarray, Sequence[int]]] | None = None
               ) -> onnx.ModelProto:
    quantized = onnx.ModelProto()
    quantized.CopyFrom(model)
    graph = quantized.graph
    for opset in quantized.opset_import:
        if opset.domain in ("", "ai.onnx") and opset.version < 13:
            opset.version = 13  # DequantizeLinear's per-axis form
    initializers = {t.name: t for t in graph.initializer}
    taken = {t.name for t in graph.initializer} | {n for node in graph.node for n in
                                                      (*node.input, *node.output)}
    taken |= {v.name for v in graph.input}
    new_initializers: list[onnx.TensorProto] = []
    graph_outputs = {o.name for o in graph.output}
    # A quantized graph output keeps its name on the dequantized value; the float one is renamed.
    source = {t: (_unique(taken, f"{t}_float") if t in graph_outputs else t) for t in params}
    # 1. Activations: x -> QuantizeLinear -> DequantizeLinear -> x_dequantized, which every
    #    consumer of x reads.
    dequantized: dict[str, str] = {}
    qdq_nodes: dict[str, list[onnx.NodeProto]] = {}
    for tensor, (scale, zero_point) in params.items():
        scale_name = _unique(taken, f"{tensor}_scale")
        zp_name = _unique(taken, f"{tensor}_zero_point")
        new_initializers += [numpy_helper.from_array(np.array(scale, np.float32), scale_name),
                             numpy_helper.from_array(np.array(zero_point, np.uint8), zp_name)]
        q_out = _unique(taken, f"{tensor}_quantized")
        dq_out = tensor if tensor in graph_outputs else _unique(taken, f"{tensor}_dequantized")
        qdq_nodes[tensor] = [
            helper.make_node("QuantizeLinear", [source[tensor], scale_name, zp_name], [q_out],
                             name=_unique(taken, f"{tensor}_QuantizeLinear")),
            helper.make_node("DequantizeLinear", [q_out, scale_name, zp_name], [dq_out],
                             name=_unique(taken, f"{tensor}_DequantizeLinear")),
        ]
        dequantized[tensor] = dq_out
    # 2. Weights (int8, symmetric) and biases (int32 at scale x_scale * w_scale) of each layer.
    weight_nodes: dict[int, list[onnx.NodeProto]] = {}
    weight_inputs: dict[int, tuple[str, str | None]] = {}
    for layer in layers:
        nodes_of_layer, tensors, inputs = _quantized_weights(
            layer, initializers, float(params[layer.activation][0]), per_channel, taken,
            None if input_means is None else input_means.get(layer.index))
        new_initializers += tensors
        weight_nodes[layer.index] = nodes_of_layer
        weight_inputs[layer.index] = inputs
    # 3. The node list: QDQ pairs right after each quantized tensor's producer, weights right
    #    before their layer; consumers read dequantized activations and weights.
    nodes: list[onnx.NodeProto] = []
    produced = {o for n in graph.node for o in n.output}
    for tensor in params:
        if tensor not in produced:  # a graph input
            nodes.extend(qdq_nodes[tensor])
    for position, node in enumerate(graph.node):
        nodes.extend(weight_nodes.get(position, []))
        nodes.append(_rewired(node, dequantized, weight_inputs.get(position), source))
        for output in node.output:
            if output in qdq_nodes:
                nodes.extend(qdq_nodes[output])
    del graph.node[:]
    graph.node.extend(nodes)
    used = {n for node in nodes for n in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + [t for t in new_initializers if t.name in used])
    onnx.checker.check_model(quantized)
    return quantized


# ---------------------------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------------------------


def quantize(
    model: str | Path | onnx.ModelProto,
    calibration: str | Path | Mapping[str, np.ndarray] | Sequence[Mapping[str, Any]],
    output: str | Path | None = None,
    *,
    method: str = "minmax",
    percentile: float = 99.999,
    per_channel: bool = True,
    keep_float: Sequence[str] = (),
    runner: str = "dlc",
    report: bool = True,
    bias_correction: bool = True,
) -> QuantizeResult:
    """Quantize `model` to int8 (QDQ ONNX) with ranges calibrated on `calibration`.

    Args:
        model: an ONNX model (path or proto) with float Conv / MatMul / Gemm layers whose
            weights are initializers.
        calibration: samples of the model's inputs (see `load_calibration`).
        output: where to save the quantized model (written only once everything succeeded).
        method: `minmax`, `percentile` or `entropy` (KL divergence).
        percentile: the percentile the `percentile` method keeps (default 99.999).
        per_channel: int8 weight scales per output channel (default) or per tensor.
        keep_float: names of nodes left in float.
        runner: what runs the models for calibration and the report: `dlc` (compiled by dlc)
            or `onnxruntime`.
        report: measure each layer's error (runs the quantized model on the calibration data).
        bias_correction: fold the mean error that each layer's int8 weights add to its
            output on the calibration data into its bias (default; `_bias_correction`).

    Returns:
        The quantized model, the calibrated ranges and the per-layer errors, worst first.

    Raises:
        QuantizationError: bad calibration data (naming the input), an unknown method or node
            name; raised before any model is compiled.
    """
    proto = onnx.load(str(model)) if isinstance(model, str | Path) else model
    proto = fold_batch_norms(proto)
    range_of = _range_fn(method, percentile)
    if runner not in RUNNERS:
        raise QuantizationError(f"expected a runner in {', '.join(RUNNERS)}, found '{runner}'")
    samples = load_calibration(calibration, proto)
    if not samples:
        raise QuantizationError("calibration data: no samples")
    layers = _plan(proto, keep_float)
    if not layers:
        raise QuantizationError("the model has no Conv, MatMul or Gemm with initializer "
                                "weights to quantize")
    tensors = list(dict.fromkeys([t for layer in layers for t in (layer.activation,
                                                                   layer.output)]))
    run = RUNNERS[runner](_with_outputs(proto, tensors))
    collected: dict[str, list[np.ndarray]] = {t: [] for t in tensors}
    float_outputs: list[dict[str, np.ndarray]] = []
    for sample in samples:
        outputs = run(sample)
        for tensor in tensors:
            collected[tensor].append(np.asarray(outputs[tensor], np.float32))
        float_outputs.append({t: outputs[t] for t in tensors})
    ranges = {t: range_of(np.concatenate([v.reshape(-1) for v in values]))
              for t, values in collected.items()}
    params = {t: uint8_params(*ranges[t]) for t in tensors}
    means = ({layer.index: (_channel_mean(collected[layer.activation], layer),
                            collected[layer.output][0].shape[2:]) for layer in layers}
             if bias_correction else None)
    quantized = _build_qdq(proto, layers, params, per_channel, means)
    result = QuantizeResult(quantized, ranges, [], [layer.node.name or layer.node.output[0]
                                                    for layer in layers], list(keep_float))
    if report:
        result.layers = _layer_errors(quantized, layers, samples, float_outputs, runner)
    if output is not None:
        _save_atomically(quantized, Path(output))
    return result


def _channel_mean(values: list[np.ndarray], layer: _Layer) -> np.ndarray:
    """The mean over the calibration samples of a layer's activation: for a 2-D conv, the
    mean input map [C, H, W] (over samples and batch); else of each channel of the last
    axis."""
    if layer.node.op_type == "Conv" and values[0].ndim == 4:
        return np.mean([v.astype(np.float64).mean(axis=0) for v in values], axis=0)
    total = sum(v.reshape(-1, v.shape[-1]).astype(np.float64).sum(0) for v in values)
    count = sum(v.size // v.shape[-1] for v in values)
    return np.asarray(total, np.float64) / count


def _layer_errors(quantized: onnx.ModelProto, layers: list[_Layer],
                  samples: list[dict[str, np.ndarray]],
                  float_outputs: list[dict[str, np.ndarray]], runner: str) -> list[LayerError]:
    outputs = {o.name for o in quantized.graph.output}
    observed = {layer.output: (layer.output if layer.output in outputs
                               else f"{layer.output}_dequantized") for layer in layers}
    run = RUNNERS[runner](_with_outputs(quantized, list(observed.values())))
    errors: list[LayerError] = []
    results = [run(sample) for sample in samples]
    for layer in layers:
        f = np.concatenate([o[layer.output].reshape(-1) for o in float_outputs]).astype(
            np.float64)
        q = np.concatenate([r[observed[layer.output]].reshape(-1) for r in results]).astype(
            np.float64)
        noise = float(np.sum((q - f) ** 2))
        signal = float(np.sum(f ** 2))
        errors.append(LayerError(
            layer.node.name or layer.node.output[0], layer.node.op_type, layer.output,
            math.sqrt(noise / signal) if signal > 0 else math.sqrt(noise),
            float(np.max(np.abs(q - f))) if q.size else 0.0,
            10 * math.log10(signal / noise) if noise > 0 and signal > 0 else math.inf))
    errors.sort(key=lambda e: e.relative_error, reverse=True)
    return errors


def _save_atomically(model: onnx.ModelProto, path: Path) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        onnx.save(model, str(temporary))
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)
