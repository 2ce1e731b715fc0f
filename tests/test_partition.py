"""Partitioning passes (graph-annotate-target, graph-merge-regions, graph-partition) on models:
the graph interpreter gives the same results before and after, and the regions are as placed."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_module
from dlc.pipelines import parse_pipeline
from dlc.rewrites.partition_targets import TARGET_ATTR
from xdsl.dialects import func
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import PassFailedException

CNN = """
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %fc: tensor<16x5xf32>)
    -> tensor<1x5xf32> {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
    : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %c : tensor<1x4x8x8xf32>
  %p = graph.max_pool2d %r {kernel = array<i64: 4, 4>, strides = array<i64: 4, 4>}
    : (tensor<1x4x8x8xf32>) -> tensor<1x4x2x2xf32>
  %f = graph.reshape %p {shape = array<i64: 1, 16>} : (tensor<1x4x2x2xf32>) -> tensor<1x16xf32>
  %m = graph.matmul %f, %fc : (tensor<1x16xf32>, tensor<16x5xf32>) -> tensor<1x5xf32>
  %s = graph.sigmoid %m : tensor<1x5xf32>
  func.return %s : tensor<1x5xf32>
}
"""


def partitioned(text: str, options: str) -> tuple[object, object]:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    before = module.clone()
    spec = f"graph-annotate-target{{{options}}},graph-merge-regions,graph-partition"
    PassPipeline(parse_pipeline(spec)).apply(make_context(), module)
    module.verify()
    return before, module


def region_targets(module) -> list[str]:
    main = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")
    return [op.attributes[TARGET_ATTR].data for op in main.body.block.ops
            if isinstance(op, func.CallOp)]


@pytest.mark.parametrize(("options", "targets"), [
    ('targets="llvm"', ["llvm"]),
    ('targets="opencl,llvm" overrides="graph.matmul=llvm"', ["opencl", "llvm", "opencl"]),
    ('targets="opencl,llvm" overrides="graph.max_pool2d=llvm,graph.sigmoid=llvm"',
     ["opencl", "llvm", "opencl", "llvm"]),
])
def test_partition_keeps_semantics(options: str, targets: list[str]) -> None:
    before, after = partitioned(CNN, options)
    assert region_targets(after) == targets
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(s).astype(np.float32)
              for s in ((1, 3, 8, 8), (4, 3, 3, 3), (16, 5))]
    (expected,) = run_module(before, inputs)
    (found,) = run_module(after, inputs)
    np.testing.assert_array_equal(found, expected)


def test_unknown_override_target_lists_the_known_ones() -> None:
    with pytest.raises(PassFailedException, match=r"unknown partition target 'dnnl' \(known"):
        partitioned(CNN, 'targets="llvm" overrides="graph.relu=dnnl"')


def test_malformed_override_is_an_error() -> None:
    with pytest.raises(PassFailedException, match="expected overrides as NAME=TARGET"):
        partitioned(CNN, 'targets="llvm" overrides="graph.relu"')
