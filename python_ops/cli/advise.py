"""``python -m python_ops advise``: the advisor on a compiled dbt project, from its files.

Reads ``target/manifest.json`` and the compiled SQL of every reader, locates the tables as
``maintain`` does (the profile target, ``--warehouse``), and prints per maintained model the
recommended clustering columns, the evidence and the files admitted per lookup now and after.
"""

from __future__ import annotations

import json
from typing import Any

from python_ops.advise.project import advise_project
from python_ops.advise.render import advice_dict, advice_text
from python_ops.cli.project import resolve_places
from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.selection.locations import warehouse_locator
from python_ops.maintenance.selection.selected_models import needs_resolution
from python_ops.maintenance.selection.selection_resolver import (
    ChildProcessResolver,
    SelectionRequest,
)
from python_ops.maintenance.selection.targets import load_manifest, node_config


def run_advise(args: Any) -> int:
    """Run ``advise`` for the parsed command line.

    Returns:
        0 (the advice printed).

    Raises:
        ConfigError: For a missing manifest, a bad profile or a selection that keeps no model.
    """
    places = resolve_places(args)
    manifest = load_manifest(places.project_dir)
    selected = None
    if needs_resolution(args.select, args.exclude, None, manifest.get("selectors")):
        request = SelectionRequest(
            str(places.project_dir),
            select=tuple(args.select or ()),
            exclude=tuple(args.exclude or ()),
        )
        selection = ChildProcessResolver().resolve(request)
        selected = set(selection.unique_ids or ())
        if selection.unique_ids is not None and not selected:
            raise ConfigError(
                setting="select", value=" ".join(args.select or []), fix="It keeps no model."
            )

    placed = warehouse_locator(places.warehouse, location_root=places.location_root)

    def locate(node: Any) -> str | None:
        return placed(
            str(node.get("schema")), str(node.get("alias") or node.get("name")), node_config(node)
        )

    def target_size(node: Any) -> int | None:
        return parse_config(str(node.get("name")), node_config(node)).target_file_size_bytes

    advice = advise_project(
        manifest,
        places.project_dir,
        locate=locate,
        selected=selected,
        measure_skipping=not args.no_measure,
        target_size=target_size,
    )
    if args.json:
        print(json.dumps([advice_dict(a) for a in advice]))
    else:
        print(advice_text(advice))
    return 0
