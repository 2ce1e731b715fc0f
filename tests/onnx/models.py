"""Small ONNX models built in memory for the frontend's tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

Shape = Sequence[int | str]


def tensor(name: str, shape: Shape | None, elem_type: int = TensorProto.FLOAT
           ) -> onnx.ValueInfoProto:
    """A tensor value info (`shape` None: unknown rank)."""
    return helper.make_tensor_value_info(name, elem_type, None if shape is None else list(shape))


def model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
          outputs: Sequence[onnx.ValueInfoProto], initializers: dict[str, np.ndarray] | None = None,
          opset: int = 17) -> onnx.ModelProto:
    """A model over the default domain at `opset`."""
    graph = helper.make_graph(
        list(nodes), "test", list(inputs), list(outputs),
        initializer=[numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def conv_block(batch: int | str = 1) -> onnx.ModelProto:
    """x -> Conv(3x3, bias) -> Relu -> MaxPool -> Flatten -> Gemm(transB) -> Softmax."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu1"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten1"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["g"], name="fc1", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax1", axis=1),
    ]
    weights = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal(4).astype(np.float32),
        "fc_w": rng.standard_normal((10, 64)).astype(np.float32),
        "fc_b": rng.standard_normal(10).astype(np.float32),
    }
    return model(nodes, [tensor("x", [batch, 3, 8, 8])], [tensor("y", [batch, 10])], weights)


def shape_chain() -> onnx.ModelProto:
    """x (2x3x4) reshaped to (2, 12) through Shape -> Gather -> Unsqueeze -> Concat."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    constants = {"zero": np.array(0, np.int64), "axes": np.array([0], np.int64),
                 "minus_one": np.array([-1], np.int64)}
    return model(nodes, [tensor("x", [2, 3, 4])], [tensor("y", [2, 12])], constants)


def torch_detector(path: Path) -> onnx.ModelProto:
    """A YOLOv5-style detector written in PyTorch (conv + batch norm + SiLU stages, a nearest
    upsample concatenated with the stride-8 features, and the decode head: `view(bs, na, no,
    ny, nx).permute(...)`, sigmoid, a meshgrid of the feature map's size, anchors), exported by
    `torch.onnx.export` with dynamic batch, height and width as exporters write it (Shape,
    Gather, Range, Expand, Reshape with computed targets)."""
    torch = pytest.importorskip("torch")
    nn = torch.nn

    def stage(c1: int, c2: int, stride: int = 1) -> object:
        return nn.Sequential(nn.Conv2d(c1, c2, 3, stride, 1, bias=False), nn.BatchNorm2d(c2),
                             nn.SiLU())

    class Detector(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.p3 = nn.Sequential(stage(3, 8, 2), stage(8, 16, 2), stage(16, 16, 2))
            self.p4 = nn.Sequential(stage(16, 32, 2), stage(32, 32))
            self.neck = stage(48, 16)
            self.heads = nn.ModuleList(nn.Conv2d(c, 3 * 8, 1) for c in (16, 32))
            self.register_buffer("anchors", torch.tensor(
                [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]], dtype=torch.float32))

        def forward(self, x: object) -> object:
            p3 = self.p3(x)
            p4 = self.p4(p3)
            up = nn.functional.interpolate(p4, scale_factor=2.0, mode="nearest")
            boxes = []
            for i, feature in enumerate((self.neck(torch.cat((up, p3), 1)), p4)):
                y = self.heads[i](feature)
                bs, _, ny, nx = y.shape
                y = y.view(bs, 3, 8, ny, nx).permute(0, 1, 3, 4, 2).sigmoid()
                gy, gx = torch.meshgrid(torch.arange(ny, dtype=torch.float32),
                                        torch.arange(nx, dtype=torch.float32), indexing="ij")
                grid = torch.stack((gx, gy), 2).view(1, 1, ny, nx, 2)
                xy = (y[..., 0:2] * 2 - 0.5 + grid) * (8 * 2 ** i)
                wh = (y[..., 2:4] * 2) ** 2 * self.anchors[i].view(1, 3, 1, 1, 2)
                boxes.append(torch.cat((xy, wh, y[..., 4:]), -1).view(bs, -1, 8))
            return torch.cat(boxes, 1)

    torch.manual_seed(0)
    model = Detector().eval()
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
    torch.onnx.export(model, torch.randn(1, 3, 64, 64), str(path), input_names=["images"],
                      output_names=["pred"], opset_version=17, dynamo=False,
                      dynamic_axes={"images": {0: "N", 2: "H", 3: "W"},
                                    "pred": {0: "N", 1: "boxes"}})
    return onnx.load(path)
