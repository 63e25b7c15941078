"""Model selection for maintenance: dbt's selection, resolved by dbt, applied here.

This package never imports dbt, so it does not parse dbt's selection grammar either (a subset
that silently selects nothing for the rest is worse than none). The selection is resolved by
dbt's own selector (``dbt.adapters.sparkdelta.selection``): inside dbt on the manifest of the
invocation, outside dbt (``python -m python_ops maintain``) in a child Python process
(``python -m dbt.adapters.sparkdelta.selection_cli``) on ``target/manifest.json``. What comes back
is a set of unique ids and the warnings (criteria that reach no table); ``keep_selected``
applies the ids to the targets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from python_ops.errors import ConfigError
from python_ops.maintenance.targets import ModelTarget

RESOLVER = "dbt.adapters.sparkdelta.selection_cli"


@dataclass(frozen=True)
class ResolvedSelection:
    """A selection dbt resolved.

    Attributes:
        unique_ids: The selected model unique ids; None means every model (nothing given).
        warnings: What the selection does not reach, one sentence each.
        selector: The ``selectors.yml`` selector used, if any.
    """

    unique_ids: frozenset[str] | None
    warnings: tuple[str, ...] = ()
    selector: str | None = None


def keep_selected(
    targets: Sequence[ModelTarget], unique_ids: Collection[str] | None
) -> list[ModelTarget]:
    """The targets whose unique id is selected (all of them when ``unique_ids`` is None)."""
    if unique_ids is None:
        return list(targets)
    chosen = set(unique_ids)
    return [t for t in targets if t.unique_id in chosen]


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
        raise ConfigError(
            setting="select", value=answer["error"], fix="Use a selection dbt ls accepts."
        )
    ids = answer.get("unique_ids")
    return ResolvedSelection(
        unique_ids=None if ids is None else frozenset(ids),
        warnings=tuple(answer.get("warnings") or ()),
        selector=answer.get("selector"),
    )


def needs_resolution(
    select: Sequence[str] | None,
    exclude: Sequence[str] | None,
    selector: str | None,
    manifest_selectors: dict[str, dict[str, object]] | None = None,
) -> bool:
    """Whether there is a selection to resolve (given, or a ``default: true`` selector)."""
    defaults = any(s.get("default") is True for s in (manifest_selectors or {}).values())
    return bool(select or exclude or selector or defaults)


def resolve_with_dbt(
    project_dir: str,
    *,
    select: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    selector: str | None = None,
    state: str | None = None,
    timeout_s: float = 300,
) -> ResolvedSelection:
    """Resolve a selection with dbt's selector on ``<project_dir>/target/manifest.json``.

    Runs ``python -m dbt.adapters.sparkdelta.selection_cli`` with this interpreter.

    Raises:
        ConfigError: When dbt rejects the selection or is not installed.
    """
    command = [sys.executable, "-m", RESOLVER, "--project-dir", project_dir]
    if select:
        command += ["--select", *select]
    if exclude:
        command += ["--exclude", *exclude]
    if selector:
        command += ["--selector", selector]
    if state:
        command += ["--state", state]
    done = subprocess.run(  # this interpreter, a fixed module, arguments as a list
        command, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    return parse_resolution(done.stdout + ("" if done.stdout.strip() else done.stderr))
