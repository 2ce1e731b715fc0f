"""Models over runtime image sizes compiled once (`dlc.compile(model, dynamic_shapes=True)`):
the importer keeps every `dim_param`, the shape-polymorphic graph ops lower to computes over
runtime extents, and the executable sizes and checks each call from the inputs' shapes."""

from __future__ import annotations

import subprocess

import numpy as np
import onnx
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_function
from dlc.driver.specialize import SpecializingExecutable
from dlc.frontends.onnx import DynamicInputError, import_onnx
from dlc.frontends.onnx.batch_shape import Symbol, symbolic_reshape_target
from dlc.rewrites.graph_convert_layout import GraphConvertLayoutPass
from dlc.runtime.executable import Executable, ExecutableError
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper

import dlc
from benchmarks.model_zoo import yolo_style
from tests.onnx.models import model, tensor, torch_detector
from tests.test_c_api import REPO, build_c_program, needs_cc

onnxruntime = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(7)


def _compiled_once(proto: onnx.ModelProto, output_type: str, probe: tuple[int, ...],
                   shapes: list[tuple[int, ...]]) -> Executable:
    """`proto` imported over runtime shapes (its output of `output_type`; the graph
    interpreter like ONNX Runtime on an input of shape `probe`) and compiled once, matching
    ONNX Runtime at every shape of `shapes`."""
    main = next(iter(import_onnx(proto, dynamic_shapes=True).ops))
    assert str(main.function_type.outputs.data[0]) == output_type
    x = RNG.standard_normal(probe).astype(np.float32)
    want = _session(proto).run(None, {proto.graph.input[0].name: x})[0]  # type: ignore[attr-defined]
    np.testing.assert_allclose(run_function(main, [x])[0], want, rtol=1e-4, atol=1e-4)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, shapes)
    return executable


def _c_program(tmp_path, proto: onnx.ModelProto, prefix: str, source: str
               ) -> tuple[object, object]:
    """`proto` compiled once over runtime shapes by `dlc compile` into `<prefix>.so` and its
    C header, and `tests/c/<source>.c` built against them: (the program, the library)."""
    from dlc.tools.dlc_main import main

    onnx.save(proto, tmp_path / f"{prefix}.onnx")
    library, header = tmp_path / f"{prefix}.so", tmp_path / f"{prefix}.h"
    assert main(["compile", str(tmp_path / f"{prefix}.onnx"), "--dynamic-shapes", "--no-cache",
                 "--jobs", "1", "--threads", "2", "--c-prefix", prefix, "--c-header",
                 str(header), "-o", str(library)]) == 0
    program = tmp_path / source
    build_c_program(REPO / "tests" / "c" / f"{source}.c", library, program)
    return program, library


def _session(proto: onnx.ModelProto) -> object:
    return onnxruntime.InferenceSession(proto.SerializeToString(),
                                        providers=["CPUExecutionProvider"])


def _matches_onnxruntime(executable: object, proto: onnx.ModelProto,
                         shapes: list[tuple[int, ...]]) -> None:
    session = _session(proto)
    name = proto.graph.input[0].name
    for shape in shapes:
        x = RNG.standard_normal(shape).astype(np.float32)
        got = executable(x)  # type: ignore[operator]
        got = got if isinstance(got, tuple) else (got,)
        want = session.run(None, {name: x})  # type: ignore[attr-defined]
        for value, expected in zip(got, want, strict=True):
            assert value.shape == expected.shape, shape
            np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-5)


def _image_model(nodes: list[onnx.NodeProto], channels: int,
                 initializers: dict[str, np.ndarray] | None = None) -> onnx.ModelProto:
    return model(nodes, [tensor("x", ["N", channels, "H", "W"])],
                 [tensor(nodes[-1].output[0], None)], initializers)


def test_the_importer_keeps_every_dim_param() -> None:
    module = import_onnx(yolo_style(), dynamic_shapes=True)
    main = next(iter(module.ops))
    assert str(main.function_type.inputs.data[0]) == "tensor<?x3x?x?xf32>"
    assert "dlc.dim_symbols = [\"N\", \"\", \"H\", \"W\"]" in str(main)
    assert all(str(t).startswith("tensor<?x6x?x?x") for t in main.function_type.outputs.data)


def test_the_importer_refuses_a_node_that_is_not_shape_polymorphic() -> None:
    proto = _image_model([helper.make_node("Relu", ["x"], ["r"]),
                          helper.make_node("Flatten", ["r"], ["f"])], 3)
    with pytest.raises(DynamicInputError,
                       match=r"node producing 'f' \(Flatten, opset 17\) reads 'r' "
                             r"\(tensor<\?x3x\?x\?xf32>\), which has dynamic dims, and is not "
                             r"shape-polymorphic"):
        import_onnx(proto, dynamic_shapes=True)


def test_a_detector_compiles_once_and_runs_every_size_like_onnxruntime() -> None:
    proto = yolo_style()  # declared x[N, 3, H, W]
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)  # one compile, not one per shape
    _matches_onnxruntime(executable, proto, [(1, 3, 32, 32), (2, 3, 48, 64), (1, 3, 8, 16),
                                             (3, 3, 24, 8)])


def test_a_detector_with_its_head_flattened_as_exported_compiles_once_like_onnxruntime(
        tmp_path) -> None:
    """YOLOv8's exported head: each scale's plane flattened (`x.view(n, c, -1)`, the height
    and width merged into one runtime dim of their product) and the scales concatenated along
    it (at runtime offsets), compiled once; the graph interpreter agrees."""
    proto = yolo_style(flat_head=True)
    executable = _compiled_once(proto, "tensor<?x6x?xf32>", (2, 3, 48, 64),
                                [(1, 3, 32, 32), (2, 3, 48, 64), (1, 3, 8, 16), (3, 3, 24, 8)])
    executable.export(tmp_path / "yolo.so")  # the library sizes its output from the metadata
    _matches_onnxruntime(dlc.load(tmp_path / "yolo.so"), proto, [(2, 3, 40, 24)])


@needs_cc
def test_the_c_interface_sizes_a_flattened_plane(tmp_path) -> None:
    """The C header's shape function of the flattened head multiplies the runtime height and
    width (a semi-affine size, written as C): `boxes_output_shapes` gives ONNX Runtime's
    output shape for several sizes, and a size the model refuses is its check's message."""
    proto = yolo_style(flat_head=True)
    program, _ = _c_program(tmp_path, proto, "boxes", "boxes_shape")
    session = _session(proto)
    for n, h, w in ((1, 32, 32), (3, 48, 64), (2, 16, 40)):
        result = subprocess.run([str(program), str(n), str(h), str(w)], capture_output=True,
                                text=True, check=False, timeout=300)
        assert result.returncode == 0, result.stderr
        x = np.zeros((n, 3, h, w), np.float32)
        want = session.run(None, {"x": x})[0]  # type: ignore[attr-defined]
        assert result.stdout.strip() == "x".join(map(str, want.shape))
    result = subprocess.run([str(program), "1", "100", "96"], capture_output=True, text=True,
                            check=False, timeout=300)
    assert result.returncode == 1
    assert "'graph.concat' op (node 'neck.concat') needs equal sizes along dim 2" in \
        result.stderr


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's TorchScript exporter
def test_a_yolov5_export_with_its_grid_compiles_once_like_onnxruntime(tmp_path) -> None:
    """YOLOv5's head as PyTorch exports it over runtime sizes: each map's grid from Range to
    its size cast to float, viewed as `ny x 1` and `1 x nx` and expanded to `ny x nx`
    (`graph.broadcast_to` sized by the operand and by the other axis' positions), the boxes
    `y.view(n, -1, 8)` merging the 3 anchors with the plane (`graph.reshape`'s groups), the
    two scales concatenated at runtime offsets: one compile for every batch and size, like
    ONNX Runtime and the graph interpreter."""
    proto = torch_detector(tmp_path / "detector.onnx")
    _compiled_once(proto, "tensor<?x?x8xf32>", (2, 3, 64, 96),
                   [(1, 3, 64, 64), (4, 3, 64, 64), (1, 3, 96, 128)])


@pytest.mark.slow
def test_a_detector_runs_batches_1_and_4_at_320_and_640_like_onnxruntime() -> None:
    proto = yolo_style(flat_head=True)  # its output as YOLOv8 exports it
    executable = dlc.compile(proto, dynamic_shapes=True, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 320, 320), (4, 3, 320, 320),
                                             (1, 3, 640, 640), (4, 3, 640, 640)])


@pytest.mark.parametrize("shapes", [[(3, 3, 48, 64), (1, 3, 32, 32)], [(3, 3, 8, 8)]])
def test_a_batch_over_runtime_sizes_runs_in_one_call_like_onnxruntime(shapes) -> None:
    """A detector over runtime sizes runs a batch of 3 images of 48x64, and of 8x8, in one
    call (its kernels' batch loops fused with their parallel loops), like ONNX Runtime; so
    does a model whose transpose moves the batch second."""
    proto = yolo_style()
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, shapes)
    mixing = _image_model([helper.make_node("Relu", ["x"], ["r"]),
                           helper.make_node("Transpose", ["r"], ["y"], perm=[1, 0, 2, 3])], 3)
    _matches_onnxruntime(dlc.compile(mixing, dynamic_shapes=True, threads=1, jobs=1), mixing,
                         [(3, 3, 4, 5)])


def test_inputs_breaking_a_size_check_are_an_error_naming_the_node() -> None:
    executable = dlc.compile(yolo_style(), dynamic_shapes=True, threads=1, jobs=1)
    # 100 -> 50 -> 25 -> 13: the x2 upsample (26 rows) no longer matches the stride-4 map (25)
    with pytest.raises(ExecutableError,
                       match=r"inputs of @main break a size constraint of the model: "
                             r"'graph.concat' op \(node 'neck.concat'\) needs equal sizes along "
                             r"dim 2 of its operands \(#1 and #0\), found 25 != 26 for inputs "
                             r"'x' \(1, 3, 100, 96\)"):
        executable(np.zeros((1, 3, 100, 96), np.float32))
    # the checked shapes of a size are remembered: a size that passed, then one that breaks
    # a check (again: failures are not remembered), then the first again
    for _ in range(2):
        assert executable(np.zeros((1, 3, 64, 96), np.float32))[0].shape[0] == 1
        with pytest.raises(ExecutableError, match="found 25 != 26"):
            executable(np.zeros((1, 3, 100, 96), np.float32))
    assert len(executable._shapes_by_sizes) == 1  # noqa: SLF001 - the cache under test


def test_inputs_sharing_a_dim_param_must_agree() -> None:
    proto = model([helper.make_node("Add", ["x", "y"], ["s"])],
                  [tensor("x", ["N", 2, "H", "W"]), tensor("y", ["N", 2, "H", "W"])],
                  [tensor("s", None)])
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    x = RNG.standard_normal((2, 2, 5, 7)).astype(np.float32)
    np.testing.assert_array_equal(executable(x, x + 1), x + (x + 1))
    with pytest.raises(ExecutableError, match=r"input 'y' dim 2 and input 'x' dim 2 share the "
                                              r"dim 'H', found 6 != 5"):
        executable(x, np.zeros((2, 2, 6, 7), np.float32))
    with pytest.raises(ExecutableError, match=r"input 'y' dim 0 and input 'x' dim 0 share the "
                                              r"dim 'N', found 3 != 2"):  # the batch's rows
        executable(x, np.zeros((3, 2, 5, 7), np.float32))


def test_a_window_larger_than_its_input_is_an_error() -> None:
    w = RNG.standard_normal((4, 3, 5, 5)).astype(np.float32)
    proto = _image_model([helper.make_node("Conv", ["x", "w"], ["c"])], 3, {"w": w})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    _matches_onnxruntime(executable, proto, [(1, 3, 5, 5), (2, 3, 9, 6)])
    with pytest.raises(ExecutableError, match=r"'graph.conv2d' op \(node '.*'\) needs dim 2 of "
                                              r"its input padded to at least its window \(5\), "
                                              r"found 4 < 5"):
        executable(np.zeros((1, 3, 4, 8), np.float32))


WINDOWS = [
    ("Conv", {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2]}),
    ("Conv", {"strides": [1, 1], "pads": [1, 1, 1, 1], "group": 3}),
    ("MaxPool", {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1]}),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 1], "pads": [1, 1, 1, 1]}),
    ("AveragePool", {"kernel_shape": [2, 3], "pads": [0, 1, 1, 1], "count_include_pad": 1}),
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),  # SqueezeNet's
]


@pytest.mark.parametrize(("op", "attributes"), WINDOWS)
def test_windows_over_runtime_sizes_match_onnxruntime(op: str, attributes: dict) -> None:
    initializers = {}
    inputs = ["x"]
    if op == "Conv":
        group = attributes.get("group", 1)
        initializers = {"w": RNG.standard_normal((6, 3 // group, 3, 3)).astype(np.float32),
                        "b": RNG.standard_normal(6).astype(np.float32)}
        inputs = ["x", "w", "b"]
    proto = _image_model([helper.make_node(op, inputs, ["y"], **attributes)], 3, initializers)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    # the widest: rows of whole vectors of 64 and a masked rest, padding rows included
    _matches_onnxruntime(executable, proto, [(1, 3, 7, 9), (2, 3, 16, 5), (1, 3, 33, 40),
                                             (1, 3, 6, 173)])


@pytest.mark.parametrize(("coordinates", "rounding", "width_scale"),
                         [("asymmetric", "floor", 3), ("half_pixel", "round_prefer_floor", 3),
                          ("asymmetric", "floor", 2)])
def test_a_nearest_upsampling_over_runtime_sizes_matches_onnxruntime(
        coordinates: str, rounding: str, width_scale: int) -> None:
    """x3 rows read lane by lane; x2 rows (YOLO's upsampling) as vectors of repeated lanes,
    whole and masked, at every output width from 2 to 66."""
    scales = np.array([1, 1, 2, width_scale], np.float32)
    proto = _image_model([helper.make_node(
        "Resize", ["x", "", "scales"], ["y"], mode="nearest",
        coordinate_transformation_mode=coordinates, nearest_mode=rounding)], 2,
        {"scales": scales})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    widths = range(1, 34) if width_scale == 2 else (5, 1)
    _matches_onnxruntime(executable, proto, [(1 + w % 2, 2, 3, w) for w in widths])


def test_a_model_that_is_not_shape_polymorphic_falls_back_to_shapes_per_call() -> None:
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    proto = _image_model([helper.make_node("Conv", ["x", "w"], ["c"]),
                          helper.make_node("Flatten", ["c"], ["f"])], 3, {"w": w})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    _matches_onnxruntime(executable, proto, [(1, 3, 5, 6), (2, 3, 4, 4)])


def test_a_linear_resize_over_runtime_sizes_falls_back_to_shapes_per_call() -> None:
    scales = np.array([1, 1, 2, 2], np.float32)
    proto = _image_model([helper.make_node("Resize", ["x", "", "scales"], ["y"],
                                           mode="linear")], 1, {"scales": scales})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    _matches_onnxruntime(executable, proto, [(1, 1, 3, 4)])


def test_dlc_run_reports_a_broken_size_check_and_exits_1(tmp_path, capsys) -> None:
    from dlc.tools.dlc_main import main

    path = tmp_path / "yolo.onnx"
    onnx.save(yolo_style(), path)
    bad = tmp_path / "x.npy"
    np.save(bad, np.zeros((1, 3, 100, 64), np.float32))
    assert main(["run", str(path), "--input", str(bad), "--dynamic-shapes", "--no-cache"]) == 1
    err = capsys.readouterr().err
    assert "break a size constraint of the model: 'graph.concat' op (node 'neck.concat')" in err
    assert "Traceback" not in err


def test_a_classifier_over_runtime_sizes_matches_onnxruntime(tmp_path) -> None:
    """A global average pool sums over the runtime height and width (reduction extents of
    runtime size); after it only the batch is dynamic, which Flatten and Gemm take. Its
    library exports (the scores' rows, `?x5`, sized like the other runtime dims) and runs
    from `dlc.load`."""
    w = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    fc = RNG.standard_normal((5, 8)).astype(np.float32)
    proto = _image_model([
        helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1),
    ], 3, {"w": w, "fc": fc})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 9, 7), (3, 3, 32, 20), (2, 3, 1, 1)])
    executable.export(tmp_path / "classifier.so")
    _matches_onnxruntime(dlc.load(tmp_path / "classifier.so"), proto, [(2, 3, 12, 10)])


@pytest.mark.parametrize(("channels", "strides"), [(16, 1), (8, 2), (20, 1), (40, 2)])
def test_depthwise_blocks_over_runtime_sizes_run_channels_last_and_match_onnxruntime(
        channels: int, strides: int) -> None:
    """Two inverted residual blocks (1x1 conv, depthwise 3x3 conv, 1x1 conv; the first with
    a squeeze-excite block and its residual add, the second at `strides`) over runtime planes
    run channels-last, as over static ones (the global pool reduced over the runtime plane in
    chunks of channels): the channels-last kernel over chunks of their 48 or 24 channels
    (a vector and a half with 16 lanes), the depthwise convs' padded columns partitioned out
    of their rows, the 1x1 convs over merged planes. Widths leave every tail of the row tiles
    and the partition's pieces (one column, two: no interior). 20 and 40 channels (60 and 120
    expanded) are no multiple of a chunk of vectors: each nest is split where its channels
    leave whole chunks (120: 64, 48 and 8), every part its own kernel."""
    expand = channels * 3
    weights: dict[str, np.ndarray] = {"lo": np.array(0, np.float32),
                                      "hi": np.array(6, np.float32)}
    nodes = []
    source = "x"
    for block, stride in enumerate((1, strides)):
        e, d, p, b = (f"{name}{block}" for name in "edpb")
        weights[e] = RNG.standard_normal((expand, channels, 1, 1)).astype(np.float32) * 0.3
        weights[d] = RNG.standard_normal((expand, 1, 3, 3)).astype(np.float32) * 0.3
        weights[p] = RNG.standard_normal((channels, expand, 1, 1)).astype(np.float32) * 0.3
        weights[b] = RNG.standard_normal(expand).astype(np.float32)
        nodes += [helper.make_node("Conv", [source, e, b], [f"c{block}"]),
                  helper.make_node("Clip", [f"c{block}", "lo", "hi"], [f"r{block}"]),
                  helper.make_node("Conv", [f"r{block}", d], [f"k{block}"], group=expand,
                                   pads=[1, 1, 1, 1], strides=[stride, stride]),
                  helper.make_node("Clip", [f"k{block}", "lo", "hi"], [f"s{block}"])]
        if block == 0:  # a squeeze-excite block: a global pool over the runtime plane
            weights["f1"] = RNG.standard_normal((8, expand, 1, 1)).astype(np.float32) * 0.3
            weights["f2"] = RNG.standard_normal((expand, 8, 1, 1)).astype(np.float32) * 0.3
            nodes += [helper.make_node("GlobalAveragePool", ["s0"], ["g"]),
                      helper.make_node("Conv", ["g", "f1"], ["g1"]),
                      helper.make_node("Relu", ["g1"], ["g2"]),
                      helper.make_node("Conv", ["g2", "f2"], ["g3"]),
                      helper.make_node("Sigmoid", ["g3"], ["g4"]),
                      helper.make_node("Mul", ["s0", "g4"], ["se0"])]
        nodes.append(helper.make_node("Conv", ["se0" if block == 0 else f"s{block}", p],
                                      [f"o{block}"]))
        if stride == 1:
            nodes.append(helper.make_node("Add", [f"o{block}", source], [f"y{block}"]))
        source = nodes[-1].output[0]
    proto = _image_model(nodes, channels, weights)
    module = import_onnx(proto, dynamic_shapes=True)
    GraphConvertLayoutPass(depthwise_regions=True).apply(make_context(), module)
    assert str(module).count('layout = "NHWC"') == 9  # and the global pool
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, channels, 3, w) for w in
                                             (1, 2, 3, 4, 7, 13, 14, 15, 16, 29, 33)]
                         + [(2, channels, 9, 8), (1, channels, 1, 1)])


@pytest.mark.parametrize(("channels", "group", "strides"), [(48, 8, 1), (48, 24, 2), (32, 16, 1),
                                                         (32, 4, 1)])
def test_grouped_convs_over_runtime_sizes_match_onnxruntime(channels: int, group: int,
                                                            strides: int) -> None:
    """A grouped 3x3 conv (a bias and a ReLU fused) over runtime planes, `group` channels a
    group (RegNet's 8; 24 and 16; 4, too few for a vector of its own): the channel kernel
    takes it with vectors of a group's channels, or of a power of two dividing them, each
    vector's input read at its group (one value broadcast to its lanes). Widths leave every
    tail of the row tiles."""
    weights = {"w": RNG.standard_normal((channels, group, 3, 3)).astype(np.float32) * 0.3,
               "b": RNG.standard_normal(channels).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=channels // group,
                              pads=[1, 1, 1, 1], strides=[strides, strides]),
             helper.make_node("Relu", ["c"], ["y"])]
    proto = _image_model(nodes, channels, weights)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, channels, 3, w) for w in
                                             (1, 2, 5, 13, 14, 15, 27, 33)]
                         + [(2, channels, 9, 8), (1, channels, 1, 1)])


def _shuffle_unit(channels: int) -> onnx.ModelProto:
    """A ShuffleNet-v2 unit as PyTorch exports it with dynamic batch, height and width: a
    chunk of the channels (Split), a conv branch, a concat, a channel shuffle whose targets
    come from `Shape` of the feature map (`x.view(n, 2, c // 2, h, w)`, transposed,
    `x.view(n, -1, h, w)`), then a mean over the plane (`x.mean([2, 3])`)."""
    half = channels // 2
    ints = {name: np.array(value, np.int64) for name, value in (
        ("i0", 0), ("i2", 2), ("i3", 3), ("axis0", [0]), ("groups", [2]), ("per", [half]),
        ("rest", [-1]), ("halves", [half, half]))}
    weights = {"w": RNG.standard_normal((half, half, 3, 3)).astype(np.float32) * 0.3, **ints}
    nodes = [helper.make_node("Split", ["x", "halves"], ["a", "b"], axis=1),
             helper.make_node("Conv", ["b", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Concat", ["a", "r"], ["cat"], axis=1),
             helper.make_node("Shape", ["cat"], ["s"])]
    for name, index in (("n", "i0"), ("h", "i2"), ("w_", "i3")):
        nodes += [helper.make_node("Gather", ["s", index], [name], axis=0),
                  helper.make_node("Unsqueeze", [name, "axis0"], [f"{name}1"])]
    nodes += [helper.make_node("Concat", ["n1", "groups", "per", "h1", "w_1"], ["t1"], axis=0),
              helper.make_node("Reshape", ["cat", "t1"], ["v1"]),
              helper.make_node("Transpose", ["v1"], ["tr"], perm=[0, 2, 1, 3, 4]),
              helper.make_node("Concat", ["n1", "rest", "h1", "w_1"], ["t2"], axis=0),
              helper.make_node("Reshape", ["tr", "t2"], ["shuffled"]),
              helper.make_node("ReduceMean", ["shuffled"], ["y"], axes=[2, 3], keepdims=0)]
    return _image_model(nodes, channels, weights)


def test_a_channel_shuffle_over_runtime_sizes_compiles_once_and_matches_onnxruntime() -> None:
    """`Shape` of a feature map over a runtime plane folds at import time into symbols of its
    runtime dims, carried through the split, conv and concat; the Reshapes that keep each of
    them (the channel shuffle) and the chunk along the static channels are shape-polymorphic,
    and the mean over the plane is a global pool: the unit compiles once (no specialization)
    and matches ONNX Runtime at every size, as the graph interpreter does."""
    proto = _shuffle_unit(8)
    module = import_onnx(proto, dynamic_shapes=True)
    main = next(iter(module.ops))
    assert str(main.function_type.outputs.data[0]) == "tensor<?x8xf32>"
    assert str(module).count("graph.reshape") == 3  # two shuffles, the pool's unit dims
    x = RNG.standard_normal((2, 8, 5, 3)).astype(np.float32)
    (want,) = _session(proto).run(None, {"x": x})  # type: ignore[attr-defined]
    (got,) = run_function(main, [x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 8, 7, 5), (3, 8, 16, 1), (1, 8, 1, 1)])


def _view_of_runtime_sizes(doubled: bool) -> onnx.ModelProto:
    """`x.view(n, 3, -1)` (`doubled`: `x.view(n, 3, h * 2, -1)`) of an image over runtime
    sizes, its target from `Shape`."""
    ints = {"i0": np.array(0, np.int64), "i2": np.array(2, np.int64),
            "two": np.array(2, np.int64), "axis0": np.array([0], np.int64),
            "rest": np.array([-1], np.int64), "c": np.array([3], np.int64)}
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axis0"], ["n1"])]
    target = ["n1", "c", "rest"]
    if doubled:
        nodes += [helper.make_node("Gather", ["s", "i2"], ["h"], axis=0),
                  helper.make_node("Mul", ["h", "two"], ["h2"]),
                  helper.make_node("Unsqueeze", ["h2", "axis0"], ["h1"])]
        target = ["n1", "c", "h1", "rest"]
    nodes += [helper.make_node("Concat", target, ["t"], axis=0),
              helper.make_node("Reshape", ["x", "t"], ["y"])]
    return _image_model(nodes, 3, ints)


def test_a_view_merging_runtime_sizes_compiles_once_like_onnxruntime() -> None:
    """`x.view(n, 3, -1)` over a runtime plane merges its height and width: the -1 is their
    product at run time (a semi-affine shape function), and the model compiles once; so does
    `x.view(n, -1)`, which merges the channels too (`graph.reshape`'s groups)."""
    proto = _view_of_runtime_sizes(doubled=False)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 4, 6), (2, 3, 5, 3)])
    flat = _view_of_runtime_sizes(doubled=False)
    target = next(node for node in flat.graph.node if node.op_type == "Concat")
    del target.input[1]  # (n, -1)
    executable = dlc.compile(flat, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, flat, [(1, 3, 4, 6), (2, 3, 5, 3)])


def test_a_view_needing_arithmetic_on_runtime_sizes_falls_back_naming_the_node() -> None:
    """`x.view(n, c, h * 2, -1)` computes with the height: arithmetic on runtime sizes, which
    the importer does not do (TVM Relax's symbolic shapes would). The node and the value are
    named, and the model compiles per shape."""
    proto = _view_of_runtime_sizes(doubled=True)
    with pytest.raises(DynamicInputError,
                       match=r"node producing 'h2' \(Mul, opset 17\) computes with 'h' \(.*\), "
                             r"which holds runtime sizes"):
        import_onnx(proto, dynamic_shapes=True)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    _matches_onnxruntime(executable, proto, [(1, 3, 4, 6)])


N_, H_, W_ = Symbol("N"), Symbol("H"), Symbol("W")


@pytest.mark.parametrize(("shape", "target", "allow_zero", "expected"), [
    ((-1, 8, -1, -1), [N_, 2, 4, H_, W_], False, ([-1, 2, 4, -1, -1], [])),  # a split channel
    ((-1, 4, 2, -1, -1), [N_, -1, H_, W_], False, ([-1, 8, -1, -1], [])),  # merged, inferred
    ((-1, 8, -1, -1), [0, 0, 0, 0], False, ([-1, 8, -1, -1], [])),  # every dim copied
    ((-1, 8, -1, -1), [N_, 8, W_, H_], False, None),  # runtime dims swapped
    ((-1, 8, -1, -1), [N_, 8, -1], False, ([-1, 8, -1], [])),  # height and width merged
    ((-1, 8, -1, -1), [N_, -1], False, ([-1, -1], [0, 1, 1, 4])),  # with the channels
    ((-1, 3, -1, -1, 8), [N_, -1, 8], False, ([-1, -1, 8], [0, 1, 1, 4])),  # YOLOv5's boxes
    ((-1, 8, -1, -1), [-1, W_], False, ([-1, -1], [])),  # batch, channels and height merged
    ((-1, 8, -1, -1), [N_, -1, 8, W_], False, None),  # the merged run out of place
    ((-1, 8, -1, -1), [N_, 4, H_, W_], False, None),  # elements lost
    ((-1, 8, -1, -1), [N_, 0, H_, W_], True, None),  # an empty dim (allowzero)
])
def test_a_symbolic_reshape_target_keeps_each_runtime_dim(
        shape: tuple[int, ...], target: list[object], allow_zero: bool,
        expected: tuple[list[int], list[int]] | None) -> None:
    symbols: list[Symbol | None] = []
    runtime = iter([N_, H_, W_])
    for dim in shape:
        symbols.append(next(runtime) if dim < 0 else None)
    if shape == (-1, 4, 2, -1, -1):
        symbols = [N_, None, None, H_, W_]
    assert symbolic_reshape_target(list(shape), symbols, target, allow_zero) == expected


def test_a_ceil_mode_window_whose_last_may_start_in_the_padding_falls_back() -> None:
    """Its output size is a minimum of two affine sizes (ONNX drops a last window that starts
    in the end padding), which no shape function gives: the model compiles per shape."""
    proto = _image_model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                           strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1)], 2)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    _matches_onnxruntime(executable, proto, [(1, 2, 6, 7), (1, 2, 5, 5)])


@needs_cc
def test_one_library_runs_every_size_from_c_like_onnxruntime(tmp_path) -> None:
    """`dlc compile --dynamic-shapes` writes one library over runtime shapes: a C program
    (tests/c/run_shaped.c) sizes the outputs with `yolo_output_shapes` and runs
    `yolo_run_shaped` at batches 1-3 and three image sizes, like ONNX Runtime; sizes the model
    refuses are its size checks' messages, exit 1; `dlc.load` runs the same library."""
    proto = yolo_style()
    program, library = _c_program(tmp_path, proto, "yolo", "run_shaped")
    session = _session(proto)
    for n, h, w in ((1, 32, 32), (3, 48, 64), (2, 16, 40)):
        x = RNG.standard_normal((n, 3, h, w)).astype(np.float32)
        x.tofile(tmp_path / "x.bin")
        result = subprocess.run([str(program), str(n), str(h), str(w), str(tmp_path / "x.bin"),
                                 str(tmp_path / "out.bin")], capture_output=True, text=True,
                                check=False, timeout=300)
        assert result.returncode == 0, result.stderr
        want = session.run(None, {"x": x})  # type: ignore[attr-defined]
        assert result.stdout.split() == [word for name, value in zip(
            ("head4", "head8"), want, strict=True) for word in (name, "x".join(
                map(str, value.shape)))]
        got = np.fromfile(tmp_path / "out.bin", np.float32)
        np.testing.assert_allclose(got, np.concatenate([v.ravel() for v in want]), rtol=1e-4,
                                   atol=1e-5)
    result = subprocess.run([str(program), "1", "100", "96", str(tmp_path / "x.bin"),
                             str(tmp_path / "out.bin")], capture_output=True, text=True,
                            check=False, timeout=300)
    assert result.returncode == 1
    assert result.stderr == (
        "run_shaped: a shape in the shapes struct does not fit the model (a static dim differs,"
        " a size check fails, an output's shape is not the one computed): the last_error "
        "function says which: inputs break a size constraint of the model: 'graph.concat' op "
        "(node 'neck.concat') needs equal sizes along dim 2 of its operands (#1 and #0), "
        "found 25 != 26\n")
    x = RNG.standard_normal((2, 3, 24, 16)).astype(np.float32)
    loaded = dlc.load(library)
    for got, want in zip(loaded(x), _session(proto).run(None, {"x": x}), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _window_text(op: str, dims: tuple[str, str], out: tuple[str, str], kernel: tuple[int, int],
                 strides: tuple[int, int], pads: tuple[int, int, int, int],
                 dilation: tuple[int, int]) -> str:
    """A conv (3 -> 4 channels) or max pool over images of `dims`, its result `out`."""
    h, w = dims
    attrs = (f"strides = array<i64: {strides[0]}, {strides[1]}>, padding = array<i64: "
             f"{', '.join(map(str, pads))}>, dilation = array<i64: {dilation[0]}, {dilation[1]}>")
    if op == "conv":
        weight = f"tensor<4x3x{kernel[0]}x{kernel[1]}xf32>"
        return (f"func.func @f(%x: tensor<?x3x{h}x{w}xf32>, %w: {weight}) -> "
                f"tensor<?x4x{out[0]}x{out[1]}xf32> {{\n  %r = graph.conv2d %x, %w {{{attrs}}} : "
                f"(tensor<?x3x{h}x{w}xf32>, {weight}) -> tensor<?x4x{out[0]}x{out[1]}xf32>\n"
                f"  func.return %r : tensor<?x4x{out[0]}x{out[1]}xf32>\n}}")
    return (f"func.func @f(%x: tensor<?x3x{h}x{w}xf32>) -> tensor<?x3x{out[0]}x{out[1]}xf32> {{\n"
            f"  %r = graph.max_pool2d %x {{kernel = array<i64: {kernel[0]}, {kernel[1]}>, "
            f"{attrs}}} : (tensor<?x3x{h}x{w}xf32>) -> tensor<?x3x{out[0]}x{out[1]}xf32>\n"
            f"  func.return %r : tensor<?x3x{out[0]}x{out[1]}xf32>\n}}")


@settings(max_examples=25, deadline=None)
@given(op=st.sampled_from(["conv", "pool"]), kernel=st.tuples(*[st.integers(1, 4)] * 2),
       strides=st.tuples(*[st.integers(1, 3)] * 2), pads=st.tuples(*[st.integers(0, 2)] * 4),
       dilation=st.tuples(*[st.integers(1, 2)] * 2), extra=st.tuples(*[st.integers(0, 9)] * 2),
       batch=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_windows_over_runtime_sizes_compute_what_a_compile_per_size_does(
        op: str, kernel: tuple[int, int], strides: tuple[int, int],
        pads: tuple[int, int, int, int], dilation: tuple[int, int], extra: tuple[int, int],
        batch: int, seed: int) -> None:
    """The tensor_expr definitions over runtime heights and widths (sizes by index arithmetic,
    reads guarded against runtime sizes) against the graph interpreter at static sizes."""
    from dlc.dialects import make_context
    from dlc.dialects.graph.interpreter import run_module as run_graph
    from dlc.dialects.graph.ops import window_output_size
    from dlc.dialects.tensor_expr.interpreter import run_module as run_tensor_expr
    from dlc.rewrites.convert_graph_to_tensor_expr import ConvertGraphToTensorExprPass
    from xdsl.parser import Parser

    if op == "pool":  # a pool's padding is smaller than its window
        pads = tuple(min(p, dilation[a % 2] * (kernel[a % 2] - 1)) for a, p in enumerate(pads))
    extents = [dilation[a] * (kernel[a] - 1) + 1 for a in range(2)]
    size = tuple(max(1, extents[a] - pads[a] - pads[a + 2]) + extra[a] for a in range(2))
    out = tuple(window_output_size(size[a], kernel[a], strides[a], pads[a], pads[a + 2],
                                   dilation[a]) for a in range(2))
    ctx = make_context()
    static = Parser(ctx, _window_text(op, tuple(map(str, size)), tuple(map(str, out)), kernel,
                                      strides, pads, dilation)).parse_module()
    dynamic = Parser(ctx, _window_text(op, ("?", "?"), ("?", "?"), kernel, strides, pads,
                                       dilation)).parse_module()
    ConvertGraphToTensorExprPass().apply(ctx, dynamic)
    generator = np.random.default_rng(seed)
    inputs = [generator.standard_normal((batch, 3, *size)).astype(np.float32)]
    if op == "conv":
        inputs.append(generator.standard_normal((4, 3, *kernel)).astype(np.float32))
    want = run_graph(static, inputs)[0]
    got = run_tensor_expr(dynamic, inputs)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_pointwise_convs_over_small_runtime_planes_match_onnxruntime() -> None:
    """A 1x1 conv and its activation run over the plane as one loop of H * W points (its
    buffers' last two dims collapsed), which the linearization folds; planes of 1, 7x7 and
    odd sizes, and a batch."""
    w = RNG.standard_normal((24, 40, 1, 1)).astype(np.float32) * 0.2
    b = RNG.standard_normal(24).astype(np.float32)
    proto = _image_model([helper.make_node("Conv", ["x", "w", "b"], ["c"]),
                          helper.make_node("Sigmoid", ["c"], ["s"]),
                          helper.make_node("Mul", ["c", "s"], ["y"])], 40, {"w": w, "b": b})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 40, 7, 7), (2, 40, 3, 11), (1, 40, 1, 1),
                                             (1, 40, 14, 14)])


@pytest.mark.parametrize(("kernel", "strides", "bias"), [(2, 1, True), (3, 2, False)])
def test_convs_vectorized_over_their_channels_match_onnxruntime(kernel: int, strides: int,
                                                                bias: bool) -> None:
    """Direct convs of 16 -> 64 channels with a long reduction (the channel kernel, its row in
    tiles of 12, 8, 4, 2 and 1 outputs) at widths that leave every tail: a 2x2 conv with a bias
    and ReLU (the transposed epilogue), a 3x3/2 one without (its local accumulators written
    back)."""
    weight = RNG.standard_normal((64, 16, kernel, kernel)).astype(np.float32)
    initializers = {"w": weight, "b": RNG.standard_normal(64).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["c"],
                              pads=[1, 1, 1, 1], strides=[strides, strides]),
             helper.make_node("Relu", ["c"], ["y"])]
    proto = _image_model(nodes, 16, initializers if bias else {"w": weight})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 16, 3, w) for w in (1, 2, 5, 7, 12, 15, 31)]
                         + [(2, 16, 14, 14)])


@pytest.mark.parametrize(("kernel_width", "pads", "bias"), [
    (3, [1, 1, 1, 1], True), (1, [0, 0, 0, 0], False), (3, [2, 1, 0, 1], True)])
def test_winograd_convs_over_runtime_planes_match_onnxruntime(
        kernel_width: int, pads: list[int], bias: bool) -> None:
    """A conv of 3 weight rows and 64 channels over a runtime plane runs as
    `graph.conv2d_winograd` with F(4, 3) tiles counted at run time (its input padded by 3 more
    rows, what a last partial tile reads): output heights leaving 0-3 rows of a last tile,
    widths 1 to 33, batches 1 and 2, against ONNX Runtime (to the transforms' rounding)."""
    weight = RNG.standard_normal((64, 64, 3, kernel_width)).astype(np.float32)
    initializers = {"w": weight, "b": RNG.standard_normal(64).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["c"],
                              pads=pads)]
    proto = _image_model(nodes, 64, initializers if bias else {"w": weight})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    assert executable.model is not None
    assert [call.kernel for call in executable.model.calls] == ["fused_conv2d_winograd_0"]
    session = _session(proto)
    for shape in [(1, 64, 4, 1), (1, 64, 5, 9), (2, 64, 6, 16), (1, 64, 7, 33), (1, 64, 12, 3)]:
        x = RNG.standard_normal(shape).astype(np.float32)
        (want,) = session.run(None, {"x": x})  # type: ignore[attr-defined]
        got = executable(x)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


def test_transposes_over_runtime_sizes_match_onnxruntime() -> None:
    """Transpose is shape-polymorphic: a conv's output moved channels-last, and its rows before
    its batch, compiles once."""
    weight = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Transpose", ["c"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("Sigmoid", ["t"], ["s"]),
             helper.make_node("Transpose", ["s"], ["y"], perm=[1, 0, 2, 3])]
    proto = _image_model(nodes, 3, {"w": weight})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 5, 7), (2, 3, 16, 9)])


@pytest.mark.parametrize(("pieces", "threads"), [((16, 8, 8), 2), ((3, 5), 2), ((16, 8), 1)])
def test_concats_over_runtime_sizes_split_per_piece_match_onnxruntime(
        pieces: tuple[int, ...], threads: int) -> None:
    """A concat along the channels, a per-channel scale and a ReLU fused after it (DenseNet's
    norm1/relu1) over runtime planes: split into one nest per piece (as slices in one parallel
    loop where the pieces' channel counts share a divisor, each on its own where not, 3 and 5,
    or serial), every plane merged and vectorized."""
    nodes, initializers = [], {}
    for k, channels in enumerate(pieces):
        initializers[f"w{k}"] = RNG.standard_normal((channels, 3, 3, 3)).astype(np.float32)
        nodes.append(helper.make_node("Conv", ["x", f"w{k}"], [f"c{k}"], pads=[1, 1, 1, 1]))
    initializers["scale"] = RNG.standard_normal((1, sum(pieces), 1, 1)).astype(np.float32)
    nodes += [helper.make_node("Concat", [f"c{k}" for k in range(len(pieces))], ["cat"], axis=1),
              helper.make_node("Mul", ["cat", "scale"], ["scaled"]),
              helper.make_node("Relu", ["scaled"], ["y"])]
    proto = _image_model(nodes, 3, initializers)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=threads, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 5, 7), (2, 3, 16, 9), (3, 3, 1, 1)])


@pytest.mark.parametrize("pieces", [(16, 8), (3, 5)])
def test_concats_over_runtime_sizes_in_place_at_batch_1_match_onnxruntime(
        pieces: tuple[int, ...]) -> None:
    """A concat along the channels read by a conv (SqueezeNet's fire modules): its pieces are
    written into its output where the call's sizes make them runs of it (a batch of 1, every
    piece at an aligned offset), else copied: batches 1 and 2, planes whose pieces of 3 and 5
    channels start at aligned offsets (16x4: 3 x 64 floats) and at others (5x7)."""
    nodes, initializers = [], {}
    for k, channels in enumerate(pieces):
        initializers[f"w{k}"] = RNG.standard_normal((channels, 3, 3, 3)).astype(np.float32)
        nodes.append(helper.make_node("Conv", ["x", f"w{k}"], [f"c{k}"], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{k}"], [f"r{k}"]))
    initializers["w"] = RNG.standard_normal((4, sum(pieces), 1, 1)).astype(np.float32)
    nodes += [helper.make_node("Concat", [f"r{k}" for k in range(len(pieces))], ["cat"], axis=1),
              helper.make_node("Conv", ["cat", "w"], ["y"])]
    proto = _image_model(nodes, 3, initializers)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 5, 7), (2, 3, 16, 9), (1, 3, 16, 4),
                                             (2, 3, 5, 7), (1, 3, 16, 9)])


def test_concats_along_a_runtime_axis_match_onnxruntime() -> None:
    """A concat whose pieces have runtime sizes along its axis (two sequences of their own
    lengths, one of them twice, a ReLU fused before it): the pieces at runtime offsets, the
    result as long as their sum, batches that differ refused."""
    nodes = [helper.make_node("Relu", ["a"], ["ra"]),
             helper.make_node("Concat", ["ra", "b", "a"], ["y"], axis=2)]
    proto = model(nodes, [tensor("a", ["N", 3, "A"]), tensor("b", ["N", 3, "B"])],
                  [tensor("y", None)])
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    session = _session(proto)
    for n, a, b in ((1, 5, 7), (2, 16, 3), (3, 1, 100)):
        inputs = {"a": RNG.standard_normal((n, 3, a)).astype(np.float32),
                  "b": RNG.standard_normal((n, 3, b)).astype(np.float32)}
        want = session.run(None, inputs)[0]  # type: ignore[attr-defined]
        np.testing.assert_array_equal(executable(inputs["a"], inputs["b"]), want)
    with pytest.raises(ExecutableError, match="input 'b' dim 0 and input 'a' dim 0 share the "
                                              "dim 'N', found 1 != 2"):
        executable(np.zeros((2, 3, 4), np.float32), np.zeros((1, 3, 4), np.float32))
    apart = model(nodes, [tensor("a", ["N", 3, "A"]), tensor("b", ["M", 3, "B"])],
                  [tensor("y", None)])  # batches of their own: the concat checks them
    executable = dlc.compile(apart, dynamic_shapes=True, threads=1, jobs=1)
    with pytest.raises(ExecutableError, match=r"'graph.concat' op \(node 'y'\) needs equal "
                                              r"sizes along dim 0 of its operands"):
        executable(np.zeros((2, 3, 4), np.float32), np.zeros((1, 3, 4), np.float32))


def test_global_average_pools_over_runtime_planes_match_onnxruntime() -> None:
    """A global average pool of an NCHW image over a runtime plane (a squeeze-excite's squeeze,
    a classifier's pool): the plane's rows merged into one loop of points and summed in vector
    partial sums of runtime extent: planes of 1, 15 (single values only), 16 x 9 (blocks of
    128, whole vectors, single values) and 2 x 40 points, batches 1 and 2."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["y"])]
    proto = _image_model(nodes, 24)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 24, 1, 1), (2, 24, 3, 5), (1, 24, 16, 9),
                                             (2, 24, 2, 40)])


@pytest.mark.parametrize("keepdims", [0, 1])
def test_a_segmentation_maps_argmax_over_runtime_planes_matches_onnxruntime(keepdims: int) -> None:
    """A segmentation head's class map (a 1x1 conv to 5 classes, then ArgMax over them at every
    pixel of a runtime plane): one compile, every size."""
    w = RNG.standard_normal((5, 3, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("ArgMax", ["c"], ["y"], axis=1, keepdims=keepdims)]
    proto = model(nodes, [tensor("x", ["N", 3, "H", "W"])],
                  [tensor("y", None, onnx.TensorProto.INT64)], {"w": w})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 1, 1), (2, 3, 5, 7), (1, 3, 33, 17)])


def _segmentation_head(mode: str, coordinates: str) -> onnx.ModelProto:
    """A segmentation head as torchvision exports it: a stride-2 conv's features, their
    global pool resized back to the features' size (`Resize` to `Shape(features)`), the
    logits resized to the input's height and width (`Resize` to `Shape(x)`'s N, H, W and the
    classes), both with `mode` and `coordinates`."""
    node = helper.make_node
    weight = (RNG.standard_normal((4, 3, 3, 3)) / 3).astype(np.float32)
    classes = (RNG.standard_normal((5, 8, 1, 1)) / 3).astype(np.float32)
    resize = {"mode": mode, "coordinate_transformation_mode": coordinates}
    if mode == "nearest":
        resize["nearest_mode"] = "floor"
    return _image_model([
        node("Conv", ["x", "w"], ["f"], pads=[1, 1, 1, 1], strides=[2, 2]),
        node("GlobalAveragePool", ["f"], ["p"]),
        node("Shape", ["f"], ["fs"]),
        node("Resize", ["p", "", "", "fs"], ["pu"], name="pooled", **resize),
        node("Concat", ["f", "pu"], ["c"], axis=1),
        node("Conv", ["c", "k"], ["logits"]),
        node("Shape", ["x"], ["xs"]),
        node("Gather", ["xs", "first"], ["n"], axis=0),
        node("Gather", ["xs", "plane"], ["hw"], axis=0),
        node("Concat", ["n", "five", "hw"], ["sizes"], axis=0),
        node("Resize", ["logits", "", "", "sizes"], ["y"], name="upsample", **resize),
    ], 3, {"w": weight, "k": classes, "first": np.array([0], np.int64),
           "plane": np.array([2, 3], np.int64), "five": np.array([5], np.int64)})


@pytest.mark.parametrize(("mode", "coordinates"), [
    ("linear", "half_pixel"), ("linear", "pytorch_half_pixel"), ("linear", "align_corners"),
    ("linear", "asymmetric"), ("nearest", "asymmetric"), ("nearest", "half_pixel")])
def test_resizes_to_runtime_sizes_compile_once_and_match_onnxruntime(mode: str,
                                                                    coordinates: str) -> None:
    """A Resize to sizes read from another value's shape (the pooled features to the
    features' size, from 1 x 1; the logits to the input's odd sizes, by ratios that are not
    integers) is a `graph.resize` sized by that value, its coordinates computed at run time:
    one compile matches ONNX Runtime at every size."""
    proto = _segmentation_head(mode, coordinates)
    module = import_onnx(proto, dynamic_shapes=True)
    resizes = [op for op in module.walk() if op.name == "graph.resize"]
    assert [len(op.operands) for op in resizes] == [2, 2]  # each sized by a value
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 16, 16), (2, 3, 13, 22), (1, 3, 5, 3)])


def test_a_widely_dilated_conv_over_runtime_sizes_falls_back_to_shapes_per_call() -> None:
    """A conv whose window dilated along both axes spans more than `MAX_RUNTIME_DILATED_SPAN`
    pixels (an ASPP branch, dilation 12) is refused over runtime sizes, naming the node and
    why: the model compiles per call signature instead, like ONNX Runtime; one of dilation 2
    is taken."""
    weight = (RNG.standard_normal((4, 3, 3, 3)) / 3).astype(np.float32)
    def aspp(dilation: int) -> onnx.ModelProto:
        return _image_model([helper.make_node("Conv", ["x", "w"], ["y"], name="aspp",
                                              dilations=[dilation] * 2,
                                              pads=[dilation] * 4)], 3, {"w": weight})
    with pytest.raises(DynamicInputError, match=r"node 'aspp' \(Conv, opset \d+\) .*a dilated "
                                                r"conv spanning 25 pixels"):
        import_onnx(aspp(12), dynamic_shapes=True)
    wide = aspp(12)
    executable = dlc.compile(wide, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    _matches_onnxruntime(executable, wide, [(1, 3, 30, 30)])
    import_onnx(aspp(2), dynamic_shapes=True)


def test_a_1d_conv_dilated_along_its_runtime_length_compiles_once() -> None:
    """A speech model's 1-D conv of 87 taps of dilation 2 (173 frames wide) over a runtime
    length: dilated along one axis only, it is taken over runtime sizes (whatever its span:
    `_dilated_span`), and matches ONNX Runtime on sequences shorter and longer than it."""
    weight = (RNG.standard_normal((4, 4, 87)) / 20).astype(np.float32)
    proto = model([helper.make_node("Conv", ["x", "w"], ["y"], dilations=[2], pads=[86, 86])],
                  [tensor("x", ["N", 4, "T"])], [tensor("y", None)], {"w": weight})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 4, 40), (2, 4, 300)])


def _decoder(kernel: int, stride: int, pads: list[int], groups: int = 1,
             output_padding: list[int] | None = None) -> onnx.ModelProto:
    """A UNet decoder step: a stride-2 conv down, a transposed conv up, concatenated with the
    features it skipped."""
    node = helper.make_node
    down = (RNG.standard_normal((4, 3, 3, 3)) / 3).astype(np.float32)
    up = (RNG.standard_normal((4, 4 // groups, kernel, kernel)) / 3).astype(np.float32)
    extra = {"output_padding": output_padding} if output_padding else {}
    return _image_model([
        node("Conv", ["x", "down"], ["f"], pads=[1, 1, 1, 1]),
        node("Conv", ["f", "down2"], ["g"], pads=[1, 1, 1, 1], strides=[2, 2]),
        node("ConvTranspose", ["g", "up", "bias"], ["u"], strides=[stride, stride], pads=pads,
             group=groups, name="up", **extra),
        node("Concat", ["u", "f"], ["y"], axis=1),
    ], 3, {"down": down, "down2": (RNG.standard_normal((4, 4, 3, 3)) / 3).astype(np.float32),
           "up": up, "bias": RNG.standard_normal(4).astype(np.float32)})


@pytest.mark.parametrize(("kernel", "stride", "pads", "groups", "output_padding"), [
    (2, 2, [0, 0, 0, 0], 1, None), (3, 2, [1, 1, 1, 1], 1, [1, 1]),
    (2, 2, [0, 0, 0, 0], 2, None), (4, 2, [1, 1, 1, 1], 1, None)])
def test_transposed_convs_over_runtime_sizes_compile_once_and_match_onnxruntime(
        kernel: int, stride: int, pads: list[int], groups: int,
        output_padding: list[int] | None) -> None:
    """A ConvTranspose over a runtime height and width (a UNet's up-convs) is shape-polymorphic:
    one compile matches ONNX Runtime at every even size (its output concatenated with the
    skipped features, a size check); a 2x2 kernel of stride 2 as a 1x1 conv to the taps'
    channels and a depth-to-space, the others in the gather form."""
    proto = _decoder(kernel, stride, pads, groups, output_padding)
    module = import_onnx(proto, dynamic_shapes=True)
    (up,) = [op for op in module.walk() if op.name == "graph.conv_transpose2d"]
    assert str(up.result.type) == "tensor<?x4x?x?xf32>"
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    _matches_onnxruntime(executable, proto, [(1, 3, 8, 8), (2, 3, 12, 6), (1, 3, 2, 4)])
    with pytest.raises(ExecutableError, match=r"'graph.concat' op .* found 7 != 8"):
        executable(np.zeros((1, 3, 7, 8), np.float32))  # 7 rows -> 4 -> 8: not the skip's 7


def test_a_transposed_conv_with_output_shape_over_runtime_sizes_falls_back() -> None:
    """A ConvTranspose whose `output_shape` attribute fixes its output (pads that would depend
    on the runtime sizes) is refused over runtime sizes, naming the node; the model compiles
    per call signature instead, like ONNX Runtime."""
    weight = (RNG.standard_normal((3, 2, 3, 3)) / 3).astype(np.float32)
    proto = _image_model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="fixed",
                                           strides=[2, 2], output_shape=[8, 8])], 3,
                         {"w": weight})
    with pytest.raises(DynamicInputError, match=r"node 'fixed' .*expected no output_shape over "
                                                r"runtime sizes, found \[8, 8\]"):
        import_onnx(proto, dynamic_shapes=True)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    _matches_onnxruntime(executable, proto, [(1, 3, 4, 4)])
