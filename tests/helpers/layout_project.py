"""A dbt project of ``table`` models that ask for a Z-order layout, and how to measure it.

``events`` asks for ``maintenance_zorder_by: [user_id]``, ``picked`` for ``auto`` (read by the
view ``picked_by_user``, which filters on ``user_id``); on an engine with Delta, ``liquid`` and
``liquid_auto`` ask the same of liquid clustering (``maintenance_cluster_by``). All are built
from ``range`` over 8 partitions: each build writes 8 files that span every ``user_id``, so an
unclustered table admits all its files per lookup. The optimize interval is the default (24 h
with Z-order).

``files_per_lookup`` measures a column from the live files' own ``add.stats`` (every distinct
value of the column looked up against each file's min/max), independent of the advisor's
sampling; ``rows_and_checksum`` reads the rows with delta-rs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deltalake import DeltaTable

from python_ops.delta.state.snapshot import read_snapshot

ROWS = 40_000
USERS = 500

PROJECT = """
name: layout
version: "1.0"
config-version: 2
profile: layout
models:
  layout:
    +file_format: delta
    +post-hook: "{{ maintain_model() }}"
    +maintenance_on_error: fail
    +maintenance_target_file_size: 96KB
"""

PROFILES = """
layout:
  target: {target}
  outputs:
    embedded:
      type: sparkdelta
      method: session
      mode: embedded
      schema: lay
      warehouse: "{warehouse}"
      threads: 1
    attach:
      type: sparkdelta
      method: session
      mode: attach
      connect_url: "{connect_url}"
      schema: lay
      location_root: "{warehouse}"
      threads: 1
"""

TABLE = """
{{{{ config(materialized='table', {layout}) }}}}
select
  cast(id as bigint) as event_id,
  cast(pmod(id * 7919, {users}) as bigint) as user_id,
  cast(pmod(id * 13, 1000) as double) / 10 as amount
from range(0, {rows}, 1, 8) generated
"""

READER = (
    "{{{{ config(materialized='view') }}}}\n"
    "select event_id, amount from {{{{ ref('{model}') }}}} where user_id = 42\n"
)

#: model name to its layout config: Z-order on both engines, liquid clustering (Delta's own
#: ``CLUSTER BY``) only where the engine has Delta
ZORDERED = {"events": "maintenance_zorder_by=['user_id']", "picked": "maintenance_zorder_by='auto'"}
LIQUID = {
    "liquid": "maintenance_cluster_by=['user_id']",
    "liquid_auto": "maintenance_cluster_by='auto'",
}
AUTO = ("picked", "liquid_auto")


def write_project(
    root: Path,
    warehouse: Path,
    *,
    target: str = "embedded",
    connect_url: str = "",
    liquid: bool = False,
) -> Path:
    """Write the project at ``root`` (its tables under ``warehouse``); returns ``root``.

    ``liquid``: also the liquid-clustered models (``LIQUID``; an engine with Delta only).
    """
    models = root / "models"
    models.mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(PROJECT)
    profiles = PROFILES.format(target=target, warehouse=warehouse, connect_url=connect_url)
    (root / "profiles.yml").write_text(profiles)
    layouts = {**ZORDERED, **(LIQUID if liquid else {})}
    for model, layout in layouts.items():
        (models / f"{model}.sql").write_text(TABLE.format(layout=layout, users=USERS, rows=ROWS))
        if model in AUTO:
            (models / f"{model}_by_user.sql").write_text(READER.format(model=model))
    return root


def files_per_lookup(location: str, column: str) -> tuple[int, float]:
    """The live files, and the mean files whose stats admit a value of ``column`` (all values).

    A file without min/max for the column admits every value.
    """
    bounds: list[tuple[Any, Any] | None] = []
    for add in read_snapshot(location, with_stats=True).files:
        stats = json.loads(add.stats) if add.stats else {}
        low = (stats.get("minValues") or {}).get(column)
        high = (stats.get("maxValues") or {}).get(column)
        bounds.append(None if low is None or high is None else (low, high))
    table = DeltaTable(location)
    values = sorted(set(table.to_pyarrow_table(columns=[column]).column(column).to_pylist()))
    admitted = sum(sum(1 for b in bounds if b is None or b[0] <= v <= b[1]) for v in values)
    return len(bounds), round(admitted / len(values), 2)


def rows_and_checksum(location: str, version: int | None = None) -> tuple[int, int, float]:
    """Rows, the sum of ``event_id`` and of ``amount``, read by delta-rs at ``version``."""
    table = DeltaTable(location, version=version)
    rows = table.to_pyarrow_table(columns=["event_id", "amount"])
    ids = rows.column("event_id").to_pylist()
    return rows.num_rows, sum(ids), round(sum(rows.column("amount").to_pylist()), 6)
