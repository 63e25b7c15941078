"""A generated dbt project of many tiny models (the fleet bench and the call-count test).

``write_fleet_project(root, tables=N, incremental=K)``: N table models ``t_0000``... and K
incremental merge models ``inc_00``..., each a few rows, with the maintenance post-hook on every
model (as the example project has it), on the embedded engine (profile ``fleet``, warehouse
``$SPARKDELTA_WAREHOUSE``).
"""

from __future__ import annotations

from pathlib import Path

PROJECT = """\
name: fleet
version: "0.1.0"
config-version: 2
profile: fleet
model-paths: ["models"]
models:
  fleet:
    +file_format: delta
    +post-hook: "{{ maintain_model() }}"
    +maintenance_on_error: warn
"""

PROFILES = """\
fleet:
  target: embedded
  outputs:
    embedded:
      type: sparkdelta
      method: session
      mode: embedded
      schema: fleet
      warehouse: "{{ env_var('SPARKDELTA_WAREHOUSE', 'warehouse') }}"
      engine_port: 0
      threads: 4
"""

TABLE = """\
{{{{ config(materialized='table') }}}}
select {i} as id, 'model {i}' as name
"""

INCREMENTAL = """\
{{{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}}}
select {i} as id, 'incremental {i}' as name
union all select {i} + 1000 as id, 'incremental {i}' as name
"""


def table_names(tables: int) -> list[str]:
    """The table models' names, in order."""
    return [f"t_{i:04d}" for i in range(tables)]


def write_fleet_project(root: Path, *, tables: int, incremental: int = 5) -> Path:
    """Write the project under ``root`` (created); return it.

    Args:
        root: The project directory.
        tables: How many table models.
        incremental: How many incremental (merge) models.

    Returns:
        ``root``.
    """
    models = root / "models"
    models.mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(PROJECT)
    (root / "profiles.yml").write_text(PROFILES)
    for i, name in enumerate(table_names(tables)):
        (models / f"{name}.sql").write_text(TABLE.format(i=i))
    for i in range(incremental):
        (models / f"inc_{i:02d}.sql").write_text(INCREMENTAL.format(i=i))
    return root


def write_models(root: Path, models: dict[str, str], *, project: str = PROJECT) -> Path:
    """A small project of the fleet's settings with the given models (file name -> text).

    Args:
        root: The project directory (created).
        models: Each model's file name under ``models/`` and its text.
        project: The ``dbt_project.yml`` text (the fleet's by default).

    Returns:
        ``root``.
    """
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(project)
    (root / "profiles.yml").write_text(PROFILES)
    for name, text in models.items():
        (root / "models" / name).write_text(text)
    return root
