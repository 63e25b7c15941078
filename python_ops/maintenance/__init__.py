"""Maintenance policy and fleet: which op is due for which model, running it, and the record.

``config`` is the one declaration of the per-model settings (typed, validated once);
``registry`` declares each op once (its settings, when it is due, how it runs, what it counts);
``due`` decides from the table's log and the ``history``; ``session`` runs a command's
maintenance in one order (``runner`` runs many models within a time budget, ``run_options`` are
its validated arguments); ``targets`` turns a dbt manifest into models with locations and
configs; ``selected_models`` applies a dbt selection, which dbt resolves through the port in
``selection_resolver``; ``report`` renders what happened. After a build, ``build_writes`` reads
the build's own commits (what the post-hook decides from) and ``build_skip`` records a skip.

This package is also the one door of the dbt adapter into ``python_ops`` (with
``python_ops.errors``): every name the adapter uses is exported here (``tests/unit/test_layers.py``
checks that the adapter imports nothing else). The names are loaded on first use, so importing
the package costs no engine, no Arrow and no pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from python_ops.advise.project import advise_project
    from python_ops.advise.render import advice_dict, advice_text
    from python_ops.advise.sources import load_manifest
    from python_ops.delta.log.commits import commits_shared
    from python_ops.delta.state.snapshot import read_snapshot
    from python_ops.delta.state.version_checksum import VersionChecksum
    from python_ops.delta.table.properties import DEFAULT_DELETED_FILE_RETENTION_HOURS
    from python_ops.delta.table.recorded_retentions import policy_properties
    from python_ops.delta.writing.schema_edits import TableDocs, add_nullable_columns, set_comments
    from python_ops.delta_jars import LOCAL_CONF, require_delta_jars, session_conf
    from python_ops.delta_sql import DeltaSql, Rows, session_sql
    from python_ops.invocation import Invocation, Invocations
    from python_ops.maintenance.configuration.config import (
        KEYS,
        PREFIX,
        MaintenanceConfig,
        parse_config,
    )
    from python_ops.maintenance.configuration.dbt_profile import embedded_warehouse
    from python_ops.maintenance.configuration.engine_modes import (
        MODES_HELP,
        EngineMode,
        engine_mode,
    )
    from python_ops.maintenance.configuration.op_keys import as_model_setting
    from python_ops.maintenance.facts.build_start import (
        head_version,
        location_is_empty,
    )
    from python_ops.maintenance.facts.build_writes import BuildFacts, holds_first_commit
    from python_ops.maintenance.records.history import HistoryStore
    from python_ops.maintenance.rules.wording import files_text, size_text
    from python_ops.maintenance.running.report import render_report, report_rows
    from python_ops.maintenance.running.report_page import page_data, write_page
    from python_ops.maintenance.running.run_results import MaintenanceRun, OpOutcome
    from python_ops.maintenance.running.session import (
        MaintenanceSession,
        ModelMaintenance,
        OpsEnvironment,
        SessionEvents,
        may_maintain,
    )
    from python_ops.maintenance.runs.auto_columns import AdviceFor, ProjectAdvice
    from python_ops.maintenance.runs.run_options import RunOptions
    from python_ops.maintenance.selection.catalog_file import (
        JOURNAL_NAME,
        LOG_NAME,
        Catalog,
        read_catalog,
    )
    from python_ops.maintenance.selection.locations import (
        is_delta_table,
        managed_location,
        placed_location,
    )
    from python_ops.maintenance.selection.selected_models import ResolvedSelection
    from python_ops.maintenance.selection.selection_resolver import (
        SelectionRequest,
        SelectionResolver,
    )
    from python_ops.maintenance.selection.targets import (
        MAINTAINED,
        RESOURCE_TYPES,
        ModelTarget,
        builds_maintained_table,
        node_config,
        node_value,
        targets_from_nodes,
    )
    from python_ops.ops.health import DEFAULT_SMALL_FILE_THRESHOLD_BYTES, table_health
    from python_ops.ops.vacuum.rule.retention import checked_retention
    from python_ops.ops.vacuum_modes import VacuumEngine
    from python_ops.runtime import Shared
    from python_ops.spark_sessions import LazySession, SailEngine
    from python_ops.storage import is_remote, normalize_location, open_storage
    from python_ops.values import checked_number, retention_text

# name -> the module that defines it (the same names as the block above, for the type checker)
_EXPORTS: dict[str, str] = {
    "advise_project": "python_ops.advise.project",
    "advice_dict": "python_ops.advise.render",
    "advice_text": "python_ops.advise.render",
    "load_manifest": "python_ops.advise.sources",
    "AdviceFor": "python_ops.maintenance.runs.auto_columns",
    "ProjectAdvice": "python_ops.maintenance.runs.auto_columns",
    "BuildFacts": "python_ops.maintenance.facts.build_writes",
    "head_version": "python_ops.maintenance.facts.build_start",
    "holds_first_commit": "python_ops.maintenance.facts.build_writes",
    "location_is_empty": "python_ops.maintenance.facts.build_start",
    "commits_shared": "python_ops.delta.log.commits",
    "VersionChecksum": "python_ops.delta.state.version_checksum",
    "DEFAULT_DELETED_FILE_RETENTION_HOURS": "python_ops.delta.table.properties",
    "policy_properties": "python_ops.delta.table.recorded_retentions",
    "TableDocs": "python_ops.delta.writing.schema_edits",
    "add_nullable_columns": "python_ops.delta.writing.schema_edits",
    "set_comments": "python_ops.delta.writing.schema_edits",
    "read_snapshot": "python_ops.delta.state.snapshot",
    "LOCAL_CONF": "python_ops.delta_jars",
    "require_delta_jars": "python_ops.delta_jars",
    "session_conf": "python_ops.delta_jars",
    "Invocation": "python_ops.invocation",
    "Invocations": "python_ops.invocation",
    "Shared": "python_ops.runtime",
    "KEYS": "python_ops.maintenance.configuration.config",
    "PREFIX": "python_ops.maintenance.configuration.config",
    "MaintenanceConfig": "python_ops.maintenance.configuration.config",
    "parse_config": "python_ops.maintenance.configuration.config",
    "embedded_warehouse": "python_ops.maintenance.configuration.dbt_profile",
    "MODES_HELP": "python_ops.maintenance.configuration.engine_modes",
    "EngineMode": "python_ops.maintenance.configuration.engine_modes",
    "engine_mode": "python_ops.maintenance.configuration.engine_modes",
    "HistoryStore": "python_ops.maintenance.records.history",
    "as_model_setting": "python_ops.maintenance.configuration.op_keys",
    "JOURNAL_NAME": "python_ops.maintenance.selection.catalog_file",
    "LOG_NAME": "python_ops.maintenance.selection.catalog_file",
    "Catalog": "python_ops.maintenance.selection.catalog_file",
    "read_catalog": "python_ops.maintenance.selection.catalog_file",
    "is_delta_table": "python_ops.maintenance.selection.locations",
    "managed_location": "python_ops.maintenance.selection.locations",
    "placed_location": "python_ops.maintenance.selection.locations",
    "render_report": "python_ops.maintenance.running.report",
    "report_rows": "python_ops.maintenance.running.report",
    "page_data": "python_ops.maintenance.running.report_page",
    "write_page": "python_ops.maintenance.running.report_page",
    "RunOptions": "python_ops.maintenance.runs.run_options",
    "MaintenanceRun": "python_ops.maintenance.running.run_results",
    "OpOutcome": "python_ops.maintenance.running.run_results",
    "ResolvedSelection": "python_ops.maintenance.selection.selected_models",
    "SelectionRequest": "python_ops.maintenance.selection.selection_resolver",
    "SelectionResolver": "python_ops.maintenance.selection.selection_resolver",
    "MaintenanceSession": "python_ops.maintenance.running.session",
    "may_maintain": "python_ops.maintenance.running.session",
    "ModelMaintenance": "python_ops.maintenance.running.session",
    "OpsEnvironment": "python_ops.maintenance.running.session",
    "SessionEvents": "python_ops.maintenance.running.session",
    "MAINTAINED": "python_ops.maintenance.selection.targets",
    "builds_maintained_table": "python_ops.maintenance.selection.targets",
    "RESOURCE_TYPES": "python_ops.maintenance.selection.targets",
    "ModelTarget": "python_ops.maintenance.selection.targets",
    "node_config": "python_ops.maintenance.selection.targets",
    "node_value": "python_ops.maintenance.selection.targets",
    "targets_from_nodes": "python_ops.maintenance.selection.targets",
    "files_text": "python_ops.maintenance.rules.wording",
    "size_text": "python_ops.maintenance.rules.wording",
    "DEFAULT_SMALL_FILE_THRESHOLD_BYTES": "python_ops.ops.health",
    "table_health": "python_ops.ops.health",
    "checked_retention": "python_ops.ops.vacuum.rule.retention",
    "VacuumEngine": "python_ops.ops.vacuum_modes",
    "DeltaSql": "python_ops.delta_sql",
    "LazySession": "python_ops.spark_sessions",
    "Rows": "python_ops.delta_sql",
    "SailEngine": "python_ops.spark_sessions",
    "session_sql": "python_ops.delta_sql",
    "is_remote": "python_ops.storage",
    "normalize_location": "python_ops.storage",
    "open_storage": "python_ops.storage",
    "checked_number": "python_ops.values",
    "retention_text": "python_ops.values",
}

__all__ = [
    "DEFAULT_DELETED_FILE_RETENTION_HOURS",
    "DEFAULT_SMALL_FILE_THRESHOLD_BYTES",
    "JOURNAL_NAME",
    "KEYS",
    "LOCAL_CONF",
    "LOG_NAME",
    "MAINTAINED",
    "MODES_HELP",
    "PREFIX",
    "RESOURCE_TYPES",
    "AdviceFor",
    "BuildFacts",
    "Catalog",
    "DeltaSql",
    "EngineMode",
    "HistoryStore",
    "Invocation",
    "Invocations",
    "LazySession",
    "MaintenanceConfig",
    "MaintenanceRun",
    "MaintenanceSession",
    "ModelMaintenance",
    "ModelTarget",
    "OpOutcome",
    "OpsEnvironment",
    "ProjectAdvice",
    "ResolvedSelection",
    "Rows",
    "RunOptions",
    "SailEngine",
    "SelectionRequest",
    "SelectionResolver",
    "SessionEvents",
    "Shared",
    "TableDocs",
    "VacuumEngine",
    "VersionChecksum",
    "add_nullable_columns",
    "advice_dict",
    "advice_text",
    "advise_project",
    "as_model_setting",
    "builds_maintained_table",
    "checked_number",
    "checked_retention",
    "commits_shared",
    "embedded_warehouse",
    "engine_mode",
    "files_text",
    "head_version",
    "holds_first_commit",
    "is_delta_table",
    "is_remote",
    "load_manifest",
    "location_is_empty",
    "managed_location",
    "may_maintain",
    "node_config",
    "node_value",
    "normalize_location",
    "open_storage",
    "page_data",
    "parse_config",
    "placed_location",
    "policy_properties",
    "read_catalog",
    "read_snapshot",
    "render_report",
    "report_rows",
    "require_delta_jars",
    "retention_text",
    "session_conf",
    "session_sql",
    "set_comments",
    "size_text",
    "table_health",
    "targets_from_nodes",
    "write_page",
]


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
