"""A model compiled for several input shapes (`driver.shape_variants`, `runtime.variants`):
`dlc.compile(..., specialize=[...])` runs each call on the variant of its shapes, `export`
links every variant into one library that `dlc.load` and C programs call; checked against
ONNX's reference evaluator."""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.driver.artifact import pack_weights
from dlc.driver.elf import global_symbols
from dlc.driver.errors import CompileError
from dlc.driver.shape_variants import (
    merge_variants,
    objcopy_for,
    variant_tags,
    with_input_dims,
)
from dlc.driver.specialize import SpecializingExecutable
from dlc.runtime.executable import ExecutableError
from dlc.runtime.metadata import MetadataError
from dlc.runtime.variants import (
    ShapeVariantsExecutable,
    VariantInfo,
    decode_variants,
    encode_variants,
)
from dlc.tools.dlc_main import main
from hypothesis import given
from hypothesis import strategies as st
from onnx.reference import ReferenceEvaluator

import dlc
from benchmarks.model_zoo import yolo_style
from tests.onnx.models import torch_detector

RNG = np.random.default_rng(0)
CC = shutil.which("cc")
SIZES = (32, 48)
"""The detector's two image sizes (multiples of 8), each a variant with a dynamic batch."""


def detector_reference(x: np.ndarray) -> list[np.ndarray]:
    return ReferenceEvaluator(yolo_style()).run(None, {"x": x})


def assert_close(got: object, want: list[np.ndarray]) -> None:
    values = list(got) if isinstance(got, tuple) else [got]
    assert len(values) == len(want)
    for value, expected in zip(values, want, strict=True):
        assert value.shape == expected.shape
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def detector(tmp_path_factory: pytest.TempPathFactory) -> ShapeVariantsExecutable:
    """yolo_style (x declared [N, 3, H, W]) for H = W = 32 and 48, any batch."""
    cache = tmp_path_factory.mktemp("cache")
    executable = dlc.compile(
        yolo_style(), specialize=[{"x": (None, 3, s, s)} for s in SIZES], dynamic_batch=True,
        cache_dir=cache, jobs=2, threads=2)
    assert isinstance(executable, ShapeVariantsExecutable)
    return executable


@pytest.fixture(scope="module")
def library(detector: ShapeVariantsExecutable, tmp_path_factory: pytest.TempPathFactory
            ) -> Path:
    path = tmp_path_factory.mktemp("library") / "detector.so"
    detector.export(path, c_prefix="yolo", c_header=path.with_suffix(".h"))
    return path


# -- the variants' shapes ----------------------------------------------------------------------


def test_with_input_dims_fixes_the_given_dims_and_keeps_the_others() -> None:
    fixed = with_input_dims(yolo_style(), {"x": (None, 3, 320, 640)})
    dims = fixed.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["N", 3, 320, 640]
    assert yolo_style().graph.input[0].type.tensor_type.shape.dim[2].dim_param == "H"
    for shapes, message in [
        ({"z": (1, 3, 8, 8)}, "names input 'z', but the model's inputs are x"),
        ({"x": (1, 3, 8)}, "gives input 'x' 3 dims, but it is declared with 4"),
        ({"x": (1, 4, 8, 8)}, "dim 1 the size 4, but the model declares it 3"),
        ({"x": (1, 3, -8, 8)}, "dim 2 the size -8: expected a size >= 0 or ?"),
    ]:
        with pytest.raises(CompileError, match=message):
            with_input_dims(yolo_style(), shapes)


def test_variant_tags_name_the_dims_that_differ() -> None:
    assert variant_tags([[(-1, 3, 320, 320)], [(-1, 3, 640, 640)]]) == ["320x320", "640x640"]
    assert variant_tags([[(1, 3, 32, 32)], [(-1, 3, 32, 32)]]) == ["1", "n"]
    assert variant_tags([[(1, 8), (2, 4)], [(1, 8), (3, 4)]]) == ["2", "3"]
    assert variant_tags([[(1, 8), (2, 4)], [(1, 9), (3, 4)]]) == ["8_2", "9_3"]
    assert variant_tags([[(1, 8)]]) == ["v0"]  # nothing differs


@given(st.lists(st.lists(st.integers(-1, 3), min_size=1, max_size=3), min_size=1,
                max_size=5, unique_by=tuple))
def test_variant_tags_are_distinct_identifier_suffixes(shapes: list[list[int]]) -> None:
    tags = variant_tags([[tuple(shape)] for shape in shapes])
    assert len(set(tags)) == len(tags) == len(shapes)
    assert all(tag and all(c.isalnum() or c == "_" for c in tag) for tag in tags)


def test_the_table_of_variants_round_trips_and_rejects_other_versions() -> None:
    table = [VariantInfo("m_32", (("x", (-1, 3, 32, 32)),)), VariantInfo("m_48", ())]
    assert decode_variants(encode_variants(table)) == table
    with pytest.raises(MetadataError, match="version 2"):
        decode_variants(json.dumps({"version": 2, "variants": []}))
    with pytest.raises(MetadataError, match="malformed"):
        decode_variants("{\"version\": 1}")


def test_equal_weights_are_stored_once() -> None:
    a = np.arange(16, dtype=np.uint8)
    layout, total = pack_weights({"p": a, "q": a.copy(), "r": a[::-1].copy()},
                                 alignment=64)
    offsets = {symbol: offset for symbol, offset, _ in layout}
    assert offsets["p"] == offsets["q"] != offsets["r"]
    assert total == 64 + 16


# -- in process ----------------------------------------------------------------------------------


def test_each_call_runs_the_variant_of_its_shape(detector: ShapeVariantsExecutable) -> None:
    assert detector.describe() == "x: ?x3x32x32\nx: ?x3x48x48"
    for batch, size in [(1, 32), (3, 32), (2, 48)]:
        x = RNG.standard_normal((batch, 3, size, size)).astype(np.float32)
        chosen = detector.variant([x])
        assert chosen is detector.variants[SIZES.index(size)]
        assert_close(detector(x), detector_reference(x))
    assert detector.run({"x": x}).keys() == {"head4", "head8"}


def test_other_shapes_compile_as_without_variants(detector: ShapeVariantsExecutable) -> None:
    x = RNG.standard_normal((1, 3, 40, 40)).astype(np.float32)
    assert detector.variant([x]) is None
    assert_close(detector(x), detector_reference(x))
    assert isinstance(detector._fallback, SpecializingExecutable)


def test_a_variant_must_fix_every_dim_the_batch_does_not_take() -> None:
    with pytest.raises(CompileError, match=r"--specialize x=\?x3x32x\? leaves the model with "
                                           r"runtime shapes"):
        dlc.compile(yolo_style(), specialize=[{"x": (None, 3, 32, None)}], dynamic_batch=True)


# -- one library ----------------------------------------------------------------------------------


def test_the_library_runs_every_variant(library: Path) -> None:
    loaded = dlc.load(library)
    assert isinstance(loaded, ShapeVariantsExecutable)
    assert loaded.prefixes == ("yolo_32x32", "yolo_48x48")
    for batch, size in [(1, 32), (4, 32), (1, 48), (4, 48)]:
        x = RNG.standard_normal((batch, 3, size, size)).astype(np.float32)
        assert_close(loaded(x), detector_reference(x))
    x = np.zeros((1, 3, 40, 40), np.float32)
    with pytest.raises(ExecutableError, match=r"no variant of the model takes inputs of shapes "
                                              r"x: 1x3x40x40: it was compiled for x: "
                                              r"\?x3x32x32; x: \?x3x48x48"):
        loaded(x)


def test_the_library_exports_only_the_prefixed_functions(library: Path) -> None:
    listing = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                             text=True, check=True).stdout
    names = {line.split()[-1] for line in listing.splitlines() if line.strip()}
    assert "dlc_prefix" in names and {"yolo_variants", "yolo_dlc_symbol"} <= names
    assert {"yolo_32x32_run_batch", "yolo_48x48_run"} <= names
    assert all(n == "dlc_prefix" or n.startswith("yolo_") for n in names if not n.startswith("_"))


def test_a_kernel_both_variants_compile_to_is_linked_once(
        detector: ShapeVariantsExecutable) -> None:
    compiled = [v.compiled for v in detector.variants]
    objects, weights, renames = merge_variants(
        [("a", compiled[0]), ("b", compiled[1])], objcopy_for(compiled[0].arch))
    shared = set(compiled[0].objects.values()) & set(compiled[1].objects.values())
    assert len(objects) == sum(len(c.objects) for c in compiled) - len(shared)
    assert len(weights) == sum(len(c.weights) for c in compiled)
    defined = [name for code in objects for name in global_symbols(code)[0]]
    assert len(defined) == len(set(defined))  # no symbol defined twice
    assert "main" not in renames[0] and renames[1]["main"] == "b__main"


@pytest.mark.skipif(CC is None, reason="no C compiler 'cc'")
def test_a_c_program_calls_each_variant(library: Path, tmp_path: Path) -> None:
    source = tmp_path / "main.c"
    source.write_text("""
#include <stdio.h>
#include <stdlib.h>
#include "detector.h"

static float x32[2 * 3 * 32 * 32], x48[3 * 48 * 48];
static float h4_32[2 * 6 * 8 * 8], h8_32[2 * 6 * 4 * 4], h4_48[6 * 12 * 12], h8_48[6 * 6 * 6];

int main(int argc, char **argv) {
  FILE *in = fopen(argv[1], "rb");
  if (!in || fread(x32, sizeof x32, 1, in) != 1 || fread(x48, sizeof x48, 1, in) != 1) return 2;
  fclose(in);
  struct yolo_32x32_inputs a = {x32};
  struct yolo_32x32_outputs b = {h4_32, h8_32};
  if (yolo_32x32_run_batch(2, &a, &b) != YOLO_32X32_OK) return 3;
  struct yolo_48x48_inputs c = {x48};
  struct yolo_48x48_outputs d = {h4_48, h8_48};
  if (yolo_48x48_run(&c, &d) != YOLO_48X48_OK) return 4;
  FILE *out = fopen(argv[2], "wb");
  fwrite(h4_32, sizeof h4_32, 1, out); fwrite(h8_32, sizeof h8_32, 1, out);
  fwrite(h4_48, sizeof h4_48, 1, out); fwrite(h8_48, sizeof h8_48, 1, out);
  fclose(out);
  puts(yolo_variants());
  return 0;
}
""")
    program = tmp_path / "main"
    result = subprocess.run(
        [str(CC), "-O1", "-std=c11", "-Wall", "-Werror", f"-I{library.parent}", "-o",
         str(program), str(source), str(library), f"-Wl,-rpath,{library.parent}"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    x32 = RNG.standard_normal((2, 3, 32, 32)).astype(np.float32)
    x48 = RNG.standard_normal((1, 3, 48, 48)).astype(np.float32)
    (tmp_path / "in.bin").write_bytes(x32.tobytes() + x48.tobytes())
    run = subprocess.run([str(program), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    table = decode_variants(run.stdout.strip())
    assert [v.prefix for v in table] == ["yolo_32x32", "yolo_48x48"]
    assert table[0].shapes == (("x", (-1, 3, 32, 32)),)
    out = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32)
    want = [*detector_reference(x32), *detector_reference(x48)]
    sizes = np.cumsum([0, *(w.size for w in want)])
    for index, expected in enumerate(want):
        got = out[sizes[index]:sizes[index + 1]].reshape(expected.shape)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_the_library_handle_of_an_unknown_variant_is_an_error(library: Path) -> None:
    from dlc.runtime.library import LibraryError, load_library

    with pytest.raises(LibraryError, match="has no variant 'yolo_64x64'"):
        load_library(library).variant("yolo_64x64")
    assert ctypes.CDLL(str(library)).yolo_dlc_symbol(b"dlc_metadata") == 0


# -- the command line ---------------------------------------------------------------------------


def test_dlc_compile_specialize_writes_one_library(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path, output = tmp_path / "yolo.onnx", tmp_path / "yolo.so"
    onnx.save(yolo_style(), path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--jobs", "2"]
    assert main(["compile", str(path), "--specialize", "x=1x3x32x32", "--specialize",
                 "x=2x3x32x32", "-o", str(output), "--c-header", str(tmp_path / "yolo.h"),
                 *cache]) == 0
    printed = capsys.readouterr().out
    assert "(2 shapes)" in printed and "yolo_1: x: 1x3x32x32" in printed
    assert "functions yolo_1_run, ..., yolo_variants" in printed
    assert (tmp_path / "yolo.h").read_text().count("int yolo_2_run(") == 1
    assert main(["run", str(output), "--seed", "1", "--output-dir", str(tmp_path / "out")]) == 0
    assert np.load(tmp_path / "out" / "head4.npy").shape == (1, 6, 8, 8)
    x = RNG.standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(output), "--input", f"x={tmp_path / 'x.npy'}", "--output-dir",
                 str(tmp_path / "out2")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "out2" / "head8.npy"),
                               detector_reference(x)[1], rtol=1e-4, atol=1e-4)
    capsys.readouterr()
    for arguments, message in [
        (["run", str(output), "--specialize", "x=1x3x32x32"],
         "--specialize applies when compiling, not to a compiled .so"),
        (["compile", str(path), "--specialize", "x=1x3xax32", "-o", str(tmp_path / "b.so")],
         "expected NAME=DIMS[,NAME=DIMS...] such as x=?x3x320x320"),
        (["compile", str(path), "--specialize", "x=1x3x32x32", "--specialize", "x=1x3x32x32",
          "-o", str(tmp_path / "b.so"), *cache], "--specialize x=1x3x32x32 is listed twice"),
    ]:
        assert main(arguments) == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert not (tmp_path / "b.so").exists()


def test_dlc_profile_profiles_the_variant_of_its_inputs(
        library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.save(tmp_path / "x.npy", RNG.standard_normal((2, 3, 48, 48)).astype(np.float32))
    assert main(["profile", str(library), "--input", f"x={tmp_path / 'x.npy'}", "--repeat",
                 "2"]) == 0
    assert "whole model (one call)" in capsys.readouterr().out
    np.save(tmp_path / "y.npy", np.zeros((1, 3, 40, 40), np.float32))
    assert main(["profile", str(library), "--input", f"x={tmp_path / 'y.npy'}"]) == 1
    err = capsys.readouterr().err
    assert "no variant of the model takes inputs of shapes x: 1x3x40x40" in err
    assert "Traceback" not in err


def test_specialize_is_for_cpu_libraries() -> None:
    with pytest.raises(CompileError, match="expected a CPU target and no fallback with "
                                           "specialize .* found target 'host' and fallback"):
        dlc.compile(yolo_style(), specialize=[{"x": (1, 3, 32, 32)}], fallback="llvm")
    with pytest.raises(CompileError, match="found target 'opencl'"):
        dlc.compile(yolo_style(), target="opencl", specialize=[{"x": (1, 3, 32, 32)}])
    with pytest.raises(CompileError, match="expected at least one shape"):
        dlc.compile(yolo_style(), specialize=[])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's TorchScript exporter
def test_an_exported_detector_is_one_library_of_its_image_sizes(tmp_path: Path) -> None:
    """The detector exported with dynamic batch, height and width: one library of 64x64 and
    96x96 images, each any batch, runs batches 1 and 4 of both sizes like ONNX Runtime."""
    onnxruntime = pytest.importorskip("onnxruntime")
    proto = torch_detector(tmp_path / "detector.onnx")
    executable = dlc.compile(proto, specialize=[{"images": (None, 3, s, s)} for s in (64, 96)],
                             dynamic_batch=True, cache_dir=tmp_path / "cache", jobs=2)
    assert [v.batch_symbol for v in executable.variants] == ["N", "N"]
    loaded = dlc.load(executable.export(tmp_path / "detector.so"))
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    for batch, size in [(1, 64), (4, 64), (1, 96), (4, 96)]:
        x = RNG.standard_normal((batch, 3, size, size)).astype(np.float32)
        (want,) = session.run(None, {"images": x})
        for got in (executable(x), loaded(x)):
            assert got.shape == want.shape == (batch, 15 * size * size // 256, 8)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@pytest.mark.skipif(CC is None, reason="no C compiler 'cc'")
def test_an_archive_of_the_variants_links_elsewhere(detector: ShapeVariantsExecutable,
                                                    tmp_path: Path) -> None:
    """`export("m.tar")`: the renamed objects, the weights, the C interface's sources (one per
    variant and the table's) and link.sh, which links the library `dlc.load` opens."""
    import tarfile

    archive = detector.export(tmp_path / "detector.tar", c_prefix="det")
    with tarfile.open(archive) as members:
        names = members.getnames()
        members.extractall(tmp_path / "unpacked", filter="data")
    assert {"link.sh", "det.h", "dlc_c_api.c", "dlc_c_api_0.c", "dlc_c_api_1.c"} <= set(names)
    linked = subprocess.run(["sh", "link.sh", "det.so"], cwd=tmp_path / "unpacked",
                            capture_output=True, text=True, check=False)
    assert linked.returncode == 0, linked.stderr
    loaded = dlc.load(tmp_path / "unpacked" / "det.so")
    assert loaded.prefixes == ("det_32x32", "det_48x48")
    x = RNG.standard_normal((2, 3, 48, 48)).astype(np.float32)
    assert_close(loaded(x), detector_reference(x))


def test_a_missing_objcopy_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import dlc.driver.shape_variants as shape_variants
    from dlc.runtime.library import LibraryError, machine_arch

    monkeypatch.setattr(shape_variants.shutil, "which", lambda _: None)
    with pytest.raises(LibraryError, match=r"no 'objcopy' on PATH \(install binutils\)"):
        objcopy_for(machine_arch())
    other = "aarch64" if machine_arch() != "aarch64" else "x86_64"
    with pytest.raises(LibraryError, match=r"no '.*-linux-gnu-objcopy' on PATH \(install "
                                           r"binutils-.*-linux-gnu\)"):
        objcopy_for(other)
