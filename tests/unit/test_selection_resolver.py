"""The selection port: what python_ops asks dbt's selector, and how the child process is run.

The answers of both implementations (the child process and the adapter's in-process
``ManifestResolver``) on a built project: ``tests/e2e/test_selection_dbt.py``; the port's being
python_ops' only edge to the adapter: ``tests/unit/test_layers.py``.
"""

from __future__ import annotations

import sys

from python_ops.maintenance.selection.selected_models import ResolvedSelection
from python_ops.maintenance.selection.selection_resolver import (
    RESOLVER,
    ChildProcessResolver,
    SelectionRequest,
    SelectionResolver,
    resolver_command,
)


class Answers:
    """A resolver of this test's own (e.g. a scheduler that keeps its selections elsewhere)."""

    def resolve(self, request: SelectionRequest) -> ResolvedSelection:
        return ResolvedSelection(frozenset({f"model.p.{s}" for s in request.select}))


def test_the_child_process_resolver_and_any_other_fill_the_port() -> None:
    assert isinstance(ChildProcessResolver(), SelectionResolver)
    assert isinstance(Answers(), SelectionResolver)
    assert not isinstance(object(), SelectionResolver)
    answer = Answers().resolve(SelectionRequest("/p", select=("a",)))
    assert answer.unique_ids == frozenset({"model.p.a"})


def test_the_child_process_runs_this_interpreter_on_the_adapter_s_module() -> None:
    request = SelectionRequest(
        "/p", select=("+fct", "tag:x"), exclude=("a",), selector="nightly", state="/old"
    )
    assert resolver_command(request) == [
        sys.executable,
        "-m",
        RESOLVER,
        "--project-dir",
        "/p",
        "--select",
        "+fct",
        "tag:x",
        "--exclude",
        "a",
        "--selector",
        "nightly",
        "--state",
        "/old",
    ]
    # nothing given, nothing passed: dbt's default selector decides
    assert resolver_command(SelectionRequest("/p")) == [
        sys.executable,
        "-m",
        RESOLVER,
        "--project-dir",
        "/p",
    ]
