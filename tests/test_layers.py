"""dlc's packages form layers whose imports only point down, with no cycles between packages.

Every import is scanned from the source (AST), those inside functions and under
`if TYPE_CHECKING:` included, so a deferred import cannot hide an upward edge. The layers, bottom
to top, are `LAYERS`; a package may import its own layer's modules, packages of lower layers,
and nothing above. `runtime` imports no other dlc package and neither xDSL nor llvmlite, so that
a deployed library needs only it and NumPy.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"target", "runtime"}),
    frozenset({"dialects"}),
    frozenset({"frontends", "rewrites", "codegen"}),
    frozenset({"pipelines"}),
    frozenset({"driver"}),
    frozenset({"autotune"}),
    frozenset({"dlc"}),
    frozenset({"tools"}),
)
"""dlc's packages, bottom layer first. Packages in one layer may not import each other."""

RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}

FORBIDDEN_THIRD_PARTY: dict[str, frozenset[str]] = {
    "runtime": frozenset({"xdsl", "llvmlite", "onnx"}),
    "target": frozenset({"xdsl", "onnx"}),
}
"""Libraries a package must not import: the runtime runs deployed models with NumPy alone, the
target descriptions are plain data (llvmlite only to ask the host what it is)."""


def _package_of(module: str) -> str | None:
    """The dlc package a dotted module name belongs to (`dlc.rewrites.x` -> `rewrites`)."""
    parts = module.split(".")
    if parts[0] != "dlc":
        return parts[0] if parts[0] in RANK else None
    if len(parts) > 1 and parts[1] in RANK and parts[1] != "dlc":
        return parts[1]
    return "dlc"


def _imports(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in `path`, relative ones resolved."""
    tree = ast.parse(path.read_text(), str(path))
    here = [package] + list(path.relative_to(REPO / package).with_suffix("").parts)
    if here[-1] == "__init__":
        here = here[:-1]
        here.append("__init__")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["dlc", *here[: len(here) - node.level]]
                found.append((node.lineno, ".".join(base + ([node.module] if node.module else []))))
            else:
                assert node.module is not None
                found.append((node.lineno, node.module))
    return found


def _scan() -> dict[str, list[tuple[str, str]]]:
    """{package: [(where, imported module), ...]} for every .py file of every package."""
    edges: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for package in RANK:
        folder = REPO / package
        for path in sorted(folder.rglob("*.py")):
            for line, module in _imports(path, package):
                edges[package].append((f"{path.relative_to(REPO)}:{line}", module))
    return edges


def test_every_package_is_in_a_layer() -> None:
    folders = {
        p.name for p in REPO.iterdir() if p.is_dir() and (p / "__init__.py").is_file()
    } - {"tests", "benchmarks"}
    assert folders <= set(RANK), f"packages in no layer: {sorted(folders - set(RANK))}"


def test_imports_only_point_down() -> None:
    upward = []
    for package, imports in _scan().items():
        for where, module in imports:
            target = _package_of(module)
            if target is None or target == package:
                continue
            if RANK[target] >= RANK[package]:
                upward.append(f"{where}: {package} imports {module} ({target})")
    assert not upward, "imports that do not point down:\n" + "\n".join(upward)


def test_no_top_level_aliases_of_dlc_packages() -> None:
    """Every import names a dlc package as `dlc.X`: the bare `X` (the folder on sys.path in a
    checkout) would load a second copy of its classes."""
    bare = [
        f"{where}: {module}"
        for imports in _scan().values()
        for where, module in imports
        if module.split(".")[0] in RANK and module.split(".")[0] != "dlc"
    ]
    assert not bare, "\n".join(bare)


@pytest.mark.parametrize("package", sorted(FORBIDDEN_THIRD_PARTY))
def test_bottom_packages_avoid_heavy_libraries(package: str) -> None:
    found = [
        f"{where}: {module}"
        for where, module in _scan()[package]
        if module.split(".")[0] in FORBIDDEN_THIRD_PARTY[package]
    ]
    assert not found, "\n".join(found)


def test_runtime_loads_with_numpy_alone() -> None:
    """Importing every runtime module pulls in no compiler package, xDSL or llvmlite."""
    modules = [
        f"dlc.runtime.{p.stem}" for p in sorted((REPO / "runtime").glob("*.py"))
        if p.stem != "__init__"
    ]
    code = (
        "import sys, importlib\n"
        f"for m in {modules!r}:\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except ImportError as e:\n"
        "        if e.name not in ('pyopencl', 'cuda', 'cuda.bindings'): raise\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('xdsl', 'llvmlite', 'onnx')\n"
        "             or (m.startswith('dlc.') and m.split('.')[1] not in ('runtime',)))\n"
        "print(bad)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout
