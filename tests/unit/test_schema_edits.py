"""Schema and docs edits through delta-rs (dbt's ``on_schema_change`` and ``persist_docs``).

The adapter calls these instead of ``deltalake`` itself; here on a copy of a shared fixture
table: the new column is nullable, the comments land in the log, the data files stay as they
were. The same edits under dbt: ``tests/adapter`` (on_schema_change, persist_docs).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dbt.adapters.sparkdelta.materializing.incremental import registration_ddl
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.writing.schema_edits import add_nullable_columns, set_comments
from tests.helpers.trust import files_on_disk

FixtureTable = Callable[[str], Path]


def data_files(table: Path) -> dict[str, int]:
    return {k: v for k, v in files_on_disk(table).items() if not k.startswith("_delta_log")}


def test_a_new_column_is_nullable_and_the_data_stays(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    before, version = data_files(table), read_snapshot(str(table)).version
    docs = add_nullable_columns(str(table), [("amount", "decimal(10,2)"), ("note", "string")])
    assert [(f["name"], f["type"], f["nullable"]) for f in docs.fields] == [
        ("version", "integer", True),
        ("amount", "decimal(10,2)", True),
        ("note", "string", True),
    ]
    snapshot = read_snapshot(str(table))
    assert snapshot.version == version + 1  # one metadata commit
    assert [f["name"] for f in snapshot.metadata.schema_fields()] == ["version", "amount", "note"]
    assert data_files(table) == before
    assert registration_ddl(docs)["columns"] == (
        "`version` int, `amount` decimal(10,2), `note` string"
    )


def test_an_unknown_type_is_refused_before_any_commit(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    version = read_snapshot(str(table)).version
    with pytest.raises(ValueError, match="array<string>"):
        add_nullable_columns(str(table), [("tags", "array<string>")])
    assert read_snapshot(str(table)).version == version


def test_comments_are_recorded_case_insensitively(fixture_table: FixtureTable) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    before = data_files(table)
    docs = set_comments(str(table), "every version", {"VERSION": "the version", "nope": "x"})
    assert docs.description == "every version"
    assert [(f["name"], f["metadata"].get("comment")) for f in docs.fields] == [
        ("version", "the version")
    ]
    assert read_snapshot(str(table)).metadata.schema_fields()[0]["metadata"] == {
        "comment": "the version"
    }
    assert data_files(table) == before
    ddl = registration_ddl(docs)
    assert ddl == {"columns": "`version` int comment 'the version'", "comment": "every version"}
