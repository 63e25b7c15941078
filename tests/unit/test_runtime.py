"""Process-wide state lives in one runtime module per package; per-command state is passed down.

``python_ops.runtime`` and ``dbt.adapters.sparkdelta.common.runtime`` hold what the process shares
(engines, the Arrow pool, probed buckets...); an ``Invocation`` holds what one command
remembers. Every other module is scanned: no ``global`` statement, no lock made at module or
class level, no empty mutable container (a cache, a registry) assigned at module or class level.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from python_ops import runtime

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (ROOT / "python_ops", ROOT / "dbt" / "adapters" / "sparkdelta")
RUNTIMES = {ROOT / "python_ops" / "runtime.py", ROOT / "dbt/adapters/sparkdelta/common/runtime.py"}
LOCKS = {"Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event"}
CONTAINERS = {
    "set",
    "dict",
    "list",
    "Counter",
    "defaultdict",
    "OrderedDict",
    "WeakSet",
    "WeakKeyDictionary",
    "WeakValueDictionary",
    "SimpleQueue",
    "Queue",
}


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in pkg.rglob("*.py") if p not in RUNTIMES)


def _called(node: ast.AST | None) -> str:
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _state_made(value: ast.AST | None) -> str:
    """What process state ``value`` makes ('' when none): a lock or an empty container."""
    called = _called(value)
    if called in LOCKS:
        return f"a lock ({called})"
    if called in CONTAINERS and isinstance(value, ast.Call) and not value.args:
        return f"an empty {called}"
    if isinstance(value, (ast.Dict, ast.Set, ast.List)) and not getattr(
        value, "keys" if isinstance(value, ast.Dict) else "elts"
    ):
        return "an empty container"
    return ""


def _top_level_state(body: list[ast.stmt], where: str) -> list[str]:
    found = []
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            made = _state_made(stmt.value)
            if made:
                found.append(f"{where} line {stmt.lineno}: {made}")
        elif isinstance(stmt, ast.ClassDef):
            found += _top_level_state(stmt.body, f"{where} class {stmt.name}")
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_keeps_process_state_of_its_own(path: Path) -> None:
    tree = ast.parse(path.read_text())
    where = str(path.relative_to(ROOT))
    found = _top_level_state(tree.body, where)
    found += [
        f"{where} line {node.lineno}: global {', '.join(node.names)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Global)
    ]
    assert not found, "process-wide state belongs in a runtime module: " + "; ".join(found)


def test_the_runtime_lists_everything_it_holds() -> None:
    held = {name for name, value in vars(runtime).items() if isinstance(value, runtime.Shared)}
    listed = {name for name, value in vars(runtime).items() if value in runtime.shared_state()}
    assert held == listed
    assert len(runtime.shared_state()) == len(held)
    doc = runtime.__doc__ or ""
    assert all(f"``{name}``" in doc for name in held), "each is documented with its reason"
