"""`pip install .` adds one top-level package, `dlc`, holding every layer of the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_installs_one_top_level_package(tmp_path: Path) -> None:
    source = tmp_path / "src"  # setuptools builds in the source tree: not in the checkout
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", "build", "*.egg-info", "__pycache__", "Output", ".hypothesis"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(tmp_path), str(source)],
        check=True, capture_output=True, text=True,
    )
    (wheel,) = tmp_path.glob("dlc-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"dlc"}
    folders = {name.split("/")[1] for name in names if name.startswith("dlc/") and
               name.count("/") >= 2}
    assert {"target", "runtime", "dialects", "frontends", "rewrites", "codegen", "pipelines",
            "driver", "autotune", "tools"} <= folders
    assert "dlc/dialects/graph/ops.py" in names
    assert "dlc/tools/dlc_opt.py" in names
    assert {"dlc/runtime/gpu_shim/dlc_gpu.h", "dlc/runtime/gpu_shim/opencl.c",
            "dlc/runtime/gpu_shim/cuda.c"} <= set(names)  # what a GPU library compiles
    assert "dlc/runtime/thread_pool/pool.c" in names  # what parallel loops run on
    (entry_points,) = [n for n in names if n.endswith("entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "dlc-opt = dlc.tools.dlc_opt:main" in text
