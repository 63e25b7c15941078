"""Where a column of a query comes from: followed to a maintained table's stored column.

The query is parsed with sqlglot's Spark dialect and qualified (``sqlglot.optimizer.qualify``,
with the Delta schemas of the maintained tables and the columns the project's views select), so
every column names its source; a column is then followed through CTEs, table aliases, derived
tables, correlated subqueries (to the outer query), set operations (by position) and the views
the project builds. What cannot be followed is answered with the reason, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

DIALECT = "spark"
MAX_DEPTH = 20  # views and CTEs followed inside each other, at most


@dataclass(frozen=True)
class Relation:
    """A relation a query may name, as the manifest and the Delta log know it.

    Attributes:
        unique_id: The dbt node (or source) it is.
        maintained: Whether it is a maintained Delta table (its columns are evidence).
        columns: Its columns, when known (a maintained table's Delta schema).
        sql: For a view, its compiled SQL (its columns are followed into it).
    """

    unique_id: str
    maintained: bool
    columns: tuple[str, ...] | None = None
    sql: str | None = None


RelationKey = tuple[str, str]  # (schema, name), lower case
Lookup = Callable[[exp.Table], Relation | None]


def relation_lookup(relations: Mapping[RelationKey, Relation]) -> Lookup:
    """A function naming the relation a table reference in SQL is (by schema and name)."""

    def lookup(table: exp.Table) -> Relation | None:
        return relations.get((table.db.lower(), table.name.lower()))

    return lookup


def _schema(relations: Mapping[RelationKey, Relation]) -> dict[str, dict[str, dict[str, str]]]:
    schema: dict[str, dict[str, dict[str, str]]] = {}
    for (db, name), rel in relations.items():
        if rel.columns:
            schema.setdefault(db, {})[name] = {c: "string" for c in rel.columns}
    return schema


def selects(node: Any) -> list[Any]:
    """A query's projections (a SELECT's, or a set operation's left-most)."""
    return list(getattr(node, "selects", []))


class ColumnOrigins:
    """Follows columns of queries to the maintained tables of one project.

    Args:
        relations: Every relation the project's SQL may name, by (schema, name).
    """

    def __init__(self, relations: Mapping[RelationKey, Relation]) -> None:
        self._relations = dict(relations)
        self._views: dict[str, Scope | str] = {}
        self._schema = _schema(self._relations)
        self._learn_view_columns()
        self._lookup = relation_lookup(self._relations)
        self.aggregated = False  # set when a column followed passes a GROUP BY or aggregate

    def _learn_view_columns(self) -> None:
        """Give each view the columns its SQL selects (views over views: a few passes)."""
        for _ in range(5):
            learnt = False
            for key, rel in list(self._relations.items()):
                if rel.maintained or rel.columns is not None or rel.sql is None:
                    continue
                root = self.parse(rel.sql)
                if isinstance(root, str) or not isinstance(root.expression, exp.Query):
                    continue
                names = [s.alias_or_name for s in selects(root.expression)]
                if names and not any(
                    s.find(exp.Star) or isinstance(s, exp.Star) for s in selects(root.expression)
                ):
                    self._relations[key] = Relation(rel.unique_id, False, tuple(names), rel.sql)
                    learnt = True
            if not learnt:
                return
            self._schema = _schema(self._relations)

    def parse(self, sql: str) -> Scope | str:
        """The qualified root scope of ``sql``, or why it cannot be read."""
        try:
            statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
        except SqlglotError as err:
            return f"unparsable SQL ({str(err).splitlines()[0][:200]})"
        if len(statements) != 1:
            return f"{len(statements)} statements, not one query"
        tree = statements[0]
        for column in tree.find_all(exp.Column):
            column.meta["unqualified"] = not column.table
        try:
            tree = self._qualify(tree.copy(), columns=True)
        except SqlglotError:
            # a column sqlglot will not place (a correlated subquery over a relation whose
            # columns are unknown): tables are still qualified, such columns stay unplaced and
            # are reported where a predicate uses them
            try:
                tree = self._qualify(tree, columns=False)
            except SqlglotError as err:
                return f"cannot qualify it ({str(err).splitlines()[0][:200]})"
        scopes = traverse_scope(tree)
        if not scopes or not isinstance(scopes[-1].expression, exp.Query):
            return "unparsable SQL: no query in it"
        return scopes[-1]

    def _qualify(self, tree: Any, *, columns: bool) -> Any:
        return qualify(
            tree,
            schema=dict(self._schema),
            dialect=DIALECT,
            qualify_columns=columns,
            validate_qualify_columns=False,
            quote_identifiers=False,
            identify=False,
        )

    def origins(
        self,
        scope: Scope,
        alias: str,
        name: str,
        depth: int,
        column: exp.Column | None = None,
    ) -> list[tuple[str, str]] | str:
        """The maintained tables' columns a column of ``scope`` is, or why it cannot be told.

        Returns:
            (model unique id, column) pairs (empty: not a maintained table's stored column),
            or the reason it is unresolved.
        """
        if depth > MAX_DEPTH:
            return "followed too deep (views or CTEs nested more than 20 levels)"
        if not alias and len(scope.selected_sources) == 1 and not scope.can_be_correlated:
            alias = next(iter(scope.selected_sources))  # one source, no outer query: it is its
        owner: Scope | None = scope
        while owner is not None and alias not in owner.sources:
            owner = owner.parent  # a correlated subquery's outer column
        if not alias or owner is None:
            return "an ambiguous column: no source in scope holds it for certain"
        if column is not None and column.meta.get("unqualified") and self._unsure(owner):
            return (
                "an ambiguous column: written without a table, in a query over several sources "
                "whose columns are not all known"
            )
        source = owner.sources[alias]
        if isinstance(source, exp.Table):
            return self._table_column(source, name, depth)
        return self._scope_column(source, name, depth)

    def _unsure(self, scope: Scope) -> bool:
        """Whether an unqualified column of ``scope`` could belong to more than one source."""
        if len(scope.selected_sources) < 2:
            return False
        for source in scope.sources.values():
            if isinstance(source, exp.Table):
                rel = self._lookup(source)
                if rel is None or not rel.columns:
                    return True
            elif isinstance(source, Scope) and any(
                isinstance(s, exp.Star) or s.find(exp.Star) for s in selects(source.expression)
            ):
                return True
        return False

    def _table_column(self, table: exp.Table, name: str, depth: int) -> list[tuple[str, str]] | str:
        rel = self._lookup(table)
        if rel is None:
            return []  # a relation the project does not build: not evidence, not a problem
        if rel.maintained:
            if rel.columns is not None and name not in rel.columns:
                return f"{table.sql(DIALECT)} has no column {name}"
            return [(rel.unique_id, name)]
        if rel.sql is None:
            return []
        view = self._views.get(rel.unique_id)
        if view is None:
            view = self._views[rel.unique_id] = self.parse(rel.sql)
        if isinstance(view, str):
            return f"through {rel.unique_id}: {view}"
        return self._scope_column(view, name, depth + 1)

    def _scope_column(self, scope: Scope, name: str, depth: int) -> list[tuple[str, str]] | str:
        if scope.set_operation_scopes:  # set operations match columns by position
            names = [p.alias_or_name for p in selects(scope.expression)]
            if name not in names:
                return f"column {name} is not among the columns its source selects"
            return self._position(scope, names.index(name), depth)
        select = scope.expression
        if not isinstance(select, exp.Select):
            return f"a {type(select).__name__} source is not followed"
        for index, projection in enumerate(selects(select)):
            if projection.alias_or_name == name and not isinstance(projection, exp.Star):
                return self._position(scope, index, depth)
        if any(isinstance(s, exp.Star) or s.find(exp.Star) for s in selects(select)):
            if not self._may_reach_maintained(scope):
                return []  # a star over relations that are no maintained table
            return "SELECT * over a relation whose columns are not known"
        return f"column {name} is not among the columns its source selects"

    def _may_reach_maintained(self, scope: Scope) -> bool:
        for _node, source in scope.selected_sources.values():
            if isinstance(source, Scope):
                return True
            rel = self._lookup(source)
            if rel is not None and (rel.maintained or rel.sql is not None):
                return True
        return False

    def _position(self, scope: Scope, index: int, depth: int) -> list[tuple[str, str]] | str:
        """The origins of the ``index``-th column a scope selects (each branch of a union)."""
        if scope.set_operation_scopes:
            found: list[tuple[str, str]] = []
            for branch in scope.set_operation_scopes:
                part = self._position(branch, index, depth + 1)
                if isinstance(part, str):
                    return part
                found += part
            return found
        projections = selects(scope.expression)
        if index >= len(projections) or isinstance(projections[index], exp.Star):
            return "SELECT * over a relation whose columns are not known"
        projection = projections[index]
        if scope.expression.args.get("group") or scope.expression.find(exp.AggFunc):
            self.aggregated = True
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star):
            return self.origins(scope, inner.table, inner.name, depth + 1, inner)
        return []  # an expression, not a stored column
