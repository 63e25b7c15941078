"""Which columns a table keeps statistics for, as Delta decides it.

Delta collects statistics for ``delta.dataSkippingStatsColumns`` when the table sets it, else
for the first ``delta.dataSkippingNumIndexedCols`` (default 32) leaf columns of the schema
without its partition columns (``StatisticsCollection.getIndexedColumns``: a struct counts its
leaves; a negative number means every column). Min/max are kept only for the types Delta's data
skipping reads (``SkippingEligibleDataType``: numbers, dates, timestamps, strings); a null count
for every column. This module turns the table's schema and properties into that tree
(``StatsField``) and, for ``auto``, into the property value that also covers the watched columns.

Under column mapping (``delta.columnMapping.mode`` ``name`` or ``id``) the Parquet files name
their columns by physical name and the protocol keys a file's statistics by physical name too
("Track partition values and column level statistics with the physical name of the column in
the transaction log"); the statistics columns are still chosen by logical name (the schema's
order, ``delta.dataSkippingStatsColumns``). Each ``StatsField`` carries both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from python_ops.errors import ConfigError, StatsUnsupportedError

COLUMN_MAPPING_MODE = "delta.columnMapping.mode"
PHYSICAL_NAME = "delta.columnMapping.physicalName"
COLUMN_ID = "delta.columnMapping.id"
NUM_INDEXED_COLS = "delta.dataSkippingNumIndexedCols"
STATS_COLUMNS = "delta.dataSkippingStatsColumns"
STRING_PREFIX_LENGTH = "delta.dataSkippingStringPrefixLength"
DEFAULT_NUM_INDEXED_COLS = 32
DEFAULT_STRING_PREFIX = 32
# Delta types whose min/max Delta keeps (DataSkippingReader.SkippingEligibleDataType)
_MIN_MAX_TYPES = frozenset(
    {"byte", "short", "integer", "long", "float", "double", "date", "timestamp", "timestamp_ntz"}
    | {"string"}
)
# Delta types with a null count only
_COUNT_ONLY_TYPES = frozenset({"boolean", "binary"})
_DECIMAL = re.compile(r"^decimal\(\s*\d+\s*,\s*-?\d+\s*\)$")


@dataclass(frozen=True)
class StatsField:
    """One column of the statistics tree.

    Attributes:
        name: The column's logical name, as in the schema.
        delta_type: Delta's type name (``long``, ``decimal(10,2)``, ``struct``, ``array``...).
        children: A struct's fields (those Delta collects), else empty.
        physical: The name in the Parquet files and the statistics JSON (the logical name
            without column mapping).
        field_id: The Parquet field id the files must carry (column mapping ``id`` mode).
    """

    name: str
    delta_type: str
    children: tuple[StatsField, ...] = ()
    physical: str = ""
    field_id: int | None = None

    @property
    def stored(self) -> str:
        """The name in the Parquet files and in ``add.stats``."""
        return self.physical or self.name

    def with_children(self, children: Sequence[StatsField]) -> StatsField:
        """The same column with other (collected) struct fields."""
        return StatsField(self.name, self.delta_type, tuple(children), self.physical, self.field_id)

    @property
    def is_struct(self) -> bool:
        """Whether the column is a struct (its statistics nest)."""
        return self.delta_type == "struct"

    @property
    def has_min_max(self) -> bool:
        """Whether Delta keeps a min/max for this column."""
        return self.delta_type in _MIN_MAX_TYPES or bool(_DECIMAL.match(self.delta_type))


def type_name(raw: Any) -> str:
    """Delta's name of a schema type: the string, or ``struct``/``array``/``map``."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, Mapping):
        return str(raw.get("type"))
    return repr(raw)


def column_mapping_mode(configuration: Mapping[str, str]) -> str:
    """``delta.columnMapping.mode``: ``none`` (also when unset), ``name`` or ``id``.

    Raises:
        StatsUnsupportedError: For a mode the protocol does not define.
    """
    mode = configuration.get(COLUMN_MAPPING_MODE, "none").lower()
    if mode not in ("none", "name", "id"):
        raise StatsUnsupportedError(
            f"{COLUMN_MAPPING_MODE} is '{mode}', which the protocol does not define (none, "
            "name, id). Nothing was written."
        )
    return mode


def _mapped(raw: Mapping[str, Any], mode: str) -> tuple[str, int | None]:
    """A field's physical name and (``id`` mode) field id from its column-mapping metadata."""
    if mode == "none":
        return "", None
    meta = raw.get("metadata") or {}
    physical = meta.get(PHYSICAL_NAME)
    column_id = meta.get(COLUMN_ID)
    if not isinstance(physical, str) or not physical:
        raise StatsUnsupportedError(
            f"column '{raw.get('name')}' has no {PHYSICAL_NAME} although the table maps "
            f"columns ({COLUMN_MAPPING_MODE} = {mode}); the log is not one this op "
            "understands. Nothing was written."
        )
    if mode == "id" and (isinstance(column_id, bool) or not isinstance(column_id, int)):
        raise StatsUnsupportedError(
            f"column '{raw.get('name')}' has no {COLUMN_ID} although the table maps columns by "
            "id; the log is not one this op understands. Nothing was written."
        )
    return physical, column_id if mode == "id" else None


def _field(raw: Mapping[str, Any], mode: str) -> StatsField:
    kind = raw["type"]
    name = type_name(kind)
    children = tuple(_field(f, mode) for f in kind["fields"]) if name == "struct" else ()
    physical, field_id = _mapped(raw, mode)
    return StatsField(str(raw["name"]), name, children, physical, field_id)


def data_fields(
    schema: Mapping[str, Any], partition_columns: Sequence[str], mode: str = "none"
) -> list[StatsField]:
    """The schema's columns without the partition columns, as ``StatsField`` trees.

    Args:
        schema: The table's schema (parsed ``schemaString``).
        partition_columns: The partition columns (logical names).
        mode: ``delta.columnMapping.mode`` (``column_mapping_mode``).

    Returns:
        One tree per data column, physical names and field ids filled in under column mapping.
    """
    skip = {c.lower() for c in partition_columns}
    return [_field(f, mode) for f in schema.get("fields", []) if str(f["name"]).lower() not in skip]


def _truncate(fields: Sequence[StatsField], limit: int) -> tuple[list[StatsField], int]:
    out: list[StatsField] = []
    count = 0
    for f in fields:
        if count >= limit:
            break
        if f.is_struct:
            kids, used = _truncate(f.children, limit - count)
            out.append(f.with_children(kids))
            count += used
        else:
            out.append(f)
            count += 1
    return out, count


def split_column_list(value: str) -> list[list[str]]:
    """``a, b.c, `d e`.f`` as name parts: ``[["a"], ["b", "c"], ["d e", "f"]]``."""
    columns: list[list[str]] = []
    parts: list[str] = []
    current = ""
    quoted = False
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "`":
            if quoted and value[i + 1 : i + 2] == "`":
                current += "`"
                i += 2
                continue
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(current.strip())
            current = ""
        elif ch == "," and not quoted:
            parts.append(current.strip())
            columns.append(parts)
            parts, current = [], ""
        else:
            current += ch
        i += 1
    parts.append(current.strip())
    if any(parts):
        columns.append(parts)
    return [c for c in columns if all(c)]


def _filter(fields: Sequence[StatsField], paths: list[list[str]]) -> list[StatsField]:
    out = []
    for f in fields:
        mine = [p[1:] for p in paths if p[0].lower() == f.name.lower()]
        if not mine:
            continue
        if any(not rest for rest in mine):
            out.append(f)
        elif f.is_struct:
            out.append(f.with_children(_filter(f.children, mine)))
    return out


def indexed_fields(
    schema: Mapping[str, Any], partition_columns: Sequence[str], configuration: Mapping[str, str]
) -> list[StatsField]:
    """The columns Delta collects statistics for on this table (its ``statsSchema`` columns).

    Raises:
        ConfigError: When ``delta.dataSkippingNumIndexedCols`` is not a whole number.
        StatsUnsupportedError: A mapped column without its physical name (or id).
    """
    fields = data_fields(schema, partition_columns, column_mapping_mode(configuration))
    listed = configuration.get(STATS_COLUMNS)
    if listed is not None:
        return _filter(fields, [[p.lower() for p in c] for c in split_column_list(listed)])
    raw = configuration.get(NUM_INDEXED_COLS, str(DEFAULT_NUM_INDEXED_COLS))
    try:
        limit = int(raw)
    except ValueError as err:
        raise ConfigError(
            setting=NUM_INDEXED_COLS, value=raw, fix="The table property must be a whole number."
        ) from err
    return list(fields) if limit < 0 else _truncate(fields, limit)[0]


def string_prefix_length(configuration: Mapping[str, str]) -> int:
    """``delta.dataSkippingStringPrefixLength`` (default 32)."""
    try:
        return int(configuration.get(STRING_PREFIX_LENGTH, DEFAULT_STRING_PREFIX))
    except ValueError:
        return DEFAULT_STRING_PREFIX


def quote(name: str) -> str:
    """A column name as Delta's column lists write it (backticks when needed)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "`" + name.replace("`", "``") + "`"


def check_supported_types(fields: Sequence[StatsField], *, location: str) -> None:
    """Refuse a statistics column whose type this op cannot compute exactly.

    Raises:
        StatsUnsupportedError: Naming the column and its type (``variant``, ``interval``...).
    """
    for f in fields:
        if f.is_struct:
            check_supported_types(f.children, location=location)
        elif not (f.has_min_max or f.delta_type in _COUNT_ONLY_TYPES or f.delta_type in _NESTED):
            raise StatsUnsupportedError(
                f"{location}: statistics of column '{f.name}' of type '{f.delta_type}' are not "
                "computed here (Delta's rules for it are not implemented); leave the column out "
                "of the statistics columns, or compute them with Delta. Nothing was written."
            )


_NESTED = frozenset({"array", "map"})


def resolve_watched(
    columns: Sequence[str], schema: Mapping[str, Any], partition_columns: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The watched top-level columns as the schema spells them, and the partition columns named.

    Raises:
        ConfigError: For a column the table does not have (naming the ones it has).
    """
    names = {str(f["name"]).lower(): str(f["name"]) for f in schema.get("fields", [])}
    parts = {c.lower() for c in partition_columns}
    watched: list[str] = []
    skipped: list[str] = []
    for column in columns:
        key = column.strip().lower()
        if key not in names:
            raise ConfigError(
                setting="columns",
                value=column,
                fix=f"the table has no top-level column '{column}'; it has: "
                + ", ".join(names.values()),
            )
        (skipped if key in parts else watched).append(names[key])
    return list(dict.fromkeys(watched)), skipped


def listable(field: StatsField) -> bool:
    """Whether Delta accepts the column in ``delta.dataSkippingStatsColumns`` (its type check)."""
    return field.is_struct or field.has_min_max


def widened_stats_columns(indexed: Sequence[StatsField], watched: Sequence[str]) -> str | None:
    """``delta.dataSkippingStatsColumns`` covering today's indexed columns and ``watched``.

    Delta refuses a top-level column of a type without min/max in that list, so such indexed
    columns are left out of it (they keep no statistics Delta's skipping reads but a null count).

    Returns:
        The value to set, or None when every watched column is already indexed.
    """
    have = {f.name.lower() for f in indexed}
    missing = [w for w in watched if w.lower() not in have]
    if not missing:
        return None
    kept = [f.name for f in indexed if listable(f)]
    return ",".join(quote(n) for n in [*kept, *missing])


def order_like_schema(value: str, schema: Mapping[str, Any]) -> str:
    """A column list in the schema's order (Delta collects in schema order either way)."""
    order = {str(f["name"]).lower(): i for i, f in enumerate(schema.get("fields", []))}
    cols = split_column_list(value)
    cols.sort(key=lambda c: order.get(c[0].lower(), len(order)))
    return ",".join(".".join(quote(p) for p in c) for c in cols)
