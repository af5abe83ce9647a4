"""The house (docs/contributing.md, "Architecture"): each layer imports only the layers below it, the run side
never imports the read side, and no module imports one that imports it back. Imports inside functions and
under TYPE_CHECKING count too: an import that runs late is still a dependency."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_each_layer_imports_only_the_layers_below_it(capsys):
    from importlinter.cli import lint_imports

    status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert status == 0, capsys.readouterr().out


def test_the_contract_names_every_room_of_the_house():
    """The layers, as docs/contributing.md draws them: the read side above the run side and the code
    track, the viewer above the read side, training's place held before it exists."""
    contracts = {c["name"]: c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
                 ["contracts"]}
    layers = contracts["Each layer imports only the layers below it"]["layers"]
    assert layers.index("randori.viewer") < layers.index("randori.report") \
        < layers.index("(randori.training) | randori.code") < layers.index("randori.validity | randori.bench")
    assert "randori.terminal | randori.text | randori.stats" in layers
    seam = contracts["The run side imports nothing of the read side"]
    assert (seam["type"], seam["source_modules"], seam["forbidden_modules"]) == (
        "forbidden", ["randori.bench", "randori.validity"], ["randori.report"])


@pytest.mark.parametrize(("module", "reader"), [
    ("bench/spend.py", "randori.report.compact"),  # a late import, inside a function, counts too
    ("validity/variants.py", "randori.report.metrics"),
])
def test_the_run_side_reaching_the_read_side_breaks_the_contract(tmp_path, module, reader):
    """The contract run on a copy of the tree in which one run-side module imports the read side."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "randori", src / "randori", ignore=shutil.ignore_patterns("data", "__pycache__"))
    with (src / "randori" / module).open("a", encoding="utf-8") as f:
        f.write(f"\n\ndef _reads_results():\n    import {reader}  # noqa\n")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    linted = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                             "sys.exit(lint_imports_command())", "--no-cache"],
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True,
                            text=True, timeout=600)
    assert linted.returncode != 0, linted.stdout
    assert "The run side imports nothing of the read side BROKEN" in linted.stdout, linted.stdout
    source = "randori." + module.removesuffix(".py").replace("/", ".")
    assert f"{source} -> {reader}" in linted.stdout, linted.stdout


def test_no_module_imports_one_that_imports_it_back():
    assert circles(ROOT / "src", "randori") == []


def test_a_circle_through_a_late_or_typing_import_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "inner").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("from pkg.high import thing\n")
    (pkg / "high.py").write_text("def thing():\n    from . import low\n")
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.other import X\n")
    (pkg / "other.py").write_text("import pkg.typed\n")
    # A package's __init__ may import its own modules to register them (the suites do), and a module
    # importing itself is no circle.
    (pkg / "inner" / "__init__.py").write_text("from pkg.inner import part\n")
    (pkg / "inner" / "part.py").write_text("import pkg.inner\nfrom pkg.inner.part import X\n")
    assert circles(tmp_path, "pkg") == [("pkg.high", "pkg.low"), ("pkg.other", "pkg.typed")]


def circles(src: Path, root: str) -> list[tuple[str, str]]:
    """Pairs of modules under `src/root` that import each other, except a package and its own module."""
    imports = import_graph(src, root)
    return sorted((a, b) for a in imports for b in imports[a]
                  if a < b and a in imports.get(b, ()) and not _own_module(a, b) and not _own_module(b, a))


def import_graph(src: Path, root: str) -> dict[str, set[str]]:
    """Module -> the modules of `root` it imports, wherever the import statement stands."""
    files = {_module_name(src, p): p for p in sorted((src / root).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(_known(a.name, files) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                # `from pkg import mod` imports the module pkg.mod when there is one.
                found.update(_known(f"{base}.{a.name}" if f"{base}.{a.name}" in files else base, files)
                             for a in node.names)
        graph[name] = {m for m in found if m and m != name}
    return graph


def _module_name(src: Path, path: Path) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _known(name: str, files: dict[str, Path]) -> str:
    """The module `name` refers to (an attribute of a module refers to that module), or ""."""
    while name and name not in files:
        name = name.rpartition(".")[0]
    return name


def _own_module(package: str, module: str) -> bool:
    return module.rpartition(".")[0] == package
