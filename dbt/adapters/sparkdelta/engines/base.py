"""What every engine is: a Spark session plus what the adapter needs around it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from python_ops.maintenance import normalize_location


def location_from_information(information: str | None) -> str | None:
    """The normalised ``Location:`` of a ``SHOW TABLE EXTENDED`` information block, if any."""
    for line in (information or "").splitlines():
        if line.startswith("Location:"):
            return normalize_location(line.split(":", 1)[1].strip())
    return None


class Engine(ABC):
    """A Spark session plus what the adapter needs around it."""

    mode: str
    warehouse: str | None = None

    @property
    @abstractmethod
    def spark(self) -> Any:
        """The ``pyspark.sql.SparkSession`` every dbt thread shares."""

    @property
    def ops_spark(self) -> Any:
        """The session the ops use (the embedded engine's starts only when an op uses it)."""
        return self.spark

    def sql(self, statement: str) -> Any:
        """Run one SQL statement and return its DataFrame."""
        return self.spark.sql(statement)

    def register_table(self, schema: str, name: str, location: str) -> None:
        """Make a Delta table written by path (e.g. by a Python model) known to the catalog.

        Args:
            schema: The table's schema.
            name: The table's name.
            location: Where its Delta log lives.
        """
        self.sql(f"create schema if not exists `{schema}`")
        self.sql(
            f"create table if not exists `{schema}`.`{name}` using delta location '{location}'"
        )

    @abstractmethod
    def stop(self) -> None:
        """Release the session (and the server, for the embedded engine)."""
