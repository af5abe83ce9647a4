"""The house (docs/contributing.md, "Architecture"): each layer imports only the layers below it, and no module
imports one that imports it back. Imports inside functions and under TYPE_CHECKING count too: an
import that runs late is still a dependency."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_each_layer_imports_only_the_layers_below_it(capsys):
    from importlinter.cli import lint_imports

    status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert status == 0, capsys.readouterr().out


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
