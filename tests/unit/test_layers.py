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
    ("errors", "values", "invocation", "runtime"),
    ("storage", "spark_sessions", "delta_sql", "delta_jars", "jars_fetch"),
    ("delta",),
    ("ops",),
    ("maintenance", "advise"),
    ("cli", "__main__"),
)


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else module
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"python_ops.{top} belongs to no layer: add it to LAYERS")


def _modules(package: Path = PACKAGE, base: Path = PACKAGE.parent) -> list[tuple[str, Path]]:
    out = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(base).with_suffix("").parts
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


# Packages split into rooms, each room's rooms lowest first: a room imports only itself and the
# rooms before it, never its package's own modules (those are the package's front, above every
# room). Each room's __init__ says what it holds and what it may import.
PACKAGE_ROOMS: dict[str, tuple[str, ...]] = {
    "python_ops.maintenance": (
        "configuration",
        "facts",
        "selection",
        "records",
        "rules",
        "runs",
        "decisions",
        "running",
    ),
    "python_ops.delta": ("log", "table", "state", "writing"),
    "python_ops.ops.vacuum": ("rule", "sources", "deleting", "executors"),
    "python_ops.ops.optimize": ("sorting", "planning", "writers"),
    "dbt.adapters.sparkdelta": (
        "common",
        "engines",
        "configs",
        "bridge",
        "materializing",
        "operations",
    ),
}
# issue 67: no folder of python_ops or the adapter holds more than about a dozen modules
MAX_ROOM_MODULES = 12
ROOT = PACKAGE.parent
ADAPTER = ROOT / "dbt" / "adapters" / "sparkdelta"


def _package_dir(package: str) -> Path:
    return ROOT.joinpath(*package.split("."))


def _place(package: str, module: str) -> int | None:
    """``module``'s rank in ``package``: its room's index, len(rooms) for the package's own
    modules (the front), None outside the package."""
    rooms = PACKAGE_ROOMS[package]
    if module == package:
        return len(rooms)
    if not module.startswith(package + "."):
        return None
    head = module[len(package) + 1 :].split(".")[0]
    return rooms.index(head) if head in rooms else len(rooms)


def _room_cases() -> list[tuple[str, str, Path]]:
    cases = []
    for package in PACKAGE_ROOMS:
        modules = _modules(_package_dir(package), ROOT)
        cases += [(package, module, path) for module, path in modules]
    return cases


@pytest.mark.parametrize(("package", "module", "path"), _room_cases(), ids=lambda v: str(v))
def test_no_room_imports_a_later_room_or_its_front(package: str, module: str, path: Path) -> None:
    own = _place(package, module)
    rooms = PACKAGE_ROOMS[package]
    assert own is not None
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from package import room`` is the room, not the package's front
            names = [f"{node.module}.{a.name}" for a in node.names]
            targets = names if node.module == package else [node.module]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        for target in targets:
            place = _place(package, target)
            assert place is None or place <= own, (
                f"{module} ({rooms[own] if own < len(rooms) else 'front'}) imports {target} "
                f"({rooms[place] if place < len(rooms) else 'front'})"
            )


def test_every_room_is_small_and_says_what_it_holds() -> None:
    for package, rooms in PACKAGE_ROOMS.items():
        folder = _package_dir(package)
        for room in rooms:
            doc = ast.get_docstring(ast.parse((folder / room / "__init__.py").read_text()))
            assert doc, (package, room)
            assert "May import:" in doc, (package, room)
        subpackages = {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
        assert subpackages == set(rooms), package
    # maintenance has no front of its own: every module is in a room
    maintenance = PACKAGE / "maintenance"
    assert not [p.name for p in maintenance.glob("*.py") if p.name != "__init__.py"]


@pytest.mark.parametrize("top", [PACKAGE, ADAPTER], ids=["python_ops", "adapter"])
def test_no_folder_holds_more_than_a_dozen_modules(top: Path) -> None:
    for init in top.rglob("__init__.py"):
        modules = [p for p in init.parent.glob("*.py") if p.name != "__init__.py"]
        assert len(modules) <= MAX_ROOM_MODULES, (str(init.parent.relative_to(ROOT)), len(modules))


def test_every_top_level_module_has_a_layer() -> None:
    for path in PACKAGE.iterdir():
        if path.name.startswith(("_", ".")) and path.name != "__main__.py":
            continue
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            _layer(path.stem)


def _edges(module: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules ``module`` imports (``from pkg import submodule`` is the submodule)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = node.module
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in known else base)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known and m != module}


def import_cycles(package: Path = PACKAGE, base: Path = PACKAGE.parent) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    modules = dict(_modules(package, base))
    known = set(modules)
    graph = {m: _edges(m, p, known) for m, p in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_import_loop_inside_a_layer() -> None:
    # every import counts, lazy ones too: a loop is one idea split across two modules
    assert import_cycles() == []


def test_no_import_loop_inside_the_adapter() -> None:
    # issue 67: build_clock <-> looks_kept was one; lazy imports count here too
    adapter = PACKAGE.parent / "dbt" / "adapters" / "sparkdelta"
    assert import_cycles(adapter, PACKAGE.parent) == []


# --- the adapter's doors into python_ops ---------------------------------------------------------

# The adapter reaches python_ops through the maintenance package (which re-exports what it
# needs from the floors below) and the error hierarchy; nothing else, and never delta-rs itself.
ADAPTER_DOORS = ("python_ops.maintenance", "python_ops.errors")


@pytest.mark.parametrize(
    "path", sorted(ADAPTER.rglob("*.py")), ids=lambda p: str(p.relative_to(ADAPTER))
)
def test_the_adapter_imports_only_maintenance_and_errors(path: Path) -> None:
    for imported in _imports(path):
        if imported.split(".")[0] in ("python_ops", "deltalake"):
            assert imported in ADAPTER_DOORS, f"{path.name} imports {imported}"


def test_every_name_the_maintenance_package_exports_is_its_module_s() -> None:
    import importlib

    import python_ops.maintenance as doors

    submodules = {path.stem for path in (PACKAGE / "maintenance").rglob("*.py")} | set(
        PACKAGE_ROOMS["python_ops.maintenance"]
    )
    for name in doors.__all__:
        # a submodule once imported is the package's attribute of that name: no export may
        # share one
        assert name not in submodules, name
        module = importlib.import_module(doors._EXPORTS[name])
        assert getattr(doors, name) is getattr(module, name), name
    # the type checker's view (the TYPE_CHECKING block) names the same modules and names
    tree = ast.parse((PACKAGE / "maintenance" / "__init__.py").read_text())
    declared = {
        alias.name: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("python_ops")
        for alias in node.names
    }
    assert declared == doors._EXPORTS


def _dbt_modules_named(path: Path) -> set[str]:
    """Strings in a module that are whole dbt module names (what a child process would run)."""
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("dbt.")
        and node.value.replace(".", "").replace("_", "").isalnum()
    }


def test_python_ops_reaches_the_adapter_only_through_the_selection_port() -> None:
    # python_ops never imports dbt; its one way to dbt is a child process running a module of
    # the adapter, and that edge is the port python_ops.maintenance.selection.selection_resolver
    named = {module: _dbt_modules_named(path) for module, path in _modules()}
    edges = {(module, target) for module, targets in named.items() for target in targets}
    assert edges == {
        (
            "python_ops.maintenance.selection.selection_resolver",
            "dbt.adapters.sparkdelta.bridge.selection_cli",
        )
    }
    resolver = ADAPTER / "bridge" / "selection_cli.py"
    defined = {
        node.name
        for node in ast.parse(resolver.read_text()).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef)
    }
    # the child process's entry point, and the same port in a process that has dbt
    assert {"main", "ManifestResolver"} <= defined


def test_the_module_map_in_the_docs_is_the_tree() -> None:
    # docs/development.md "The module map": one table per split package, a row per room naming
    # its modules and its docstring's first line, and the package's front; a module moved or
    # added, or a room redescribed, without the map fails here
    text = (ROOT / "docs" / "development.md").read_text()
    section = text.split("## The module map", 1)[1].split("\n## ", 1)[0]
    for package, rooms in PACKAGE_ROOMS.items():
        folder = _package_dir(package)
        part = section.split(f"### `{folder.relative_to(ROOT)}/`", 1)[1].split("\n### ", 1)[0]
        for room in rooms:
            modules = sorted(p.stem for p in (folder / room).glob("*.py") if p.stem != "__init__")
            doc = ast.get_docstring(ast.parse((folder / room / "__init__.py").read_text()))
            holds = (doc or "").split("\n")[0].replace("``", "`")
            row = f"| `{room}` | {', '.join(modules)} | {holds} |"
            assert row in part, (package, room, row)
        front = sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("__"))
        if front:
            assert "Front: " + ", ".join(f"`{m}`" for m in front) + "." in part, package
