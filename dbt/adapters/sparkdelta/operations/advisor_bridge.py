"""The maintenance advisor inside dbt: the project's compiled files, tables where dbt put them.

The advisor (``python_ops.advise``) reads ``target/manifest.json`` and the compiled SQL dbt
wrote (``dbt compile``, ``run``, ``build``), never dbt's objects; here it gets the project's
paths and a locator backed by dbt's catalog. ``maintenance_advise`` prints its advice;
``advice_for`` gives the runner the columns of models with ``auto`` clustering.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.bridge.locator import TableLocator
from python_ops.errors import MaintenanceError
from python_ops.maintenance import (
    AdviceFor,
    ProjectAdvice,
    advice_dict,
    advice_text,
    advise_project,
    load_manifest,
    node_config,
    parse_config,
)


class ProjectAdvisor:
    """The advisor over the project dbt runs.

    Args:
        adapter: The dbt adapter (its project root and target path).
        locator: Where models' tables are.
    """

    def __init__(self, adapter: SparkAdapter, locator: TableLocator) -> None:
        self._adapter = adapter
        self._locator = locator

    def _paths(self) -> tuple[str, str]:
        """The project root and dbt's target path relative to it (as the CLI's ``target``)."""
        config = self._adapter.config
        root = str(config.project_root)
        target = os.path.join(root, str(getattr(config, "target_path", "target")))
        return root, os.path.relpath(target, root)

    def _manifest(self) -> dict[str, Any]:
        return load_manifest(*self._paths())

    def locate(self, node: Mapping[str, Any]) -> str | None:
        """A manifest node's table, where dbt's catalog (or its location_root) says."""
        targets, _ = self._locator.locate([dict(node)])
        return targets[0].location if targets else None

    def advice_for(self) -> AdviceFor:
        """The runner's advisor: read once, on the first model with ``auto`` columns."""
        state: dict[str, ProjectAdvice | None] = {}

        def advise(target: Any) -> Any:
            if "advice" not in state:
                try:
                    root, target_path = self._paths()
                    state["advice"] = ProjectAdvice(
                        self._manifest(), root, self.locate, target_path
                    )
                except MaintenanceError:
                    state["advice"] = None
                    raise
            found = state["advice"]
            return found(target) if found is not None else None

        return advise

    def advise(self, unique_ids: list[str] | None, *, as_json: bool) -> str:
        """The advice for the selected models, as text or JSON.

        Raises:
            DbtRuntimeError: For a missing manifest or an unreadable table.
        """

        def target_size(node: Mapping[str, Any]) -> int | None:
            return parse_config(str(node.get("name")), node_config(node)).target_file_size_bytes

        try:
            advice = advise_project(
                self._manifest(),
                self._paths()[0],
                locate=self.locate,
                selected=None if unique_ids is None else set(unique_ids),
                target_size=target_size,
                target_path=self._paths()[1],
            )
        except MaintenanceError as err:
            raise DbtRuntimeError(str(err)) from err
        if as_json:
            return json.dumps([advice_dict(a) for a in advice])
        return advice_text(advice)
