"""The embedded engine's catalog journal on disk: a snapshot plus an append-only log."""

from __future__ import annotations

import json
from pathlib import Path

from dbt.adapters.sparkdelta.engines.catalog_journal import CatalogJournal, declared_location
from python_ops.maintenance.selection.catalog_file import JOURNAL_NAME, LOG_NAME, read_catalog
from python_ops.maintenance.selection.locations import journal_tables


def _log_lines(warehouse: Path) -> list[str]:
    return (warehouse / LOG_NAME).read_text().splitlines()


def test_each_change_is_one_appended_line_and_the_snapshot_is_not_rewritten(
    tmp_path: Path,
) -> None:
    journal = CatalogJournal(str(tmp_path))
    for i in range(100):
        journal.record_table("s", f"t{i}", f"{tmp_path}/s/t{i}")
    assert journal.appends == 100  # one record per table (its schema with it)
    assert len(_log_lines(tmp_path)) == 100
    assert not (tmp_path / JOURNAL_NAME).exists()  # never rewritten whole
    journal.record_table("s", "t7", f"{tmp_path}/s/t7")  # a rebuild at the same location
    assert journal.appends == 100
    journal.close()
    # a new process sees every table, and so does the CLI (plain Python)
    assert journal_tables(str(tmp_path))[("s", "t99")] == f"{tmp_path}/s/t99"
    assert CatalogJournal(str(tmp_path)).location("S", "T42") == f"{tmp_path}/s/t42"


def test_a_new_journal_compacts_a_long_log_unless_another_has_the_warehouse_open(
    tmp_path: Path,
) -> None:
    first = CatalogJournal(str(tmp_path))
    for i in range(70):
        first.record_table("s", "t", f"{tmp_path}/s/t{i}")  # 70 records, 1 table
    other = CatalogJournal(str(tmp_path))  # `first` still holds the warehouse: no compaction
    assert other.compactions == 0
    assert len(_log_lines(tmp_path)) == 70
    first.close()
    other.close()
    third = CatalogJournal(str(tmp_path))
    assert third.compactions == 1
    assert (tmp_path / LOG_NAME).read_text() == ""
    snapshot = json.loads((tmp_path / JOURNAL_NAME).read_text())
    assert snapshot["relations"] == [
        {"kind": "table", "schema": "s", "name": "t", "location": f"{tmp_path}/s/t69"}
    ]
    third.close()


def test_a_torn_last_line_is_skipped_and_records_replay_idempotently(tmp_path: Path) -> None:
    journal = CatalogJournal(str(tmp_path))
    journal.record_table("s", "a", "/x/a")
    journal.record_view("s", "v", "create or replace view s.v as select * from s.a")
    journal.rename("s", "v", "s", "w")
    journal.record_table("s", "b", "/x/b")
    journal.forget("s", "b")
    journal.close()
    records = _log_lines(tmp_path)
    with (tmp_path / LOG_NAME).open("a") as log:
        log.write('{"op": "put", "entry": {"kind": "tab')  # a crash mid-append
    catalog, _ = read_catalog(str(tmp_path))
    assert list(catalog.relations) == [("s", "a"), ("s", "w")]
    assert catalog.relations[("s", "w")]["statement"].startswith("create or replace view s.w ")
    # a crash between a compaction's rename and the log's truncation: the log again on top
    (tmp_path / JOURNAL_NAME).write_text(json.dumps(catalog.to_json()))
    (tmp_path / LOG_NAME).write_text("\n".join(records) + "\n")
    again, _ = read_catalog(str(tmp_path))
    assert again.relations == catalog.relations


def test_the_location_a_create_statement_gives() -> None:
    header = "create or replace table s.t using delta partitioned by (d) location '/w/s/t'"
    assert declared_location(f"{header} as select 'location ''/no''' as x") == "/w/s/t"
    assert declared_location("create table s.t using delta as select 1 as location") is None
