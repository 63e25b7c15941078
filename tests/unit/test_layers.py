"""The package layers: each layer of ``python_ops`` imports only from itself and lower layers.

Every ``import`` statement counts, also those inside functions: a lazy import upward is still a
dependency on a higher layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python_ops"

# Lowest first; a module may import from its own layer and the layers before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "values"),
    ("storage", "spark_sessions", "delta_jars"),
    ("delta",),
    ("ops",),
    ("maintenance",),
    ("cli", "__main__"),
)


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else module
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"python_ops.{top} belongs to no layer: add it to LAYERS")


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if len(parts) > 1:
            out.append((".".join(parts), path))
    return out


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize(("module", "path"), _modules(), ids=lambda v: str(v))
def test_no_module_imports_a_higher_layer(module: str, path: Path) -> None:
    own = _layer(module)
    for imported in _imports(path):
        if imported == "python_ops" or not imported.startswith("python_ops."):
            assert not imported.startswith("dbt"), f"{module} imports dbt ({imported})"
            continue
        assert _layer(imported) <= own, (
            f"{module} (layer {own}) imports {imported} (layer {_layer(imported)})"
        )


def test_every_top_level_module_has_a_layer() -> None:
    for path in PACKAGE.iterdir():
        if path.name.startswith(("_", ".")) and path.name != "__main__.py":
            continue
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            _layer(path.stem)
