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

from python_ops.advise.origins import DIALECT, ColumnOrigins, Relation, RelationKey, selects

__all__ = ["PredicateKind", "QueryReader", "Reading", "Relation", "RelationKey", "Use"]


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


@dataclass
class Reading:
    """What one query says: the uses found and the problems met."""

    uses: set[Use] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


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
