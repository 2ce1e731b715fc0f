"""Installs the repository's top-level folders as one package, `dlc` (pyproject.toml has the rest).

The repository keeps the layout its users asked for (`dialects/`, `rewrites/`, `pipelines/`,
`tools/`, ...) while site-packages gains a single name: each folder is mapped to a subpackage of
`dlc` with setuptools' `package_dir` (`dialects/` -> `dlc.dialects`).
"""

from setuptools import find_packages, setup

LAYERS = (
    "target", "runtime", "dialects", "frontends", "rewrites", "codegen", "pipelines", "driver",
    "autotune", "tools",
)
"""The folders installed under `dlc` (the compiler's layers, bottom to top)."""

setup(
    package_dir={"dlc": "dlc", **{f"dlc.{layer}": layer for layer in LAYERS}},
    packages=["dlc"] + [
        f"dlc.{layer}{'.' + sub if sub else ''}"
        for layer in LAYERS
        for sub in ["", *find_packages(layer)]
    ],
    # The device runtime a GPU library links (driver/gpu_library.py compiles it).
    package_data={"dlc.runtime": ["gpu_shim/*.c", "gpu_shim/*.h", "thread_pool/*.c"]},
)
