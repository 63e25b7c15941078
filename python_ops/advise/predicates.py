"""Which upstream columns a query filters and joins on: sqlglot's Spark parser and its scopes.

A query is parsed with sqlglot's Spark dialect and qualified (``sqlglot.optimizer.qualify``,
with the Delta schemas of the maintained tables), so every column names the source it comes
from. Each scope's ``WHERE``, ``HAVING`` and join conditions are then read for predicates:

- ``col = <constant>`` (equality), ``col IN (<constants>)`` (in), ``col BETWEEN``/``<``/``<=``/
  ``>``/``>=`` ``<constant>`` (range), ``a.col = b.col`` and ``col IN (SELECT ...)`` and
  ``JOIN ... USING (col)`` (join);
- a column is followed back to a column of a maintained table (``origins``). A column under a
  function or an expression is not a stored column a file's statistics can skip on, and is
  left out.

What cannot be resolved is reported with its reason: SQL sqlglot cannot parse, ``SELECT *``
over a relation whose columns are unknown, an unqualified column that more than one source
could hold, a column a CTE or view does not project.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from python_ops.advise.bounds import NOT_CONSTANT, Bounds, comparison, value_of
from python_ops.advise.origins import DIALECT, ColumnOrigins, Relation, RelationKey, selects

__all__ = [
    "PredicateKind",
    "QueryReader",
    "Reading",
    "Relation",
    "RelationKey",
    "Scan",
    "ScanPredicate",
    "Use",
]


class PredicateKind(StrEnum):
    """How a reader uses a column."""

    EQUALITY = "equality"
    IN = "in"
    RANGE = "range"
    JOIN = "join"


@dataclass(frozen=True, order=True)
class Use:
    """One predicate on a maintained table's column.

    Attributes:
        model: The maintained model's unique id.
        column: Its column.
        kind: The predicate kind.
    """

    model: str
    column: str
    kind: PredicateKind


@dataclass(frozen=True)
class ScanPredicate:
    """A predicate a file's statistics can be held against: a column and the values admitted.

    Attributes:
        column: The maintained table's column.
        kind: The predicate kind (``join``: a constant the join carries from its other side).
        bounds: The values admitted (conjuncts on the column intersected).
    """

    column: str
    kind: PredicateKind
    bounds: Bounds


@dataclass(frozen=True)
class Scan:
    """One read of a maintained table in a query: the predicates every row read must pass.

    Only the top-level conjuncts of a scope's ``WHERE``, ``HAVING`` and inner joins' ``ON``
    with evaluated constants: a predicate under ``OR`` skips a file only when every branch
    does, and is not here.

    Attributes:
        model: The maintained model's unique id.
        predicates: Per column, what is admitted.
    """

    model: str
    predicates: tuple[ScanPredicate, ...]


@dataclass
class Reading:
    """What one query says: the uses found, the scans with their bounds, the problems met."""

    uses: set[Use] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    scans: list[Scan] = field(default_factory=list)


def _constant(node: exp.Expression) -> bool:
    """A value fixed for the query: no column and no subquery in it."""
    return node.find(exp.Column, exp.Select) is None


def _own(node: exp.Expression) -> Iterator[Any]:
    """The nodes of a condition, not descending into subqueries (scopes of their own)."""
    yield from node.walk(prune=lambda n: isinstance(n, (exp.Subquery, exp.Select)))


class QueryReader(ColumnOrigins):
    """Reads predicates from queries against one project's relations (``ColumnOrigins``)."""

    def read(self, sql: str) -> Reading:
        """Every predicate on a maintained table's column in ``sql``, and the problems met."""
        reading = Reading()
        root = self.parse(sql)
        if isinstance(root, str):
            reading.problems.append(root)
            return reading
        for scope in root.traverse():
            self._read_scope(scope, reading)
        return reading

    def _read_scope(self, scope: Scope, reading: Reading) -> None:
        select = scope.expression
        if not isinstance(select, exp.Select):
            return
        conditions: list[exp.Expression] = []
        for key in ("where", "having"):
            clause = select.args.get(key)
            if clause is not None:
                conditions.append(clause.this)
        for join in select.args.get("joins") or []:
            if join.args.get("on") is not None:
                conditions.append(join.args["on"])
            for name in join.args.get("using") or []:
                self._using(scope, join, name.name, reading)
        for condition in conditions:
            for node in _own(condition):
                self._predicate(scope, node, reading)
        conjuncts = [c for cond in _filtering(select) for c in _conjuncts(cond)]
        reading.scans.extend(self._scans(scope, conjuncts))

    def _using(self, scope: Scope, join: exp.Join, name: str, reading: Reading) -> None:
        for alias in scope.selected_sources:
            if alias == join.alias_or_name or self._projects(scope, alias, name):
                self._note(scope, exp.column(name, table=alias), PredicateKind.JOIN, reading)

    def _projects(self, scope: Scope, alias: str, name: str) -> bool:
        source = scope.sources.get(alias)
        if isinstance(source, Scope):
            return any(s.alias_or_name == name for s in selects(source.expression))
        rel = self._lookup(source) if isinstance(source, exp.Table) else None
        return bool(rel and rel.columns and name in rel.columns)

    def _predicate(self, scope: Scope, node: exp.Expression, reading: Reading) -> None:
        if isinstance(node, (exp.EQ, exp.NullSafeEQ)):
            left, right = node.this, node.expression
            if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                if left.table != right.table:
                    self._note(scope, left, PredicateKind.JOIN, reading)
                    self._note(scope, right, PredicateKind.JOIN, reading)
                return
            for col, other in ((left, right), (right, left)):
                if isinstance(col, exp.Column) and _constant(other):
                    self._note(scope, col, PredicateKind.EQUALITY, reading)
        elif isinstance(node, exp.In) and isinstance(node.this, exp.Column):
            if node.args.get("query") is not None:
                self._note(scope, node.this, PredicateKind.JOIN, reading)
            elif all(_constant(e) for e in node.expressions):
                self._note(scope, node.this, PredicateKind.IN, reading)
        elif isinstance(node, exp.Between) and isinstance(node.this, exp.Column):
            if _constant(node.args["low"]) and _constant(node.args["high"]):
                self._note(scope, node.this, PredicateKind.RANGE, reading)
        elif isinstance(node, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
            left, right = node.this, node.expression
            for col, other in ((left, right), (right, left)):
                if isinstance(col, exp.Column) and _constant(other):
                    self._note(scope, col, PredicateKind.RANGE, reading)

    def _note(
        self, scope: Scope, column: exp.Column, kind: PredicateKind, reading: Reading
    ) -> None:
        found = self.origins(scope, column.table, column.name, 0, column)
        if isinstance(found, str):
            reading.problems.append(f"{kind} predicate on {column.sql(DIALECT)}: {found}")
            return
        reading.uses.update(Use(model, name, kind) for model, name in found)

    def _scans(self, scope: Scope, conjuncts: list[exp.Expression]) -> list[Scan]:
        """The scope's constant conjuncts, per maintained table they reach, as scans."""
        local, joins = _local_bounds(conjuncts)
        carried: dict[tuple[str, str], Bounds] = {}
        for left, right in joins:  # a.x = b.y and b.y = 5: the join carries 5 to a.x
            for to, of in ((left, right), (right, left)):
                if of in local and to not in local:
                    carried[to] = local[of][1]
        per_model: dict[str, dict[str, ScanPredicate]] = {}
        items = [(key, kind, b) for key, (kind, b) in local.items()]
        items += [(key, PredicateKind.JOIN, b) for key, b in carried.items()]
        for (alias, name), kind, bounds in items:
            self.aggregated = False
            found = self.origins(scope, alias, name, 0, None)
            if isinstance(found, str) or (kind is PredicateKind.JOIN and self.aggregated):
                continue  # never through an aggregate: its join runs after the whole scan
            for model, column in found:
                preds = per_model.setdefault(model, {})
                before = preds.get(column)
                merged = before.bounds.intersect(bounds) if before else bounds
                preds[column] = ScanPredicate(column, before.kind if before else kind, merged)
        return [Scan(m, tuple(p[c] for c in sorted(p))) for m, p in sorted(per_model.items())]


def _filtering(select: exp.Select) -> list[exp.Expression]:
    """The conditions every row of the scope passes: WHERE, HAVING, inner joins' ON."""
    out = [select.args[k].this for k in ("where", "having") if select.args.get(k) is not None]
    for join in select.args.get("joins") or []:
        if join.args.get("on") is not None and not join.side and join.kind in ("", "INNER"):
            out.append(join.args["on"])
    return out


def _conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    while isinstance(condition, exp.Paren):
        condition = condition.this
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    return [condition]


ColumnKey = tuple[str, str]  # (table alias, column name) in the scope


def _local_bounds(
    conjuncts: list[exp.Expression],
) -> tuple[dict[ColumnKey, tuple[PredicateKind, Bounds]], list[tuple[ColumnKey, ColumnKey]]]:
    """Per column of the scope, the bounds its constant conjuncts give; and its equi-joins."""
    local: dict[ColumnKey, tuple[PredicateKind, Bounds]] = {}
    joins: list[tuple[ColumnKey, ColumnKey]] = []
    for node in conjuncts:
        left, right = node.this, node.args.get("expression")
        if (
            isinstance(node, exp.EQ)
            and isinstance(left, exp.Column)
            and isinstance(right, exp.Column)
            and left.table != right.table
        ):
            joins.append(((left.table, left.name), (right.table, right.name)))
            continue
        found = _bounds_of(node)
        if found is None:
            continue
        column, kind, bounds = found
        key = (column.table, column.name)
        before = local.get(key)
        local[key] = (before[0], before[1].intersect(bounds)) if before else (kind, bounds)
    return local, joins


def _bounds_of(node: exp.Expression) -> tuple[exp.Column, PredicateKind, Bounds] | None:
    """A conjunct's column, kind and bounds, when it compares a column with constants."""
    if isinstance(node, exp.In) and isinstance(node.this, exp.Column):
        values = [value_of(e) for e in node.expressions]
        if not values or node.args.get("query") is not None or NOT_CONSTANT in values:
            return None
        try:
            return node.this, PredicateKind.IN, Bounds(min(values), max(values))
        except TypeError:
            return None
    if isinstance(node, exp.Between) and isinstance(node.this, exp.Column):
        low, high = value_of(node.args["low"]), value_of(node.args["high"])
        if NOT_CONSTANT in (low, high):
            return None
        return node.this, PredicateKind.RANGE, Bounds(low, high)
    if not isinstance(node, (exp.EQ, exp.NullSafeEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        return None
    equal = isinstance(node, (exp.EQ, exp.NullSafeEQ))
    kind = PredicateKind.EQUALITY if equal else PredicateKind.RANGE
    for col, other, on_left in (
        (node.this, node.expression, True),
        (node.expression, node.this, False),
    ):
        if isinstance(col, exp.Column) and _constant(other):
            value = value_of(other)
            if value is not NOT_CONSTANT and value is not None:
                return col, kind, comparison(type(node), value, column_on_left=on_left)
    return None
