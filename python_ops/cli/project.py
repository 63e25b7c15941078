"""Where the command line finds a dbt project's tables: the profile, the manifest, the flags.

``maintain`` and the path commands with ``--model`` read the project as dbt does: the models and
their config from ``target/manifest.json``, the warehouse and ``location_root`` from the
profile target (``python_ops.maintenance.configuration.dbt_profile``). ``--warehouse``
overrides the profile; without a ``profiles.yml`` anywhere dbt looks, ``$SPARKDELTA_WAREHOUSE``,
else ``<project-dir>/warehouse``.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Any

from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.config import MaintenanceConfig, parse_config
from python_ops.maintenance.configuration.dbt_profile import DEFAULT_WAREHOUSE, read_profile_target
from python_ops.maintenance.selection.locations import (
    default_history_location,
    journal_tables,
    placed_location,
)
from python_ops.maintenance.selection.selected_models import keep_selected, needs_resolution
from python_ops.maintenance.selection.selection_resolver import (
    ChildProcessResolver,
    SelectionRequest,
    SelectionResolver,
)
from python_ops.maintenance.selection.targets import (
    MAINTAINED,
    ModelTarget,
    load_manifest,
    manifest_models,
    node_config,
)


def add_project_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that say which dbt project, profile and target (``maintain``, ``--model``).

    Args:
        parser: A sub-command's parser.
    """
    parser.add_argument(
        "--project-dir",
        default=None,
        help="dbt project (reads dbt_project.yml, its profile and target/manifest.json; "
        "default as dbt: $DBT_PROJECT_DIR, else the current directory)",
    )
    parser.add_argument(
        "--profiles-dir",
        default=None,
        help="directory of profiles.yml (default as dbt: $DBT_PROFILES_DIR, the current "
        "directory, then the project directory and ~/.dbt)",
    )
    parser.add_argument("--profile", default=None, help="profile (default: dbt_project.yml's)")
    parser.add_argument(
        "--target", default=None, help="profile target (default: $DBT_TARGET, else the profile's)"
    )
    parser.add_argument(
        "--warehouse",
        default=None,
        help="embedded warehouse directory, overriding the profile's 'warehouse'",
    )


@dataclass(frozen=True)
class Places:
    """Where a project's tables are and how that was decided.

    Attributes:
        project_dir: The project directory, absolute.
        warehouse: The embedded warehouse (catalog journal, managed tables), or None.
        location_root: The profile target's ``location_root``, or None.
        source: Where the two came from, for messages.
    """

    project_dir: str
    warehouse: str | None
    location_root: str | None
    source: str

    def describe(self) -> str:
        """The places in words: ``tables under <x> (<source>)``."""
        where = self.location_root or self.warehouse
        return f"tables under {where} ({self.source})"


def resolve_places(args: Any) -> Places:
    """Where the tables are, from ``--warehouse``, else the profile, else the fallbacks.

    Args:
        args: Parsed arguments with the flags of ``add_project_arguments``.

    Returns:
        The places.

    Raises:
        ConfigError: For a bad profile, or a target whose tables a metastore places.
    """
    project_dir = os.path.abspath(args.project_dir or os.environ.get("DBT_PROJECT_DIR") or ".")
    if args.warehouse:
        return Places(project_dir, os.path.abspath(args.warehouse), None, "--warehouse")
    target = read_profile_target(
        project_dir,
        profiles_dir=args.profiles_dir,
        profile=args.profile,
        target=args.target,
    )
    if target is not None:
        if target.warehouse is None and target.location_root is None:
            raise ConfigError(
                setting="location_root",
                value=None,
                fix=f"{target.describe()} (method {target.method}, mode {target.mode}) has no "
                "'warehouse' or 'location_root': the cluster's metastore places its tables, "
                "which cannot be asked outside dbt. Set location_root in the profile, pass "
                "--warehouse, or use dbt run-operation maintain_all.",
            )
        return Places(project_dir, target.warehouse, target.location_root, target.describe())
    env = os.environ.get("SPARKDELTA_WAREHOUSE")
    if env:
        return Places(
            project_dir, os.path.abspath(env), None, "$SPARKDELTA_WAREHOUSE; no profiles.yml found"
        )
    return Places(
        project_dir,
        os.path.join(project_dir, DEFAULT_WAREHOUSE),
        None,
        "no profiles.yml found: the default warehouse",
    )


def maintained_models(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The enabled table and incremental models: the ones that have a Delta table to maintain."""
    return [
        m
        for m in models
        if node_config(m).get("materialized") in MAINTAINED
        and node_config(m).get("enabled") is not False
    ]


def node_location(node: dict[str, Any], places: Places) -> str:
    """Where ``places`` put a model's table (built or not)."""
    location = placed_location(
        str(node.get("schema")),
        str(node.get("alias") or node.get("name")),
        model_root=node_config(node).get("location_root"),
        profile_root=places.location_root,
        warehouse=places.warehouse,
        journal=journal_tables(places.warehouse) if places.warehouse else None,
    )
    if location is None:  # the target has neither a warehouse nor a location_root
        raise ConfigError(
            setting="location_root",
            value=None,
            fix=f"{places.source} places no tables: set location_root in the profile.",
        )
    return location


@dataclass(frozen=True)
class ModelPolicy:
    """A model's maintenance config and table, for the path commands' ``--model``.

    Attributes:
        config: The model's maintenance config, as dbt resolved it.
        location: Where its table is.
        places: How the location was found.
        history_location: The project's maintenance history table (where ``maintain`` and
            the run-operations record their runs).
    """

    config: MaintenanceConfig
    location: str
    places: Places
    history_location: str


def model_policy(args: Any) -> ModelPolicy:
    """The ``--model`` of a path command: its config from the manifest and its table.

    Args:
        args: Parsed arguments with ``model`` and the flags of ``add_project_arguments``.

    Returns:
        The model's policy.

    Raises:
        ConfigError: For a model the manifest does not have, or that has no Delta table.
    """
    places = resolve_places(args)
    models = manifest_models(load_manifest(places.project_dir))
    found = [m for m in models if m.get("name") == args.model]
    if not found:
        names = sorted(str(m.get("name")) for m in maintained_models(models))
        raise ConfigError(
            setting="model",
            value=args.model,
            fix=f"The manifest of {places.project_dir} has no model of that name (table models: "
            f"{', '.join(names) or 'none'}). Run 'dbt parse' after adding a model.",
        )
    node = found[0]
    if node not in maintained_models(models):
        raise ConfigError(
            setting="model",
            value=args.model,
            fix=f"It is materialized as {node_config(node).get('materialized')!r} (or disabled): "
            "only table and incremental models have a Delta table to maintain.",
        )
    config = parse_config(args.model, node_config(node))
    history = default_history_location(places.warehouse, models, location_root=places.location_root)
    return ModelPolicy(config, node_location(node, places), places, history)


def selected_targets(
    args: Any,
    project_dir: str,
    manifest: dict[str, Any],
    targets: list[ModelTarget],
    resolver: SelectionResolver | None,
    *,
    command: str,
) -> list[ModelTarget]:
    """The targets the command line's selection keeps (all when it selects by nothing).

    Args:
        args: The sub-command's arguments (``select``, ``exclude``, ``selector``, ``state``).
        project_dir: The dbt project directory, resolved.
        manifest: The project's manifest.
        targets: The built table models.
        resolver: Resolves the selection with dbt (default: the adapter's, in a child process).
        command: The sub-command, naming its warnings (``maintain``, ``report``).

    Raises:
        ConfigError: When the selection keeps none of the built table models.
    """
    selector, state = getattr(args, "selector", None), getattr(args, "state", None)
    if not needs_resolution(args.select, args.exclude, selector, manifest.get("selectors")):
        return list(targets)
    request = SelectionRequest(
        project_dir,
        select=tuple(args.select or ()),
        exclude=tuple(args.exclude or ()),
        selector=selector,
        state=state,
    )
    selection = (resolver or ChildProcessResolver()).resolve(request)
    for warning in selection.warnings:
        print(f"{command}: warning: {warning}", file=sys.stderr)
    chosen = keep_selected(targets, selection.unique_ids)
    if not chosen:
        raise ConfigError(
            setting="select",
            value=" ".join(args.select or []) or selector,
            fix=f"The selection keeps none of the {len(targets)} built table models "
            f"({', '.join(t.name for t in targets)}); nothing was run. Check it with "
            "'dbt ls --resource-type model --select ...'.",
        )
    return chosen
