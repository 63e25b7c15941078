"""No function in python_ops or the adapter over 60 lines or 7 positional parameters (house 4).

A function's length is its body without its docstring. The functions still over it are listed
with their length: the list may only shrink (a listed function that grew, or that now fits,
fails the test until the list says so), and no other function may join it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.helpers.paths import ROOT

MAX_LINES = 60
MAX_POSITIONAL = 7
# (file name, function): body lines today. Shrink it; never add to it.
STILL_LONG: dict[tuple[str, str], int] = {}


def _functions() -> Iterator[tuple[Path, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for root in (ROOT / "python_ops", ROOT / "dbt" / "adapters" / "sparkdelta"):
        for path in sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield path, node


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    first = node.body[0]
    documented = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and len(node.body) > 1
    )
    start = (first.end_lineno or first.lineno) + 1 if documented else first.lineno
    return (node.end_lineno or node.lineno) - start + 1


def test_no_function_is_longer_than_sixty_lines_but_the_listed_ones() -> None:
    long = {
        (path.name, node.name): _body_lines(node)
        for path, node in _functions()
        if _body_lines(node) > MAX_LINES
    }
    new = {k: v for k, v in long.items() if k not in STILL_LONG}
    assert not new, f"functions over {MAX_LINES} lines: {new}"
    grown = {k: (STILL_LONG[k], v) for k, v in long.items() if v > STILL_LONG[k]}
    assert not grown, f"listed functions that grew (listed, now): {grown}"
    fits = sorted(set(STILL_LONG) - set(long))
    assert not fits, f"these fit in {MAX_LINES} lines now: take them off STILL_LONG: {fits}"


def test_no_function_takes_more_than_seven_positional_parameters() -> None:
    wide = [
        f"{path.relative_to(ROOT)}:{node.name}"
        for path, node in _functions()
        if len(node.args.posonlyargs) + len(node.args.args) > MAX_POSITIONAL
    ]
    assert not wide, f"more than {MAX_POSITIONAL} positional parameters: {wide}"
