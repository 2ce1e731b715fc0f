"""The registries: every pass has its FileCheck file, every dialect loads, packages are ours."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest
from dlc.dialects import DLC_DIALECTS, get_all_dialects
from dlc.pipelines import PIPELINES, get_all_pipelines
from dlc.rewrites import available_dlc_passes, get_dlc_passes

REPO = Path(__file__).resolve().parent.parent
REWRITE_TESTS = REPO / "tests" / "filecheck" / "rewrites"


@pytest.mark.parametrize(
    "package",
    ["dialects", "rewrites", "pipelines", "frontends", "codegen", "runtime", "autotune", "dlc",
     "tools"],
)
def test_top_level_packages_resolve_to_this_repository(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(REPO), module.__file__


def test_every_pass_has_a_filecheck_file() -> None:
    missing = [n for n in get_dlc_passes() if not (REWRITE_TESTS / f"{n}.mlir").is_file()]
    assert not missing, f"passes without tests/filecheck/rewrites/<name>.mlir: {missing}"


def test_every_filecheck_file_has_a_pass() -> None:
    """tests/filecheck/rewrites/<pass>.mlir, and more files of one pass in a folder of its name
    (tests/filecheck/rewrites/<pass>/<aspect>.mlir, as MLIR keeps a conversion's tests)."""
    names = set(get_dlc_passes())
    files = sorted(p.stem for p in REWRITE_TESTS.glob("*.mlir")) if REWRITE_TESTS.is_dir() else []
    folders = sorted(p.parent.name for p in REWRITE_TESTS.glob("*/*.mlir")
                     if p.parent.name != "Inputs")
    orphans = [f for f in [*files, *folders] if f not in names]
    assert not orphans, f"tests/filecheck/rewrites files with no registered pass: {orphans}"


@pytest.mark.parametrize("name", sorted(available_dlc_passes()))
def test_pass_follows_conventions(name: str) -> None:
    module_name, class_name = available_dlc_passes()[name]
    assert module_name == "dlc.rewrites." + name.replace("-", "_")
    assert class_name.endswith("Pass")
    cls = get_dlc_passes()[name]()
    assert cls.name == name
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    doc = cls.__doc__ or ""
    for section in ("Input invariant", "Output IR", "Invariants"):
        assert section in doc, f"{class_name}'s docstring lacks '{section}'"


@pytest.mark.parametrize("name", sorted(DLC_DIALECTS))
def test_dlc_dialect_loads_under_its_folder_name(name: str) -> None:
    dialect = get_all_dialects()[name]()
    assert dialect.name == name
    assert (REPO / "dialects" / name).is_dir()
    for op in dialect.operations:
        assert op.name.startswith(name + "."), op.name
        assert op.__name__.endswith("Op"), op.__name__
        assert op.__doc__ and "Example" in op.__doc__, f"{op.__name__} lacks an Example docstring"


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_named_pipelines_are_passes(name: str) -> None:
    cls = get_all_pipelines()[name]()
    assert cls.name == name
    assert PIPELINES[name].spec in (cls.__doc__ or "")
