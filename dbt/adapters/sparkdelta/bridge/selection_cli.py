"""Model selection outside dbt: ``python -m dbt.adapters.sparkdelta.bridge.selection_cli``.

``python -m python_ops maintain`` never imports dbt; for ``--select``/``--exclude``/
``--selector``/``--state`` it resolves the selection through the port
``python_ops.maintenance.SelectionResolver``, whose child-process implementation runs this
module. ``ManifestResolver`` is the same port in this process: dbt's own machinery
(``dbt_selector.select_models``) on ``target/manifest.json``; ``main`` prints its answer as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from argparse import Namespace
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.bridge.dbt_selector import Selection, select_models
from python_ops.errors import SelectionError
from python_ops.maintenance import ResolvedSelection, SelectionRequest


def _ensure_flags() -> None:
    """Set dbt's global flags to defaults outside a dbt invocation (selector methods read them)."""
    from dbt.flags import get_flags, set_from_args

    if not hasattr(get_flags(), "WARN_ERROR"):  # type: ignore[no-untyped-call]
        set_from_args(Namespace(), None)


def select_from_artifacts(
    project_dir: str,
    *,
    select: Any = None,
    exclude: Any = None,
    selector: str | None = None,
    state: str | None = None,
) -> Selection:
    """Resolve a selection against ``<project_dir>/target/manifest.json`` (the CLI's case).

    The selectors are the manifest's (dbt writes the rendered ``selectors.yml`` into it).

    Raises:
        DbtRuntimeError: For a missing or unreadable manifest, or as ``select_models``.
    """
    from dbt.artifacts.schemas.manifest import WritableManifest
    from dbt.config.selectors import SelectorConfig
    from dbt.contracts.graph.manifest import Manifest
    from dbt.contracts.state import PreviousState

    _ensure_flags()
    project = Path(project_dir).resolve()
    path = project / "target" / "manifest.json"
    if not path.is_file():
        raise DbtRuntimeError(f"{path} does not exist: run 'dbt parse' in the project first")
    manifest = Manifest.from_writable_manifest(WritableManifest.read_and_check_versions(str(path)))
    raw = list(getattr(manifest, "selectors", {}).values())
    selectors = SelectorConfig.selectors_from_dict({"selectors": raw}) if raw else {}
    previous = None
    if state:
        previous = PreviousState(
            state_path=Path(state), target_path=project / "target", project_root=project
        )
    return select_models(
        manifest,
        select=select,
        exclude=exclude,
        selector=selector,
        selectors=selectors,
        previous_state=previous,
    )


class ManifestResolver:
    """``SelectionResolver`` in this process, on the project's ``target/manifest.json``."""

    def resolve(self, request: SelectionRequest) -> ResolvedSelection:
        """Resolve ``request`` with dbt's selector.

        Raises:
            ConfigError: When dbt rejects the selection or the manifest cannot be read.
        """
        try:
            selection = select_from_artifacts(
                request.project_dir,
                select=list(request.select) or None,
                exclude=list(request.exclude) or None,
                selector=request.selector,
                state=request.state,
            )
        except Exception as err:  # dbt's errors, as the child process reports them
            raise SelectionError(str(getattr(err, "msg", err)).strip()) from err
        return ResolvedSelection(selection.unique_ids, selection.warnings, selection.selector)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dbt.adapters.sparkdelta.bridge.selection_cli``: a selection as JSON on stdout.

    Prints ``{"unique_ids": [...] | null, "warnings": [...], "selector": ...}``, or
    ``{"error": "..."}`` with exit code 2 when dbt rejects the selection.
    """
    parser = argparse.ArgumentParser(prog="python -m dbt.adapters.sparkdelta.bridge.selection_cli")
    parser.add_argument("--project-dir", default=".")
    parser.add_argument("--select", nargs="*")
    parser.add_argument("--exclude", nargs="*")
    parser.add_argument("--selector")
    parser.add_argument("--state")
    args = parser.parse_args(argv)
    try:
        selection = select_from_artifacts(
            args.project_dir,
            select=args.select,
            exclude=args.exclude,
            selector=args.selector,
            state=args.state,
        )
    except Exception as err:  # every failure goes back to the caller as JSON
        print(json.dumps({"error": str(getattr(err, "msg", err)).strip()}))
        return 2
    print(json.dumps(selection.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
