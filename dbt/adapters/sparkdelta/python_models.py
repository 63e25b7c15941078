"""Python models on the session method: run ``def model(dbt, session)`` in this process.

dbt-spark only submits Python models to Databricks. Here the compiled model runs on the same
Spark session as the SQL models; the write code (macro ``sparkdelta__py_write_table``) saves the
DataFrame as Delta by path, and this helper then registers the table in the catalog.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.base.impl import PythonJobHelper
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkdelta.connections import SparkDeltaCredentials, engine_for
from python_ops.maintenance import placed_location


class SessionPythonJobHelper(PythonJobHelper):
    """Executes a compiled Python model with ``spark`` bound to the adapter's session."""

    def __init__(self, parsed_model: dict[str, Any], credentials: SparkDeltaCredentials) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def submit(self, compiled_code: str) -> Any:
        """Run a Python model's compiled code on the session; its table is written there."""
        schema, identifier = self.parsed_model["schema"], self.parsed_model["alias"]
        if self.credentials.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"Python model '{identifier}' runs on a Spark session in the dbt process: use "
                f"'method: session' (mode embedded or attach), not {self.credentials.method}."
            )
        engine = engine_for(self.credentials)
        namespace: dict[str, Any] = {"spark": engine.spark, "__name__": f"dbt_model_{identifier}"}
        # dbt's create_table_as dispatch indents the first line; the code itself starts there.
        code = compiled_code.lstrip()
        try:
            exec(compile(code, f"<python model {identifier}>", "exec"), namespace)
        except Exception as err:  # the model's own code may raise anything
            raise DbtRuntimeError(
                f"Python model '{identifier}' failed: {type(err).__name__}: {err}"
            ) from err
        root = self.parsed_model["config"].get("location_root")
        location = model_location(self.credentials, schema, identifier, location_root=root)
        if location is not None:
            engine.register_table(schema, identifier, location)
        return None


def model_location(
    credentials: SparkDeltaCredentials,
    schema: str,
    identifier: str,
    *,
    location_root: str | None = None,
) -> str | None:
    """Where a model's table lives.

    ``<location_root>/<alias>`` for a model's own ``location_root``; else
    ``<profile location_root>/<schema>/<alias>`` when the target sets one (tables on object
    storage, catalog journal in the local warehouse); else the managed location.

    Args:
        credentials: The target's credentials (for the warehouse).
        schema: The model's schema.
        identifier: The model's alias.
        location_root: The model's ``location_root`` config, if set.

    Returns:
        The location, or None when the cluster's metastore decides (attach without warehouse).
    """
    return placed_location(
        schema,
        identifier,
        model_root=location_root,
        profile_root=credentials.location_root,
        warehouse=credentials.resolved_warehouse(),
    )
