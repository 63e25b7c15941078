"""The embedded engine: catalog persistence across sessions, managed drops, clear errors."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from deltalake import DeltaTable

from dbt.adapters.sparkdelta.engines import get_engine, shutdown_engines
from python_ops.errors import ConfigError
from tests.helpers.python_run import python_stdout


def _engine(warehouse: Path):
    return get_engine(mode="embedded", warehouse=str(warehouse), connect_url=None)


def test_tables_and_views_survive_a_new_engine(tmp_path: Path, fresh_engines) -> None:
    wh = tmp_path / "wh"
    engine = _engine(wh)
    engine.sql('/* {"app": "dbt"} */ create schema if not exists sales')
    engine.sql(
        f"create or replace table sales.orders using delta partitioned by (day) "
        f"location '{wh}/sales/orders' as "
        "select id, cast(id * 1.5 as double) as amount, "
        "date_add(date'2024-01-01', cast(id % 3 as int)) as day "
        "from range(0, 30)"
    )
    engine.sql(
        "create or replace view sales.big_orders as select * from sales.orders where amount > 20"
    )
    engine.sql(
        "create or replace view sales.big_order_days as select distinct day from sales.big_orders"
    )
    engine.sql("create temporary view scratch as select 1 as x")
    shutdown_engines()

    engine = _engine(wh)  # a new Sail server and session: its own catalog starts empty
    assert engine.sql("select count(*) as n, sum(amount) as s from sales.orders").collect()[
        0
    ].asDict() == {
        "n": 30,
        "s": sum(i * 1.5 for i in range(30)),
    }
    assert engine.sql("select count(*) from sales.big_orders").collect()[0][0] == 16
    assert engine.sql("select count(*) from sales.big_order_days").collect()[0][0] == 3
    # the partitioned table takes writes in the new session, into its partition layout
    engine.sql("insert into sales.orders values (100, 1.0, date'2024-02-01')")
    assert (wh / "sales" / "orders" / "day=2024-02-01").is_dir()
    assert DeltaTable(str(wh / "sales" / "orders")).to_pyarrow_table().num_rows == 31
    tables = {r.tableName for r in engine.sql("show tables in sales").collect()}
    assert tables == {"orders", "big_orders", "big_order_days"}


def test_the_server_starts_when_a_statement_first_needs_it(tmp_path: Path, fresh_engines) -> None:
    """The journal answers without a server; the first statement starts it, with the schemas."""
    wh = tmp_path / "wh"
    engine = _engine(wh)
    assert not engine.started
    engine.sql("create schema if not exists sales")
    engine.sql(f"create table sales.orders using delta location '{wh}/sales/orders' as select 1 id")
    assert engine.started
    shutdown_engines()

    engine = _engine(wh)  # the next process: the journal, no server yet
    assert engine.journal.location("sales", "orders") == str(wh / "sales" / "orders")
    assert engine.ops_spark.conf.get("spark.sql.session.timeZone", "unset") == "unset"
    assert not engine.started
    assert "sales" in {r[0] for r in engine.sql("show schemas").collect()}  # created at start
    assert engine.started
    assert engine.url.startswith("sc://127.0.0.1:")
    assert engine.sql("select id from sales.orders").collect()[0][0] == 1


def test_a_fixed_port_starts_the_server_at_once(tmp_path: Path, fresh_engines) -> None:
    with socket.socket() as probe:  # a port free now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    engine = get_engine(mode="embedded", warehouse=str(tmp_path), connect_url=None, port=port)
    assert engine.started
    assert engine.url == f"sc://127.0.0.1:{port}"


def test_drop_removes_managed_table_files_only(tmp_path: Path, fresh_engines) -> None:
    wh = tmp_path / "wh"
    external = tmp_path / "external" / "kept"
    engine = _engine(wh)
    engine.sql("create schema if not exists s")
    engine.sql(f"create table s.managed using delta location '{wh}/s/managed' as select 1 as id")
    engine.sql(f"create table s.ext using delta location '{external}' as select 1 as id")
    engine.sql("drop table if exists s.managed")
    engine.sql("drop table if exists s.ext")
    assert not (wh / "s" / "managed").exists()
    assert (external / "_delta_log").is_dir()
    shutdown_engines()
    engine = _engine(wh)
    assert {r.tableName for r in engine.sql("show tables in s").collect()} == set()


def test_warehouse_that_cannot_be_created(tmp_path: Path, fresh_engines) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError, match=r"'warehouse'.*cannot be created"):
        _engine(blocker / "wh")


def test_port_in_use(tmp_path: Path, fresh_engines) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ConfigError, match=r"'engine_port'.*engine_port: 0"):
            get_engine(mode="embedded", warehouse=str(tmp_path), connect_url=None, port=port)


def test_the_embedded_session_outlives_sails_idle_timeout() -> None:
    """Sail ends a session idle past ``SAIL_SPARK__SESSION_TIMEOUT_SECS``; ours sets it long."""
    code = """
        import os, sys, time
        if sys.argv[1]:
            os.environ["SAIL_SPARK__SESSION_TIMEOUT_SECS"] = sys.argv[1]
        else:
            os.environ.pop("SAIL_SPARK__SESSION_TIMEOUT_SECS", None)
        from python_ops.spark_sessions import SailEngine
        engine = SailEngine()
        engine.spark.range(1).count()
        time.sleep(4)
        try:
            print(engine.spark.range(3).count(), os.environ["SAIL_SPARK__SESSION_TIMEOUT_SECS"])
        except Exception as err:
            print("ended:", "is not running" in str(err))
    """
    assert python_stdout(code, "2").splitlines()[-1] == "ended: True"  # Sail reads the setting
    assert python_stdout(code, "").splitlines()[-1] == "3 2592000"
