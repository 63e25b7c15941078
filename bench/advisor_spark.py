"""The Spark-with-Delta half of ``advisor_bench``: the same tables read by Delta 4.4 on Spark.

The embedded engine builds ``events`` and ``products``; a second generated project (the same
models, a ``mode: local`` profile: classic JVM Spark with the project's Delta jars, Spark's own
Derby metastore in a warehouse of its own) registers those very Delta tables by location
(``register_upstream``, a run-operation) and builds the downstream models on Spark. So both
engines read the same files, before and after our auto Z-order rewrites them.

Two child processes (classic local Spark with Delta, ``local[2]``, the project's small-machine
settings) measure what Delta itself does:

- ``SCAN``: each downstream model's filter on ``events`` run by Delta, and the scan's own SQL
  metric ``numFiles`` ("number of files read") summed over the plan's file scans;
- ``ZORDER``: Delta's ``OPTIMIZE delta.`<t>` ZORDER BY (...)`` with ``optimize.maxFileSize``
  set to the model's target file size, the statement timed inside the process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

SPARK_PROFILES = """
advbench:
  target: local
  outputs:
    local:
      type: sparkdelta
      method: session
      mode: local
      schema: bench
      warehouse: "{warehouse}"
      threads: 1
"""

REGISTER = """
{% macro register_upstream(root) %}
  {% if execute %}
    {% do run_query('create schema if not exists bench') %}
    {% for name in ['products', 'events'] %}
      {% do run_query('create table if not exists bench.' ~ name
                      ~ " using delta location '" ~ root ~ '/' ~ name ~ "'") %}
    {% endfor %}
  {% endif %}
{% endmacro %}
"""

#: Each downstream model's filter on ``events`` (the join's is its CTE's), as Delta runs it.
LOOKUPS = {
    "customer_one": "customer_id = 4242",
    "customer_few": "customer_id in (17, 4242, 90001)",
    "product_one": "product_id = 77",
    "product_range": "product_id between 100 and 110",
    "product_join": "product_id < 20",
}

SESSION = """
import json, sys, time
started = time.perf_counter()
from pyspark.sql import SparkSession
from python_ops.delta_jars import LOCAL_CONF, require_delta_jars, session_conf
builder = SparkSession.builder.master("local[2]").appName("advisor_bench")
for key, value in {**session_conf(require_delta_jars()), **LOCAL_CONF}.items():
    builder = builder.config(key, value)
# the plan executed is the plan whose scan metrics are read (no adaptive re-planning)
builder = builder.config("spark.sql.adaptive.enabled", "false")
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
start_s = time.perf_counter() - started
table = sys.argv[1]
"""

SCAN = (
    SESSION
    + """
def files_read(where):
    df = spark.sql(f"select count(*) as n, sum(amount) as s from delta.`{table}` where {where}")
    row = df.collect()[0]
    seconds = []
    for _ in range(3):  # the query alone, again: its median wall
        t0 = time.perf_counter()
        spark.sql(f"select count(*), sum(amount) from delta.`{table}` where {where}").collect()
        seconds.append(time.perf_counter() - t0)
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    read = 0
    for i in range(leaves.length()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains("numFiles"):
            read += metrics.apply("numFiles").value()
    return {"files_read": read, "rows": row["n"], "sum": row["s"], "query_s": sorted(seconds)[1]}
lookups = json.loads(sys.argv[2])
detail = spark.sql(f"describe detail delta.`{table}`").collect()[0]
total = spark.sql(f"select count(*) n, sum(event_id) s from delta.`{table}`").collect()[0]
print(json.dumps({"files": detail["numFiles"], "rows": total["n"], "checksum": total["s"],
                  "lookups": {name: files_read(where) for name, where in lookups.items()}}))
"""
)

ZORDER = (
    SESSION
    + """
spark.conf.set("spark.databricks.delta.optimize.maxFileSize", sys.argv[3])
t0 = time.perf_counter()
metrics = spark.sql(f"OPTIMIZE delta.`{table}` ZORDER BY ({sys.argv[2]})").collect()[0]["metrics"]
op_s = time.perf_counter() - t0
print(json.dumps({"op_s": op_s, "start_s": start_s, "added": metrics["numFilesAdded"],
                  "removed": metrics["numFilesRemoved"]}))
"""
)


def write_spark_project(project: Path, spark_project: Path, warehouse: Path) -> None:
    """The embedded project's models again, with the ``mode: local`` profile and the macro."""
    (spark_project / "models").mkdir(parents=True)
    (spark_project / "macros").mkdir()
    (spark_project / "dbt_project.yml").write_text((project / "dbt_project.yml").read_text())
    (spark_project / "profiles.yml").write_text(SPARK_PROFILES.format(warehouse=warehouse))
    (spark_project / "macros" / "register_upstream.sql").write_text(REGISTER)
    for model in (project / "models").glob("*.sql"):
        (spark_project / "models" / model.name).write_text(model.read_text())


def _child(script: str, *args: str, cwd: Path) -> tuple[float, dict]:
    """A whole child process (JVM start included): its wall seconds and its JSON line."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"Delta child failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, json.loads(done.stdout.strip().splitlines()[-1])


def delta_scan(table: Path, cwd: Path) -> dict:
    """Delta's files read per downstream filter, the live files, rows and checksum."""
    return _child(SCAN, str(table), json.dumps(LOOKUPS), cwd=cwd)[1]


def delta_zorder(table: Path, columns: list[str], max_file_size: int, cwd: Path) -> dict:
    """Delta's own OPTIMIZE ZORDER BY on ``table``: whole-process wall and the statement's."""
    wall, out = _child(ZORDER, str(table), ", ".join(columns), str(max_file_size), cwd=cwd)
    return {"wall": wall, **out}
