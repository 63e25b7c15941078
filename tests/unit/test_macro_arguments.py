"""A misspelt run-operation argument names the nearest valid one (issue 65 item 10).

dbt said only "macro 'dbt_macro__maintain_all' takes no keyword argument 'selct'". Every
run-operation macro now catches what it does not take (``kwargs``) and refuses it with
``refuse_unknown_arguments``: the argument, the nearest valid one and the valid list. The same
through real dbt: ``tests/e2e/test_run_operation_arguments.py``.
"""

from __future__ import annotations

import re

import pytest

from dbt.adapters.sparkdelta.configs.macro_arguments import unknown_arguments_text
from tests.helpers.paths import ROOT
from tests.unit.test_macros_layout import INTERNAL

MACROS = ROOT / "macros"
MAINTAIN_ALL = [
    "select",
    "exclude",
    "dry_run",
    "retention_hours",
    "threads",
    "time_budget_s",
    "ops",
    "selector",
    "state",
]


def test_a_misspelt_argument_is_named_with_the_nearest_valid_one() -> None:
    assert unknown_arguments_text("maintain_all", ["selct"], MAINTAIN_ALL) == (
        "maintain_all: unknown argument 'selct' (did you mean 'select'?). maintain_all takes: "
        "select, exclude, dry_run, retention_hours, threads, time_budget_s, ops, selector, state."
    )


def test_several_unknown_arguments_and_one_like_none() -> None:
    assert unknown_arguments_text("vacuum_table", ["xyz", "retention_hour"], ["model"]) == (
        "vacuum_table: unknown arguments 'retention_hour', 'xyz'. vacuum_table takes: model."
    )


def _run_operations() -> list[str]:
    """The public macros that take arguments (``maintain_model``, a post-hook, takes none)."""
    names = []
    for path in sorted(MACROS.glob("*.sql")):
        if path.stem in INTERNAL:
            continue
        signature = re.search(rf"{{% macro {path.stem}\((.*?)\) %}}", path.read_text())
        assert signature is not None, path
        if signature.group(1).strip():
            names.append(path.stem)
    return names


@pytest.mark.parametrize("name", _run_operations())
def test_every_run_operation_refuses_what_it_does_not_take(name: str) -> None:
    text = (MACROS / f"{name}.sql").read_text()
    signature = re.search(rf"{{% macro {name}\((.*?)\) %}}\n(.*)\n", text)
    assert signature is not None
    takes = [a.split("=")[0].strip() for a in signature.group(1).split(",")]
    listed = ", ".join(f"'{a}'" for a in takes)
    # the first line of the body, with the signature's own arguments, in its order
    assert (
        signature.group(2) == f"  {{{{ refuse_unknown_arguments('{name}', kwargs, [{listed}]) }}}}"
    )
