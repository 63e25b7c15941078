"""Partition conditions (VACUUM's ``partition_filter``, OPTIMIZE's ``where``): parse and evaluate.

The same grammar and errors serve every op; values are compared as the column's type and with
SQL's three-valued logic (a comparison with null is unknown, so only ``IS NULL`` selects the null
partition).
"""

from __future__ import annotations

import pytest

from python_ops.delta.table.partition_scope import PartitionScope, parse_scope
from python_ops.errors import ConfigError

SCHEMA = [
    {"name": "id", "type": "long"},
    {"name": "amount", "type": "double"},
    {"name": "day", "type": "date"},
    {"name": "country", "type": "string"},
    {"name": "year", "type": "integer"},
    {"name": "hour", "type": "timestamp"},
    {"name": "is_test", "type": "boolean"},
    {"name": "Region Code", "type": "string"},
    {"name": "nested", "type": {"type": "struct", "fields": []}},
]
PARTITIONS = ("day", "country", "year", "hour", "is_test", "Region Code")


def scope(predicate: str, partitions: tuple[str, ...] = PARTITIONS) -> PartitionScope:
    return parse_scope(
        predicate, partition_columns=partitions, schema_fields=SCHEMA, setting="where"
    )


def part(**values: str | None) -> dict[str, str | None]:
    base: dict[str, str | None] = {
        "day": "2024-06-15",
        "country": "DE",
        "year": "2024",
        "hour": "2024-06-15 10:00:00",
        "is_test": "false",
        "Region Code": "EU-1",
    }
    base.update(values)
    return base


@pytest.mark.parametrize(
    ("predicate", "selected"),
    [
        ("day >= '2024-06-01'", True),
        ("day < '2024-06-01'", False),
        ("day = DATE '2024-06-15'", True),
        ("day <> '2024-06-15'", False),
        ("day != '2024-06-14'", True),
        ("year > 2023", True),
        ("year <= 2023.5", False),
        ("year = 2024.0", True),  # numbers compare as numbers, not as text
        ("year < 10000", True),  # '2024' < '10000' as text, but not as numbers
        ("country IN ('DE', 'FR')", True),
        ("country NOT IN ('DE', 'FR')", False),
        ("country in ('FR')", False),
        ("day BETWEEN '2024-06-01' AND '2024-06-30'", True),
        ("day NOT BETWEEN '2024-06-01' AND '2024-06-30'", False),
        ("hour >= TIMESTAMP '2024-06-15 09:30:00'", True),
        ("hour < '2024-06-15T10:00:00Z'", False),
        ("is_test = false", True),
        ("is_test", None),  # not a condition: a syntax error
        ("`Region Code` = 'EU-1'", True),
        ("DAY >= '2024-06-01' and COUNTRY = 'DE'", True),  # column names ignore case
        ("country = 'DE' AND year = 2023", False),
        ("country = 'FR' OR year = 2024", True),
        ("NOT (country = 'FR' OR year = 2023)", True),
        ("not country = 'DE'", False),
        ("(country = 'DE') and not (day < '2024-01-01')", True),
    ],
)
def test_evaluation(predicate: str, selected: bool | None) -> None:
    if selected is None:
        with pytest.raises(ConfigError, match="does not parse"):
            scope(predicate)
        return
    assert scope(predicate).matches(part()) is selected


def test_null_partitions_are_selected_only_by_is_null() -> None:
    null = part(country=None)
    assert scope("country IS NULL").matches(null)
    assert not scope("country IS NOT NULL").matches(null)
    assert not scope("country = 'DE'").matches(null)
    assert not scope("country != 'DE'").matches(null)  # unknown, not true
    assert not scope("country NOT IN ('DE')").matches(null)
    assert not scope("NOT country = 'DE'").matches(null)  # NOT unknown is unknown
    assert scope("country = 'DE' OR country IS NULL").matches(null)
    assert scope("year = 2024 OR country = 'DE'").matches(null)  # true OR unknown is true
    assert not scope("year = 2024 AND country = 'DE'").matches(null)  # true AND unknown
    assert not scope("year = 2023 AND country = 'DE'").matches(null)  # false AND unknown
    assert scope("country IS NOT NULL").matches(part())


def test_a_stored_value_not_of_the_column_type_matches_nothing() -> None:
    odd = part(year="not-a-year")
    assert not scope("year = 2024").matches(odd)
    assert not scope("year != 2024").matches(odd)
    assert scope("year IS NULL").matches(odd)  # it counts as null, as a cast would make it


def test_quoted_strings() -> None:
    assert scope("country = 'it''s'").matches(part(country="it's"))
    assert scope("country = 'it\\'s'").matches(part(country="it's"))
    assert scope("country = 'a=b/c'").matches(part(country="a=b/c"))


def test_the_scope_names_the_columns_it_uses() -> None:
    s = scope("country = 'DE' AND (day > '2024-01-01' OR country IS NULL)")
    assert s.columns == ("country", "day")
    assert s.predicate == "country = 'DE' AND (day > '2024-01-01' OR country IS NULL)"
    # columns it does not reference may be absent from the partition values
    assert s.matches({"country": "DE", "day": "2024-02-01"})


@pytest.mark.parametrize(
    ("predicate", "fix"),
    [
        ("id > 3", r"'id' is a non-partition column; only partition columns may be used: day,"),
        ("nested = 1", r"'nested' is a non-partition column"),
        ("shoe_size = 44", r"'shoe_size' is not a column of the table"),
        ("day >= ", r"does not parse \(expected a literal value for day\)"),
        ("day >= 'yesterday'", r"'yesterday' is not a date value for day"),
        ("year = 'twenty'", r"'twenty' is not a integer value for year"),
        ("is_test = 'maybe'", r"'maybe' is not a boolean value for is_test"),
        ("country = 'DE' AND", r"does not parse"),
        ("country = 'DE')", r"does not parse \(unexpected '\)'\)"),
        ("(country = 'DE'", r"does not parse \(expected \) but found 'end'\)"),
        ("country NOT = 'DE'", r"NOT must be followed by IN or BETWEEN"),
        ("country IN 'DE'", r"expected \( but found \"'DE'\""),
        ("country ~ 'DE'", r"does not parse \(unexpected text at"),
        ("country , 'DE'", r"expected a comparison operator, found ','"),
        ("'DE' = country", r"expected a partition column"),
        ("   ", r"Write a SQL condition over the partition columns \(day, country"),
    ],
)
def test_errors_name_the_setting_and_the_fix(predicate: str, fix: str) -> None:
    # the table's condition; the model it belongs to is named by the maintenance layer
    with pytest.raises(ConfigError, match=rf"^setting 'where' has bad value .*{fix}"):
        scope(predicate)


def test_a_syntax_error_suggests_a_condition_on_the_first_partition_column() -> None:
    with pytest.raises(ConfigError, match=r"e\.g\. \"day >= '2024-06-01'\""):
        scope("day >>= 1")


def test_unpartitioned_tables_take_no_condition() -> None:
    with pytest.raises(ConfigError, match=r"setting 'partition_filter'.*not partitioned"):
        parse_scope("x = 1", partition_columns=(), schema_fields=SCHEMA, setting="partition_filter")
