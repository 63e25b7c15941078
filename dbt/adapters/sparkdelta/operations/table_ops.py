"""One op on one model's table, from a macro: find the table, run the op, answer as a dict.

The ops are ``python_ops``' (``vacuum``, ``optimize``, ``cleanup_logs``, ``table_health``),
run by a ``MaintenanceSession`` with dbt's environment (``dbt_session``: the Spark session,
where Delta's SQL runs, the relation's name); this object translates: a relation to its table
before, refusals to dbt errors after.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.sparkdelta.bridge.dbt_connection import DbtConnection
from dbt.adapters.sparkdelta.bridge.dbt_session import dbt_session
from dbt.adapters.sparkdelta.bridge.history_catalog import HistoryCatalog
from dbt.adapters.sparkdelta.bridge.locator import NOT_BUILT, TableLocator
from dbt.adapters.sparkdelta.common import maintenance_events
from python_ops.errors import MaintenanceError
from python_ops.maintenance import (
    DEFAULT_SMALL_FILE_THRESHOLD_BYTES,
    Invocations,
    is_delta_table,
    is_remote,
    policy_properties,
    table_health,
)


class TableOps:
    """Runs ops on one relation's table.

    Args:
        connection: The adapter's connection, as the bridge uses it.
        locator: Where tables are.
        history: The history catalog (a one-table op records nothing in it).
        invocations: The current dbt invocation's memory.
    """

    def __init__(
        self,
        connection: DbtConnection,
        locator: TableLocator,
        history: HistoryCatalog,
        invocations: Invocations,
    ) -> None:
        self._invocations = invocations
        self._connection = connection
        self._locator = locator
        self._history = history

    def health(
        self, relation: BaseRelation, small_file_threshold_bytes: int | None = None
    ) -> dict[str, Any]:
        """``TableHealth`` of the relation's table as a dict, plus ``relation``.

        A relation with no table answers what it is instead of raising, so that a report of
        many models can say it: ``{relation, missing: reason}`` when the catalog knows (or
        knew) the table and its files are gone (``TableLocator.missing_table``),
        ``{relation, not_built: reason}`` when the catalog has no such table.

        Raises:
            DbtRuntimeError: When the relation's location has no Delta table (and is not
                missing), or its log cannot be read.
        """
        threshold = int(small_file_threshold_bytes or DEFAULT_SMALL_FILE_THRESHOLD_BYTES)
        location = self._locator.table_location(relation)
        if location is None or (not is_remote(location) and not is_delta_table(location)):
            schema, name = str(relation.schema or ""), str(relation.identifier or "")
            missing = self._locator.missing_table(schema, name, location)
            if missing is not None:
                return {"relation": str(relation), "missing": missing[1]}
            if location is None:
                return {"relation": str(relation), "not_built": NOT_BUILT}
        return self._run(
            relation,
            "table_health",
            lambda found: table_health(found, small_file_threshold_bytes=threshold),
            location=location,
        )

    def cleanup_logs(self, relation: BaseRelation, options: Mapping[str, Any]) -> dict[str, Any]:
        """Log cleanup, recording the retentions it was given as the table's Delta properties.

        ``deleted_file_retention_hours`` and ``retention_days`` are recorded as the table's
        ``delta.deletedFileRetentionDuration`` / ``delta.logRetentionDuration`` first (real
        runs only), so every engine that touches the table follows the same policy; a VACUUM
        retention below Delta's 168 h default only with ``record_short_retention``.

        Raises:
            DbtRuntimeError: With the op's message when it refuses or fails.
        """
        policy = policy_properties(
            log_retention_days=options.get("retention_days"),
            deleted_file_retention_hours=options.get("deleted_file_retention_hours"),
            record_short_retention=bool(options.get("record_short_retention", False)),
        )
        ours = ("deleted_file_retention_hours", "record_short_retention")
        chosen = {k: v for k, v in options.items() if k not in ours}
        return self.invoke("cleanup_logs", relation, {**chosen, "record_policy": policy})

    def invoke(self, op: str, relation: BaseRelation, options: Mapping[str, Any]) -> dict[str, Any]:
        """Run one registered op on a model's table with the caller's keyword options.

        Args:
            op: The op's registry name (``vacuum``, ``optimize``, ``cleanup_logs``).
            relation: The model's relation.
            options: The op's keyword arguments.

        Returns:
            The op's result as a dict, plus ``relation``.

        Raises:
            DbtRuntimeError: With the op's message when it refuses or fails, or for an option
                the op does not take.
        """

        def call(location: str) -> Any:
            session = dbt_session(
                self._invocations.get(get_invocation_id()),
                self._connection,
                self._history,
                None,  # a one-table op is not recorded in the history
                names={location: str(relation)},
            )
            return session.run_table_op(op, location, name=relation.identifier, options=options)

        return self._run(relation, op, call)

    def _run(
        self,
        relation: BaseRelation,
        op: str,
        call: Callable[[str], Any],
        location: str | None = None,
    ) -> dict[str, Any]:
        location = location or self._locator.table_location(relation)
        if location is None:
            raise DbtRuntimeError(
                f"{op}: {relation} has no table location; build the model first "
                "(views have no Delta table)."
            )
        try:
            with maintenance_events.python_ops_logs_to_dbt():
                result = call(location)
        except MaintenanceError as err:
            raise DbtRuntimeError(f"{op} of {relation}: {err}") from err
        return {"relation": str(relation), **result.to_dict()}
