"""Partition scope: one SQL condition over partition columns, for VACUUM, OPTIMIZE and configs.

``order_date >= '2024-06-01' AND (country IN ('DE', 'FR') OR country IS NULL)`` is parsed once,
validated against the table (partition columns only, literals of the column's type) and
evaluated on partition values with SQL's three-valued logic (a comparison with null is
unknown, so the null partition is selected only by ``IS NULL``). VACUUM evaluates it on
partition directories, OPTIMIZE on the files' partition values: the same grammar and the same
errors everywhere.

Grammar: comparisons (``= != <> < <= > >=``), ``[NOT] IN (...)``, ``[NOT] BETWEEN a AND b``,
``IS [NOT] NULL``, joined by ``AND`` / ``OR`` / ``NOT`` and parentheses. Literals: quoted
strings, numbers, ``true`` / ``false``, ``DATE '...'`` / ``TIMESTAMP '...'``. Columns: bare or
in backticks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from python_ops.errors import ConfigError

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^'\\]|\\.|'')*')|(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    r"|(?P<op><=|>=|!=|<>|=|<|>|\(|\)|,)|`(?P<quoted>[^`]+)`|(?P<word>[A-Za-z_][A-Za-z0-9_]*))"
)
_KEYWORDS = {
    "and",
    "or",
    "not",
    "in",
    "is",
    "null",
    "between",
    "true",
    "false",
    "date",
    "timestamp",
}
_NUMERIC = ("byte", "short", "integer", "long", "float", "double", "decimal")

Value = Any  # a typed partition value: Decimal, str, date, datetime or bool
Node = Callable[[dict[str, Value]], bool | None]


class _Syntax(Exception):
    """Internal: the text does not follow the grammar (becomes a ConfigError)."""


def _typed(delta_type: str, raw: str) -> Value:
    """A partition value string (or literal text) as a comparable value of its column type."""
    if delta_type.startswith(_NUMERIC):
        return Decimal(raw)
    if delta_type == "date":
        return date.fromisoformat(raw.strip()[:10])
    if delta_type.startswith("timestamp"):
        return datetime.fromisoformat(raw.strip().replace("Z", "+00:00")).replace(tzinfo=None)
    if delta_type == "boolean":
        if raw.lower() not in ("true", "false"):
            raise ValueError(f"{raw!r} is not a boolean")
        return raw.lower() == "true"
    return raw


@dataclass(frozen=True)
class PartitionScope:
    """A parsed, validated partition condition.

    Attributes:
        predicate: The condition as written.
        columns: The partition columns it references.
    """

    predicate: str
    columns: tuple[str, ...]
    _node: Node
    _types: dict[str, str]

    def matches(self, values: dict[str, str | None]) -> bool:
        """Whether a partition (column -> value string, None for null) is in scope.

        Args:
            values: The partition's values as stored in the log or named by its directory.

        Returns:
            True only when the condition is true (unknown counts as false, as in SQL).
        """
        typed: dict[str, Value] = {}
        for column in self.columns:
            raw = values.get(column)
            try:
                typed[column] = None if raw is None else _typed(self._types[column], raw)
            except (ValueError, InvalidOperation):
                typed[column] = None  # a value not of the column's type matches nothing
        return self._node(typed) is True


class _Parser:
    def __init__(self, text: str, types: dict[str, str], partition_columns: tuple[str, ...]):
        self.tokens = self._tokenize(text)
        self.position = 0
        self.types = types
        self.partition_columns = partition_columns
        self.referenced: set[str] = set()

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str]]:
        tokens = []
        position = 0
        text = text.rstrip()
        while position < len(text):
            m = _TOKEN.match(text, position)
            if m is None or m.end() == position:
                raise _Syntax(f"unexpected text at {text[position : position + 20]!r}")
            kind = m.lastgroup or ""
            value = m.group(kind)
            if kind == "word" and value.lower() in _KEYWORDS:
                kind, value = "kw", value.lower()
            tokens.append((kind, value))
            position = m.end()
        return tokens

    def peek(self, kind: str, value: str | None = None) -> bool:
        if self.position >= len(self.tokens):
            return False
        k, v = self.tokens[self.position]
        return k == kind and (value is None or v == value)

    def take(self, kind: str, value: str | None = None) -> str:
        if not self.peek(kind, value):
            found = self.tokens[self.position][1] if self.position < len(self.tokens) else "end"
            raise _Syntax(f"expected {value or kind} but found {found!r}")
        self.position += 1
        return self.tokens[self.position - 1][1]

    def parse(self) -> Node:
        node = self.disjunction()
        if self.position != len(self.tokens):
            raise _Syntax(f"unexpected {self.tokens[self.position][1]!r}")
        return node

    def disjunction(self) -> Node:
        parts = [self.conjunction()]
        while self.peek("kw", "or"):
            self.take("kw", "or")
            parts.append(self.conjunction())
        if len(parts) == 1:
            return parts[0]

        def any_of(values: dict[str, Value]) -> bool | None:
            results = [p(values) for p in parts]
            return True if True in results else (None if None in results else False)

        return any_of

    def conjunction(self) -> Node:
        parts = [self.negation()]
        while self.peek("kw", "and"):
            self.take("kw", "and")
            parts.append(self.negation())
        if len(parts) == 1:
            return parts[0]

        def all_of(values: dict[str, Value]) -> bool | None:
            results = [p(values) for p in parts]
            return False if False in results else (None if None in results else True)

        return all_of

    def negation(self) -> Node:
        if self.peek("kw", "not"):
            self.take("kw", "not")
            inner = self.negation()
            return lambda values: None if (r := inner(values)) is None else not r
        if self.peek("op", "("):
            self.take("op", "(")
            node = self.disjunction()
            self.take("op", ")")
            return node
        return self.comparison()

    def column(self) -> str:
        if self.peek("quoted"):
            name = self.take("quoted")
        elif self.peek("word"):
            name = self.take("word")
        else:
            raise _Syntax("expected a partition column")
        by_lower = {c.lower(): c for c in self.types}
        if name.lower() not in by_lower:
            raise _Column(name, known=False)
        name = by_lower[name.lower()]
        if name not in self.partition_columns:
            raise _Column(name, known=True)
        self.referenced.add(name)
        return name

    def literal(self, column: str) -> Value:
        if self.peek("kw", "date") or self.peek("kw", "timestamp"):
            self.take("kw")
        if self.peek("str"):
            raw = self.take("str")[1:-1].replace("''", "'").replace("\\'", "'")
        elif self.peek("num"):
            raw = self.take("num")
        elif self.peek("kw", "true") or self.peek("kw", "false"):
            raw = self.take("kw")
        else:
            raise _Syntax(f"expected a literal value for {column}")
        try:
            return _typed(self.types[column], raw)
        except (ValueError, InvalidOperation) as err:
            raise _Syntax(f"{raw!r} is not a {self.types[column]} value for {column}") from err

    def comparison(self) -> Node:
        column = self.column()
        negated = False
        if self.peek("kw", "is"):
            self.take("kw", "is")
            negated = self.peek("kw", "not")
            if negated:
                self.take("kw", "not")
            self.take("kw", "null")
            return lambda values: (values[column] is None) != negated
        if self.peek("kw", "not"):
            self.take("kw", "not")
            negated = True
        if self.peek("kw", "in"):
            self.take("kw", "in")
            self.take("op", "(")
            options = [self.literal(column)]
            while self.peek("op", ","):
                self.take("op", ",")
                options.append(self.literal(column))
            self.take("op", ")")

            def in_list(values: dict[str, Value]) -> bool | None:
                value = values[column]
                return None if value is None else (value in options) != negated

            return in_list
        if self.peek("kw", "between"):
            self.take("kw", "between")
            low = self.literal(column)
            self.take("kw", "and")
            high = self.literal(column)

            def between(values: dict[str, Value]) -> bool | None:
                value = values[column]
                return None if value is None else (low <= value <= high) != negated

            return between
        if negated:
            raise _Syntax("NOT must be followed by IN or BETWEEN here")
        op = self.take("op")
        if op not in ("=", "!=", "<>", "<", "<=", ">", ">="):
            raise _Syntax(f"expected a comparison operator, found {op!r}")
        right = self.literal(column)
        compare: dict[str, Callable[[Value], bool]] = {
            "=": lambda v: bool(v == right),
            "!=": lambda v: bool(v != right),
            "<>": lambda v: bool(v != right),
            "<": lambda v: bool(v < right),
            "<=": lambda v: bool(v <= right),
            ">": lambda v: bool(v > right),
            ">=": lambda v: bool(v >= right),
        }
        check = compare[op]
        return lambda values: None if values[column] is None else check(values[column])


class _Column(Exception):
    def __init__(self, name: str, *, known: bool):
        self.name = name
        self.known = known


def parse_scope(
    predicate: str,
    *,
    partition_columns: tuple[str, ...],
    schema_fields: list[dict[str, Any]],
    setting: str,
) -> PartitionScope:
    """Parse and validate a partition condition for a table.

    Args:
        predicate: The SQL condition, e.g. ``day >= '2024-06-01'``.
        partition_columns: The table's partition columns.
        schema_fields: The table's top-level schema fields (name and type).
        setting: The setting the condition came from, for errors (``partition_filter``,
            ``where``, a ``maintenance_*`` key).

    Returns:
        The scope.

    Raises:
        ConfigError: When the table is not partitioned, the condition does not parse, names a
            non-partition or unknown column, or compares a column with a literal of another
            type.
    """
    allowed = ", ".join(partition_columns)
    if not partition_columns:
        raise ConfigError(
            setting=setting,
            value=predicate,
            fix="The table is not partitioned; run without a partition condition.",
        )
    if not isinstance(predicate, str) or not predicate.strip():
        raise ConfigError(
            setting=setting,
            value=predicate,
            fix=f"Write a SQL condition over the partition columns ({allowed}).",
        )
    types = {
        str(f["name"]): f["type"] if isinstance(f["type"], str) else "struct" for f in schema_fields
    }
    try:
        parser = _Parser(predicate, types, partition_columns)  # tokenizes: may raise _Syntax
        node = parser.parse()
    except _Column as err:
        kind = "a non-partition column" if err.known else "not a column of the table"
        raise ConfigError(
            setting=setting,
            value=predicate,
            fix=f"'{err.name}' is {kind}; only partition columns may be used: {allowed}.",
        ) from err
    except _Syntax as err:
        raise ConfigError(
            setting=setting,
            value=predicate,
            fix=f"It does not parse ({err}). Write a SQL condition over the partition columns "
            f"({allowed}), e.g. \"{partition_columns[0]} >= '2024-06-01'\".",
        ) from err
    return PartitionScope(predicate, tuple(sorted(parser.referenced)), node, types)
