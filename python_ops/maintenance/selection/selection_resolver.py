"""The port through which dbt resolves a model selection for code that never imports dbt.

``python -m python_ops maintain --select ...`` needs dbt's own selector, which lives in the
adapter (``dbt.adapters.sparkdelta.bridge.dbt_selector``). This package reaches it through one small
interface, ``SelectionResolver``: a ``SelectionRequest`` in, a ``ResolvedSelection`` out.

``ChildProcessResolver`` is the implementation the CLI uses: it runs the adapter's
``python -m dbt.adapters.sparkdelta.bridge.selection_cli`` with this interpreter on the project's
``target/manifest.json`` and reads its JSON answer. It is the only edge from ``python_ops`` to
the adapter, and ``tests/unit/test_layers.py`` checks that it stays the only one. Inside dbt
the adapter resolves on the invocation's own manifest (no child process).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from python_ops.errors import ConfigError, SelectionError
from python_ops.maintenance.selection.selected_models import ResolvedSelection

RESOLVER = "dbt.adapters.sparkdelta.bridge.selection_cli"


@dataclass(frozen=True)
class SelectionRequest:
    """A dbt selection to resolve on a project's manifest, as ``dbt ls`` takes it.

    Attributes:
        project_dir: The dbt project (its ``target/manifest.json`` is read).
        select: ``--select`` criteria.
        exclude: ``--exclude`` criteria.
        selector: A ``selectors.yml`` selector's name.
        state: ``--state``: the directory of the artifacts to compare with.
    """

    project_dir: str
    select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    selector: str | None = None
    state: str | None = None


@runtime_checkable
class SelectionResolver(Protocol):
    """Resolves a selection with dbt's own selector."""

    def resolve(self, request: SelectionRequest) -> ResolvedSelection:
        """The selected models' unique ids and the warnings.

        Raises:
            ConfigError: When dbt rejects the selection, or cannot be reached.
        """


def parse_resolution(output: str) -> ResolvedSelection:
    """The resolver's JSON answer (its last stdout line) as a selection.

    Raises:
        ConfigError: When dbt rejected the selection, or the answer is not the resolver's.
    """
    lines = [line for line in output.splitlines() if line.strip()]
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ConfigError(
            setting="select",
            value=output.strip()[-300:],
            fix=f"{RESOLVER} gave no answer: is the sparkdelta adapter (dbt) installed in this "
            "Python environment?",
        )
    if "error" in answer:
        raise SelectionError(str(answer["error"]))
    ids = answer.get("unique_ids")
    return ResolvedSelection(
        unique_ids=None if ids is None else frozenset(ids),
        warnings=tuple(answer.get("warnings") or ()),
        selector=answer.get("selector"),
    )


def resolver_command(request: SelectionRequest, module: str = RESOLVER) -> list[str]:
    """The child process's command line: this interpreter, a fixed module, arguments as a list."""
    command = [sys.executable, "-m", module, "--project-dir", request.project_dir]
    if request.select:
        command += ["--select", *request.select]
    if request.exclude:
        command += ["--exclude", *request.exclude]
    if request.selector:
        command += ["--selector", request.selector]
    if request.state:
        command += ["--state", request.state]
    return command


@dataclass(frozen=True)
class ChildProcessResolver:
    """``SelectionResolver`` by a child Python process running the adapter's resolver.

    Attributes:
        timeout_s: How long dbt may take to read the manifest and select.
    """

    timeout_s: float = 300

    def resolve(self, request: SelectionRequest) -> ResolvedSelection:
        """Run ``python -m dbt.adapters.sparkdelta.bridge.selection_cli`` and read its answer.

        Raises:
            ConfigError: When dbt rejects the selection or is not installed.
        """
        done = subprocess.run(  # this interpreter, a fixed module, arguments as a list
            resolver_command(request),
            capture_output=True,
            text=True,
            timeout=self.timeout_s,
            check=False,
        )
        return parse_resolution(done.stdout + ("" if done.stdout.strip() else done.stderr))
