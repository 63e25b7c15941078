"""A small dbt project whose readers filter and join a maintained table on known columns.

``events`` (maintained, ``maintenance_zorder_by: auto``) is read by:

- ``by_user``: ``user_id = 42`` (equality), and a join to ``users`` through a CTE and an alias;
- ``by_region``: ``region IN (...)`` (in);
- ``by_day``: ``event_date BETWEEN ...`` (range), through a derived table (subquery) renaming it;
- ``by_event``: ``e.event_id > ...`` (range) through a view (``events_view``) that renames it;
- ``user_events``: a Python model (unresolved: not SQL);
- ``with_source`` (an analysis): an unqualified ``flag`` beside a source of unknown columns
  (unresolved: ambiguous); its join key ``event_id`` is resolved.

``users`` is read by a generic test defined in ``models/schema.yml`` (dbt compiles it into the
folder ``target/compiled/advised/models/schema.yml/``) and by the snapshot ``users_snapshot``
(dbt writes no compiled file for a snapshot: its first run's SQL is under ``target/run/``).

Scored on the table's sample cut into files of 128 KB (issue 66): ``user_id = 42`` and the one
month of ``event_date`` skip most files, so the advisor names exactly ``user_id`` and
``event_date``; ``region IN ('eu', 'us')`` (Delta skips an IN list by its smallest and largest
value: ``eu`` to ``us`` keeps three regions of four) skips next to nothing, ``event_id > 1000``
keeps 99 % of the rows (near-full: it counts nothing), and the joins on ``user_id`` and
``event_id`` carry no constant to ``events``; ``users.country``, a partition column, is excluded.
"""

from __future__ import annotations

from pathlib import Path

PROJECT = """
name: advised
version: "1.0"
config-version: 2
profile: advised
models:
  advised:
    +file_format: delta
    +post-hook: "{{ maintain_model() }}"
    +maintenance_on_error: fail
"""

PROFILES = """
advised:
  target: embedded
  outputs:
    embedded:
      type: sparkdelta
      method: session
      mode: embedded
      schema: adv
      warehouse: "{warehouse}"
      engine_port: 0
      threads: 1
"""

SOURCES = """
version: 2
sources:
  - name: raw
    schema: raw
    tables:
      - name: ext
"""

EVENTS = """
{{{{ config(materialized='table', maintenance_zorder_by='auto',
           maintenance_target_file_size='{target}', maintenance_min_small_files=2) }}}}
select
  cast(pmod(id * 2654435761, {rows}) as bigint) as event_id,
  cast(pmod(id * 7919, {users}) as bigint) as user_id,
  element_at(array('eu', 'us', 'apac', 'latam'), cast(pmod(id * 31, 4) + 1 as int)) as region,
  date_add(date'2024-01-01', cast(pmod(id * 104729, 365) as int)) as event_date,
  cast(pmod(id * 13, 1000) as double) / 10 as amount
from range(0, {rows}, 1, {partitions}) generated
"""

USERS = """
{{ config(materialized='table', partition_by=['country']) }}
select cast(id as bigint) as user_id, concat('user ', id) as name,
       element_at(array('DE', 'FR'), cast(pmod(id, 2) + 1 as int)) as country
from (select explode(sequence(0, 99)) as id) generated
"""

SCHEMA = """
version: 2
models:
  - name: users
    columns:
      - name: country
        data_tests:
          - accepted_values:
              arguments:
                values: ['DE', 'FR']
"""

SNAPSHOT = """
{% snapshot users_snapshot %}
{{ config(target_schema='adv', unique_key='user_id', strategy='check', check_cols=['name'],
          file_format='delta') }}
select * from {{ ref('users') }} where country = 'DE'
{% endsnapshot %}
"""

MODELS = {
    "events_view.sql": (
        "{{ config(materialized='view') }}\n"
        "select event_id as eid, region, amount from {{ ref('events') }}\n"
    ),
    "by_user.sql": (
        "{{ config(materialized='view') }}\n"
        "with e as (select user_id as uid, amount from {{ ref('events') }})\n"
        "select u.name, sum(ev.amount) as amount\n"
        "from e as ev join {{ ref('users') }} u on ev.uid = u.user_id\n"
        "where ev.uid = 42 and u.country = 'DE'\n"
        "group by u.name\n"
    ),
    "by_region.sql": (
        "{{ config(materialized='view') }}\n"
        "select count(*) as n from {{ ref('events') }} where region in ('eu', 'us')\n"
    ),
    "by_day.sql": (
        "{{ config(materialized='view') }}\n"
        "select d.day, count(*) as n\n"
        "from (select event_date as day from {{ ref('events') }}) d\n"
        "where d.day between '2024-03-01' and '2024-03-31'\n"
        "group by d.day\n"
    ),
    "by_event.sql": (
        "{{ config(materialized='view') }}\n"
        "select v.eid, v.amount from {{ ref('events_view') }} v where v.eid > 1000\n"
    ),
    "../analyses/with_source.sql": (
        "select e.amount from {{ source('raw', 'ext') }} x\n"
        "join {{ ref('events') }} e on x.k = e.event_id where flag = 1\n"
    ),
    "user_events.py": (
        "def model(dbt, session):\n"
        "    dbt.config(materialized='table')\n"
        "    return dbt.ref('events').filter('user_id = 7')\n"
    ),
}

EXPECTED = ("user_id", "event_date")


def write_project(
    root: Path,
    warehouse: Path,
    *,
    rows: int = 200_000,
    partitions: int = 8,
    target: str = "128KB",
    users: int = 5_000,
    python_model: bool = True,
) -> Path:
    """Write the project at ``root`` (tables under ``warehouse``); returns ``root``."""
    (root / "models").mkdir(parents=True, exist_ok=True)
    (root / "analyses").mkdir(parents=True, exist_ok=True)
    (root / "snapshots").mkdir(parents=True, exist_ok=True)
    (root / "snapshots" / "users_snapshot.sql").write_text(SNAPSHOT)
    (root / "dbt_project.yml").write_text(PROJECT)
    (root / "profiles.yml").write_text(PROFILES.format(warehouse=warehouse))
    models = root / "models"
    (models / "sources.yml").write_text(SOURCES)
    (models / "schema.yml").write_text(SCHEMA)
    (models / "events.sql").write_text(
        EVENTS.format(target=target, users=users, rows=rows, partitions=partitions)
    )
    (models / "users.sql").write_text(USERS)
    for name, text in MODELS.items():
        if name.endswith(".py") and not python_model:
            continue
        (models / name).write_text(text)
    return root
