"""The public model zoo: dlc against ONNX Runtime and OpenVINO on real architectures.

Run: `python3 benchmarks/zoo.py [--models resnet18 bert_mini ...] [--threads 2] [--rounds 2]
[--repeats 15] [--cache-dir DIR] [--json results.json]`; `--list` prints the models.

Each model is built from its public constructor (torchvision, timm, transformers, or written
here after the paper) with seeded random weights (nothing is downloaded), exported to ONNX
(opset 17, batch 1, static shapes; `torch.onnx.export(..., dynamo=False)`) and cached under
`--cache-dir`. Then every engine is measured alone in its own process (`--worker`), the engines
alternating round by round (dlc, ort, openvino; then the reverse order), as BASELINES.md asks: a
pool of one engine spinning after its last call would otherwise slow the next engine down.

For each engine and model the worker reports:

- compile: dlc's compile time from an empty compile cache in round 1 (the cold compile the
  issue bounds; later rounds hit the cache), ONNX Runtime's session and OpenVINO's
  `compile_model` times;
- steady: the median latency of back-to-back calls (`benchmarks.common.time_calls`), and its
  CPU time (all threads: on a loaded machine the steadier measure of an engine's work);
- periodic: the median latency of one call after 20 ms idle (a request stream with gaps: thread
  pools that go to sleep pay to wake up);
- the first output, from which the parent computes the max relative error against ONNX Runtime
  (max |got - ort| / max |ort|).

A model's figure is the best round's median; the summary gives each engine's geometric means of
the ratios to ONNX Runtime. Installing the engines and model libraries: the `zoo` extra
(README.md, "Benchmarks").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ENGINES = ("dlc", "ort", "openvino")
"""The engines a zoo run measures; ONNX Runtime (`ort`) is the reference for errors and ratios."""

RELATIVE_TOLERANCE = 1e-3
"""The largest max relative error against ONNX Runtime that counts as a match."""

PERIODIC_PAUSE = 0.02
"""Seconds of idle time before each periodic call."""

METRICS = ("steady", "periodic", "cpu")
"""Per engine and model: the median wall seconds of back-to-back calls and of a call after
`PERIODIC_PAUSE`, and the median CPU seconds (all threads) of a back-to-back call, the steadier
measure of an engine's own work when other processes load the machine."""


@dataclass(frozen=True)
class ZooModel:
    """One zoo architecture: how to build it (a `torch.nn.Module`, imported lazily so that the
    list can be read without torch) and the example inputs it is exported with."""

    name: str
    family: str
    build: Callable[[], Any]
    inputs: Callable[[], tuple[Any, ...]]
    description: str


# ---------------------------------------------------------------------------------------------
# Builders: torchvision, timm and transformers constructors (weights=None), and hand-written
# classics. Every builder seeds torch first, so an export is reproducible.
# ---------------------------------------------------------------------------------------------


_TORCHVISION_OPS: list[Any] = []
"""Holds the stand-in `torchvision` op library (`_torch`) alive."""


def _torch():  # noqa: ANN202 - torch is optional
    """torch, seeded; with torchvision importable even when its native ops cannot load.

    The zoo needs only torchvision's pure-Python model constructors. A torchvision wheel built
    for CUDA next to a CPU-only torch cannot load its `_C` extension, and then `import
    torchvision` fails registering fake kernels for `torchvision::nms`/`qnms`; declaring those
    two schemas first lets the import (and the models, which never call them) go through."""
    import torch

    torch.manual_seed(0)
    if not _TORCHVISION_OPS and not hasattr(torch.ops.torchvision, "nms"):
        try:
            import torchvision  # noqa: F401
        except RuntimeError as e:
            if "torchvision::" not in str(e):
                raise
            library = torch.library.Library("torchvision", "DEF")
            for op in ("nms", "qnms"):
                library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            _TORCHVISION_OPS.append(library)
            for name in [name for name in sys.modules if name.startswith("torchvision")]:
                del sys.modules[name]
    return torch


def _image(size: int = 224) -> Callable[[], tuple[Any, ...]]:
    def inputs() -> tuple[Any, ...]:
        torch = _torch()
        return (torch.randn(1, 3, size, size),)

    return inputs


def _torchvision(constructor: str, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        _torch()
        import torchvision

        return getattr(torchvision.models, constructor)(weights=None, **kwargs)

    return build


def _deeplab() -> Any:
    _torch()
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large

    torch = _torch()

    class Deeplab(torch.nn.Module):
        """DeepLabV3's `out` head only (the auxiliary head is for training)."""

        def __init__(self) -> None:
            super().__init__()
            self.model = deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                      aux_loss=False)

        def forward(self, x: Any) -> Any:
            return self.model(x)["out"]

    return Deeplab()


def _vit_tiny() -> Any:
    _torch()
    import timm

    return timm.create_model("vit_tiny_patch16_224", pretrained=False)


def _dcgan() -> Any:
    """DCGAN's generator (Radford et al. 2016): a 100-d code to a 64x64 RGB image through four
    stride-2 ConvTranspose + BatchNorm + ReLU stages and a Tanh."""
    torch = _torch()
    nn = torch.nn
    width = 64

    def up(cin: int, cout: int, stride: int, pad: int) -> list[Any]:
        return [nn.ConvTranspose2d(cin, cout, 4, stride, pad, bias=False), nn.BatchNorm2d(cout),
                nn.ReLU(True)]

    return nn.Sequential(
        *up(100, width * 8, 1, 0), *up(width * 8, width * 4, 2, 1),
        *up(width * 4, width * 2, 2, 1), *up(width * 2, width, 2, 1),
        nn.ConvTranspose2d(width, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )


def _unet() -> Any:
    """A U-Net (Ronneberger et al. 2015), 4 levels from 32 channels, on a 128x128 image:
    double 3x3 conv + BN + ReLU blocks, max-pool down, ConvTranspose 2x2 up, skip concats."""
    torch = _torch()
    nn = torch.nn

    def double(cin: int, cout: int) -> Any:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True),
        )

    class UNet(nn.Module):
        def __init__(self, widths: tuple[int, ...] = (32, 64, 128, 256), classes: int = 2
                     ) -> None:
            super().__init__()
            self.down = nn.ModuleList()
            cin = 3
            for width in widths:
                self.down.append(double(cin, width))
                cin = width
            self.bottom = double(widths[-1], widths[-1] * 2)
            self.up = nn.ModuleList()
            self.merge = nn.ModuleList()
            cin = widths[-1] * 2
            for width in reversed(widths):
                self.up.append(nn.ConvTranspose2d(cin, width, 2, 2))
                self.merge.append(double(width * 2, width))
                cin = width
            self.head = nn.Conv2d(widths[0], classes, 1)

        def forward(self, x: Any) -> Any:
            skips = []
            for block in self.down:
                x = block(x)
                skips.append(x)
                x = nn.functional.max_pool2d(x, 2)
            x = self.bottom(x)
            for up, merge, skip in zip(self.up, self.merge, reversed(skips), strict=True):
                x = merge(torch.cat([up(x), skip], dim=1))
            return self.head(x)

    return UNet()


def _speech() -> Any:
    """A QuartzNet-style 1-D conv acoustic model (Kriman et al. 2020) on 80 mel bands x 256
    frames: a stride-2 prologue, five blocks of depthwise-separable Conv1d + BN + ReLU with a
    residual, an epilogue and a 1x1 conv to 29 characters, log-softmax."""
    torch = _torch()
    nn = torch.nn

    def separable(cin: int, cout: int, kernel: int, stride: int = 1, dilation: int = 1) -> Any:
        return nn.Sequential(
            nn.Conv1d(cin, cin, kernel, stride, padding=dilation * (kernel // 2),
                      dilation=dilation, groups=cin, bias=False),
            nn.Conv1d(cin, cout, 1, bias=False), nn.BatchNorm1d(cout),
        )

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, kernel: int, repeat: int = 2) -> None:
            super().__init__()
            layers: list[Any] = []
            for index in range(repeat):
                layers.append(separable(cin if index == 0 else cout, cout, kernel))
                if index < repeat - 1:
                    layers.append(nn.ReLU())
            self.body = nn.Sequential(*layers)
            self.residual = nn.Sequential(nn.Conv1d(cin, cout, 1, bias=False),
                                          nn.BatchNorm1d(cout))

        def forward(self, x: Any) -> Any:
            return torch.relu(self.body(x) + self.residual(x))

    class QuartzNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.prologue = nn.Sequential(separable(80, 256, 33, stride=2), nn.ReLU())
            self.blocks = nn.Sequential(
                Block(256, 256, 33), Block(256, 256, 39), Block(256, 512, 51),
                Block(512, 512, 63), Block(512, 512, 75),
            )
            self.epilogue = nn.Sequential(separable(512, 512, 87, dilation=2), nn.ReLU(),
                                          nn.Conv1d(512, 1024, 1), nn.ReLU())
            self.classifier = nn.Conv1d(1024, 29, 1)

        def forward(self, x: Any) -> Any:
            x = self.epilogue(self.blocks(self.prologue(x)))
            return torch.log_softmax(self.classifier(x), dim=1)

    return QuartzNet()


def _bert_mini() -> Any:
    torch = _torch()
    from transformers import BertConfig, BertModel

    config = BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                        intermediate_size=1024, vocab_size=30522, max_position_embeddings=512,
                        attn_implementation="eager")

    class Bert(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = BertModel(config, add_pooling_layer=False).eval()

        def forward(self, input_ids: Any) -> Any:
            return self.model(input_ids=input_ids).last_hidden_state

    return Bert()


def _gpt_block() -> Any:
    """Two GPT-2-style pre-norm decoder blocks (Radford et al. 2019) with a causal mask from a
    lower-triangular buffer (masked_fill with -inf), d 256, 4 heads, MLP 1024 with GELU (tanh),
    token + position embeddings and a tied LM head over a 4096-token vocabulary."""
    torch = _torch()
    nn = torch.nn
    dim, heads, context, vocab = 256, 4, 256, 4096

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            mask = torch.tril(torch.ones(context, context)).view(1, 1, context, context)
            self.register_buffer("mask", mask)

        def forward(self, x: Any) -> Any:
            batch, steps, _ = x.shape
            q, k, v = self.qkv(x).split(dim, dim=2)
            q, k, v = (t.view(batch, steps, heads, dim // heads).transpose(1, 2)
                       for t in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(dim // heads))
            scores = scores.masked_fill(self.mask[:, :, :steps, :steps] == 0, float("-inf"))
            y = torch.softmax(scores, dim=-1) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(batch, steps, dim))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm1 = nn.LayerNorm(dim)
            self.attention = Attention()
            self.norm2 = nn.LayerNorm(dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * dim, dim))

        def forward(self, x: Any) -> Any:
            x = x + self.attention(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class Gpt(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(vocab, dim)
            self.positions = nn.Embedding(context, dim)
            self.blocks = nn.Sequential(Block(), Block())
            self.norm = nn.LayerNorm(dim)

        def forward(self, ids: Any) -> Any:
            positions = torch.arange(ids.shape[1]).unsqueeze(0)
            x = self.blocks(self.tokens(ids) + self.positions(positions))
            return self.norm(x) @ self.tokens.weight.t()

    return Gpt()


def _yolo() -> Any:
    """A YOLOv8-n-style detector (Ultralytics' layout, written here): Conv-BN-SiLU, C2f blocks,
    SPPF (three chained 5x5 max-pools), a PAN neck with nearest 2x upsampling and concats, and
    three decoupled box/class heads whose outputs are flattened and concatenated, on 320x320."""
    torch = _torch()
    nn = torch.nn

    class Conv(nn.Module):
        def __init__(self, cin: int, cout: int, kernel: int = 1, stride: int = 1) -> None:
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False)
            self.bn = nn.BatchNorm2d(cout)

        def forward(self, x: Any) -> Any:
            return nn.functional.silu(self.bn(self.conv(x)))

    class Bottleneck(nn.Module):
        def __init__(self, width: int, shortcut: bool) -> None:
            super().__init__()
            self.cv1, self.cv2 = Conv(width, width, 3), Conv(width, width, 3)
            self.shortcut = shortcut

        def forward(self, x: Any) -> Any:
            y = self.cv2(self.cv1(x))
            return x + y if self.shortcut else y

    class C2f(nn.Module):
        def __init__(self, cin: int, cout: int, count: int, shortcut: bool = True) -> None:
            super().__init__()
            self.hidden = cout // 2
            self.cv1 = Conv(cin, 2 * self.hidden)
            self.cv2 = Conv((2 + count) * self.hidden, cout)
            self.blocks = nn.ModuleList(Bottleneck(self.hidden, shortcut) for _ in range(count))

        def forward(self, x: Any) -> Any:
            parts = list(self.cv1(x).chunk(2, 1))
            for block in self.blocks:
                parts.append(block(parts[-1]))
            return self.cv2(torch.cat(parts, 1))

    class Sppf(nn.Module):
        def __init__(self, cin: int, cout: int) -> None:
            super().__init__()
            self.cv1 = Conv(cin, cin // 2)
            self.cv2 = Conv(cin * 2, cout)
            self.pool = nn.MaxPool2d(5, 1, 2)

        def forward(self, x: Any) -> Any:
            x = self.cv1(x)
            y1 = self.pool(x)
            y2 = self.pool(y1)
            return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], 1))

    class Yolo(nn.Module):
        def __init__(self, classes: int = 80) -> None:
            super().__init__()
            self.stem = nn.Sequential(Conv(3, 16, 3, 2), Conv(16, 32, 3, 2), C2f(32, 32, 1))
            self.p3 = nn.Sequential(Conv(32, 64, 3, 2), C2f(64, 64, 2))
            self.p4 = nn.Sequential(Conv(64, 128, 3, 2), C2f(128, 128, 2))
            self.p5 = nn.Sequential(Conv(128, 256, 3, 2), C2f(256, 256, 1), Sppf(256, 256))
            self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
            self.top4 = C2f(256 + 128, 128, 1, shortcut=False)
            self.top3 = C2f(128 + 64, 64, 1, shortcut=False)
            self.down3 = Conv(64, 64, 3, 2)
            self.bottom4 = C2f(64 + 128, 128, 1, shortcut=False)
            self.down4 = Conv(128, 128, 3, 2)
            self.bottom5 = C2f(128 + 256, 256, 1, shortcut=False)
            self.heads = nn.ModuleList(
                nn.ModuleList([
                    nn.Sequential(Conv(width, 64, 3), Conv(64, 64, 3), nn.Conv2d(64, 64, 1)),
                    nn.Sequential(Conv(width, 80, 3), Conv(80, 80, 3), nn.Conv2d(80, classes, 1)),
                ])
                for width in (64, 128, 256)
            )

        def forward(self, x: Any) -> Any:
            p3 = self.p3(self.stem(x))
            p4 = self.p4(p3)
            p5 = self.p5(p4)
            t4 = self.top4(torch.cat([self.upsample(p5), p4], 1))
            t3 = self.top3(torch.cat([self.upsample(t4), p3], 1))
            b4 = self.bottom4(torch.cat([self.down3(t3), t4], 1))
            b5 = self.bottom5(torch.cat([self.down4(b4), p5], 1))
            outputs = []
            for feature, (box, cls) in zip((t3, b4, b5), self.heads, strict=True):
                y = torch.cat([box(feature), torch.sigmoid(cls(feature))], 1)
                outputs.append(y.flatten(2))
            return torch.cat(outputs, 2)

    return Yolo()


def _tokens(length: int, vocab: int) -> Callable[[], tuple[Any, ...]]:
    def inputs() -> tuple[Any, ...]:
        torch = _torch()
        return (torch.randint(0, vocab, (1, length), dtype=torch.int64),)

    return inputs


def _noise() -> tuple[Any, ...]:
    torch = _torch()
    return (torch.randn(1, 100, 1, 1),)


def _mel() -> tuple[Any, ...]:
    torch = _torch()
    return (torch.randn(1, 80, 256),)


ZOO: dict[str, ZooModel] = {
    model.name: model
    for model in (
        ZooModel("resnet18", "residual", _torchvision("resnet18"), _image(),
                 "torchvision ResNet-18"),
        ZooModel("resnet50", "residual", _torchvision("resnet50"), _image(),
                 "torchvision ResNet-50"),
        ZooModel("mobilenet_v2", "mobile", _torchvision("mobilenet_v2"), _image(),
                 "torchvision MobileNetV2"),
        ZooModel("mobilenet_v3_small", "mobile", _torchvision("mobilenet_v3_small"), _image(),
                 "torchvision MobileNetV3-small (hard-swish, squeeze-excite)"),
        ZooModel("mobilenet_v3_large", "mobile", _torchvision("mobilenet_v3_large"), _image(),
                 "torchvision MobileNetV3-large"),
        ZooModel("efficientnet_b0", "mobile", _torchvision("efficientnet_b0"), _image(),
                 "torchvision EfficientNet-B0 (SiLU, squeeze-excite)"),
        ZooModel("shufflenet_v2", "mobile", _torchvision("shufflenet_v2_x1_0"), _image(),
                 "torchvision ShuffleNetV2 x1.0 (channel shuffle)"),
        ZooModel("squeezenet", "mobile", _torchvision("squeezenet1_1"), _image(),
                 "torchvision SqueezeNet 1.1"),
        ZooModel("densenet121", "dense", _torchvision("densenet121"), _image(),
                 "torchvision DenseNet-121"),
        ZooModel("regnet_y_400mf", "residual", _torchvision("regnet_y_400mf"), _image(),
                 "torchvision RegNetY-400MF (grouped convs, squeeze-excite)"),
        ZooModel("convnext_tiny", "modern", _torchvision("convnext_tiny"), _image(),
                 "torchvision ConvNeXt-tiny (7x7 depthwise, LayerNorm, GELU)"),
        ZooModel("vit_tiny", "transformer", _vit_tiny, _image(),
                 "timm ViT-tiny/16 (vit_tiny_patch16_224)"),
        ZooModel("deeplabv3", "segmentation", _deeplab, _image(256),
                 "torchvision DeepLabV3-MobileNetV3-large, 256x256 (ASPP, bilinear resize)"),
        ZooModel("dcgan", "generator", _dcgan, _noise,
                 "DCGAN generator, 64x64 (ConvTranspose)"),
        ZooModel("unet", "segmentation", _unet, _image(128),
                 "U-Net, 4 levels from 32 channels, 128x128"),
        ZooModel("quartznet", "speech", _speech, _mel,
                 "QuartzNet-style 1-D conv speech model, 80 mels x 256 frames"),
        ZooModel("bert_mini", "transformer", _bert_mini, _tokens(128, 30522),
                 "transformers BERT, 4 layers, hidden 256, seq 128"),
        ZooModel("gpt_block", "transformer", _gpt_block, _tokens(128, 4096),
                 "GPT-2-style decoder, 2 blocks, d 256, causal mask, seq 128"),
        ZooModel("yolo", "detector", _yolo, _image(320),
                 "YOLOv8-n-style detector, 320x320 (SiLU, C2f, SPPF, upsample, concat heads)"),
    )
}
"""The zoo by name (19 architectures)."""


# ---------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------


DYNAMIC_EXPORTS = {"batch": {0: "N"}, "image": {0: "N", 2: "H", 3: "W"},
                   "sequence": {0: "N", 1: "S"}}
"""The dims `export` names (`dynamic_axes`) in every input (`image`: of an image model, whose
inputs are N x C x H x W; `sequence`: of a token model, N x S) and the output's leading one,
by the kind of export."""


def export(model: ZooModel, directory: Path, dynamic: str = "") -> Path:
    """The model's ONNX file under `directory`, exported on the first call (opset 17, legacy
    TorchScript exporter, batch 1, static shapes, constants folded); with `dynamic` (`batch`,
    `image`), `<name>.<dynamic>.onnx` with the dims of `DYNAMIC_EXPORTS` named, as deployments
    export."""
    path = directory / f"{model.name}{'.' + dynamic if dynamic else ''}.onnx"
    if path.exists():
        return path
    torch = _torch()
    module = model.build().eval()
    arguments = model.inputs()
    directory.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".onnx.partial")
    names = [f"input{index}" if len(arguments) > 1 else "input"
             for index in range(len(arguments))]
    with torch.no_grad():
        axes = ({**{name: DYNAMIC_EXPORTS[dynamic] for name in names}, "output": {0: "N"}}
                if dynamic else None)
        torch.onnx.export(module, arguments, str(partial), opset_version=17, dynamo=False,
                          input_names=names, output_names=["output"],
                          do_constant_folding=True, dynamic_axes=axes)
    partial.replace(path)
    return path


def inputs_of(path: Path, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs for the ONNX file's graph inputs (`model_zoo.random_inputs`): standard
    normal floats, token ids in [0, 1000) (every zoo vocabulary is larger)."""
    import onnx

    from benchmarks.model_zoo import random_inputs

    return random_inputs(onnx.load(str(path), load_external_data=False), seed, int_high=1000)


# ---------------------------------------------------------------------------------------------
# Worker: one engine, one model, one process
# ---------------------------------------------------------------------------------------------


def _runner(engine: str, path: Path, feeds: dict[str, np.ndarray], threads: int,
            cache_dir: Path) -> tuple[float, Callable[[], Any], Callable[[], np.ndarray]]:
    """(compile seconds, a call, the call's first output) for `engine` on the model."""
    start = time.perf_counter()
    if engine == "dlc":
        import dlc

        compiled = dlc.compile(path, threads=threads, cache_dir=cache_dir, progress=True)
        seconds = time.perf_counter() - start
        arrays = list(feeds.values())

        def first() -> np.ndarray:
            out = compiled(*arrays)
            return np.asarray(out[0] if isinstance(out, tuple | list) else out)

        return seconds, lambda: compiled(*arrays), first
    if engine == "ort":
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(str(path), options,
                                               providers=["CPUExecutionProvider"])
        seconds = time.perf_counter() - start
        return (seconds, lambda: session.run(None, feeds),
                lambda: np.asarray(session.run(None, feeds)[0]))
    if engine == "openvino":
        import openvino

        core = openvino.Core()
        network = core.compile_model(core.read_model(str(path)), "CPU", {
            "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
            "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": "f32",  # not bf16 where the CPU has it
        })
        request = network.create_infer_request()
        seconds = time.perf_counter() - start

        def call() -> Any:
            return request.infer(feeds, share_inputs=True)

        def first_ov() -> np.ndarray:
            request.infer(feeds)
            return np.array(request.get_output_tensor(0).data)

        return seconds, call, first_ov
    raise ValueError(f"unknown engine {engine!r}: expected one of {', '.join(ENGINES)}")


def measure(engine: str, path: Path, threads: int, repeats: int, cache_dir: Path,
            output: Path) -> dict[str, Any]:
    """Compile and time one engine on one model in this process; the first output goes to
    `output` (.npy). Returns compile, steady and periodic seconds."""
    from benchmarks.common import pin_threads, time_calls, unpin_threads

    feeds = inputs_of(path)
    seconds, call, first = _runner(engine, path, feeds, threads, cache_dir)
    np.save(output, first())
    steady = time_calls({engine: call}, repeats=repeats, warmup=3, min_seconds=0.05,
                        settle_seconds=0.02)[engine]
    pinned = pin_threads()
    samples = []
    for _ in range(repeats):
        time.sleep(PERIODIC_PAUSE)
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    unpin_threads(pinned)
    return {"compile": seconds, "steady": steady.median, "steady_best": steady.best,
            "cpu": steady.cpu, "periodic": float(np.median(samples))}


def worker(args: argparse.Namespace) -> int:
    """`--worker ENGINE`: measures, prints one `ZOO {json}` line; errors are a row too."""
    try:
        row = measure(args.worker, Path(args.model_file), args.threads, args.repeats,
                      Path(args.cache_dir), Path(args.output))
    except Exception as e:  # noqa: BLE001 - reported to the parent as the engine's failure
        message = str(e).strip().splitlines()
        row = {"error": f"{type(e).__name__}: {message[0] if message else ''}"[:400]}
    print("ZOO " + json.dumps(row), flush=True)
    return 0


def _run_worker(engine: str, path: Path, output: Path, cache_dir: Path,
                args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", engine,
               "--model-file", str(path), "--output", str(output), "--cache-dir",
               str(cache_dir), "--threads", str(args.threads), "--repeats", str(args.repeats)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                              cwd=Path(__file__).resolve().parent.parent)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout:.0f} s"}
    for line in done.stdout.splitlines():
        if line.startswith("ZOO "):
            return json.loads(line[4:])
    tail = (done.stderr or done.stdout).strip().splitlines()
    return {"error": f"exit code {done.returncode}: {tail[-1] if tail else ''}"[:400]}


# ---------------------------------------------------------------------------------------------
# Parent: export, alternate engines across processes, compare, summarise
# ---------------------------------------------------------------------------------------------


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    """max |got - expected| / max |expected| over the finite expected elements; inf when the
    shapes differ, a non-finite expected element (a masked -inf) is not matched exactly, or
    got is not finite where expected is."""
    if got.shape != expected.shape:
        return math.inf
    finite = np.isfinite(expected)
    if not np.array_equal(got[~finite], expected[~finite], equal_nan=True):
        return math.inf
    difference = np.abs(got[finite].astype(np.float64) - expected[finite].astype(np.float64))
    if not np.all(np.isfinite(difference)):
        return math.inf
    scale = max(float(np.max(np.abs(expected[finite]), initial=0.0)), 1e-30)
    return float(np.max(difference, initial=0.0) / scale)


def bench_model(model: ZooModel, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One model's row: per engine the compile time (round 1), the best round's steady and
    periodic medians, and the error against ONNX Runtime."""
    try:
        path = export(model, Path(args.cache_dir) / "onnx")
    except Exception as e:  # noqa: BLE001 - an export failure is the model's row
        return {"model": model.name, "error": f"export: {type(e).__name__}: {e}"[:400]}
    cache = work / f"{model.name}-cache"
    row: dict[str, Any] = {"model": model.name, "engines": {}}
    outputs: dict[str, Path] = {}
    for round_index in range(args.rounds):
        order = args.engines if round_index % 2 == 0 else list(reversed(args.engines))
        for engine in order:
            output = work / f"{model.name}-{engine}.npy"
            result = _run_worker(engine, path, output, cache, args)
            entry = row["engines"].setdefault(engine, {})
            if "error" in result:
                entry.setdefault("error", result["error"])
                continue
            outputs[engine] = output
            if round_index == 0:
                entry["compile"] = result["compile"]
            for key in METRICS:
                entry[key] = min(entry.get(key, math.inf), result[key])
    if "ort" in outputs:
        expected = np.load(outputs["ort"])
        for engine, output in outputs.items():
            if engine != "ort":
                row["engines"][engine]["error_vs_ort"] = relative_error(np.load(output),
                                                                         expected)
    return row


def _ms(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value * 1e3:.2f}"


def summarise(rows: list[dict[str, Any]], engines: list[str]) -> str:
    """The zoo table (ms for ONNX Runtime, ratios to it for the others) and geometric means."""
    lines = ["| model | ort steady ms | ort periodic ms | "
             + " | ".join(f"{e} steady / periodic / cpu (x ort) | {e} compile s | {e} err"
                          for e in engines if e != "ort") + " |"]
    lines.append("|" + " --- |" * (3 + 3 * (len(engines) - 1)))
    ratios: dict[str, dict[str, list[float]]] = {e: {key: [] for key in METRICS} for e in engines}
    failures: list[str] = []
    for row in rows:
        if "error" in row:
            failures.append(f"{row['model']}: {row['error']}")
            continue
        ort = row["engines"].get("ort", {})
        cells = [row["model"], _ms(ort.get("steady")), _ms(ort.get("periodic"))]
        for engine in engines:
            if engine == "ort":
                continue
            entry = row["engines"].get(engine, {})
            if "error" in entry and "steady" not in entry:
                failures.append(f"{row['model']} ({engine}): {entry['error']}")
                cells += ["FAILED", "-", "-"]
                continue
            pair = []
            for key in METRICS:
                if key in entry and key in ort:
                    ratio = entry[key] / ort[key]
                    ratios[engine][key].append(ratio)
                    pair.append(f"{ratio:.2f}")
                else:
                    pair.append("-")
            error = entry.get("error_vs_ort")
            if error is not None and error > RELATIVE_TOLERANCE:
                failures.append(f"{row['model']} ({engine}): mismatch, max rel err {error:.2e}")
            compile_s = entry.get("compile")
            cells += [" / ".join(pair), "-" if compile_s is None else f"{compile_s:.1f}",
                      "-" if error is None else f"{error:.1e}"]
        lines.append("| " + " | ".join(cells) + " |")
    for engine in engines:
        if engine == "ort":
            continue
        means = []
        for key in METRICS:
            values = ratios[engine][key]
            means.append(f"{math.exp(sum(map(math.log, values)) / len(values)):.2f}x"
                         if values else "-")
        lines.append(f"geometric mean {engine}/ort over {len(ratios[engine]['steady'])} models:"
                     f" steady {means[0]}, periodic {means[1]}, cpu {means[2]}")
    if failures:
        lines.append("failures:")
        lines += [f"  {failure}" for failure in failures]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(ZOO), choices=list(ZOO),
                        metavar="MODEL", help="models to run (default: all; --list names them)")
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES))
    parser.add_argument("--list", action="store_true", help="print the zoo and exit")
    parser.add_argument("--threads", type=int, default=2, help="threads per engine")
    parser.add_argument("--rounds", type=int, default=2,
                        help="processes per engine and model, engine order alternating")
    parser.add_argument("--repeats", type=int, default=15, help="timed samples per process")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds one engine's process may take")
    parser.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir()) / "dlc-zoo"),
                        help="where exported ONNX files are kept between runs")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--worker", choices=list(ENGINES), help=argparse.SUPPRESS)
    parser.add_argument("--model-file", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads < 1 or args.rounds < 1 or args.repeats < 1:
        parser.error("expected --threads, --rounds and --repeats of at least 1")
    if args.worker and not (args.model_file and args.output):
        parser.error("--worker needs --model-file and --output")
    if not args.worker and "ort" not in args.engines:
        parser.error("expected ort among --engines: it is the reference")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    if args.list:
        for model in ZOO.values():
            print(f"{model.name:<20} {model.family:<13} {model.description}")
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-zoo-") as directory:
        for name in args.models:
            start = time.perf_counter()
            row = bench_model(ZOO[name], args, Path(directory))
            rows.append(row)
            print(f"{name}: {json.dumps(row)} ({time.perf_counter() - start:.0f} s)", flush=True)
    print(summarise(rows, args.engines))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
