"""A node's compiled SQL, wherever dbt put it, never an earlier run's: the advisor's one resolver.

The command line (``python -m python_ops advise``), ``dbt run-operation maintenance_advise`` and
the ``auto`` post-hook all reach a reader's SQL through ``CompiledSql.resolve``, in this order:

1. the manifest's ``compiled_code`` (``dbt compile``, ``run`` and ``build`` write it into the
   manifest at their end; ``dbt run-operation``, ``ls`` and ``parse`` rewrite the manifest at
   their start without it, and a post-hook reads the manifest its own run wrote at its start);
2. the file dbt wrote under ``<target>/compiled/<package>/``, laid out as dbt lays it
   (``get_target_write_path``): a node alone in its file at its ``original_file_path``; a node
   among others in one file at ``<original_file_path>/<path>``, so a generic test defined in
   ``models/marts/schema.yml`` is ``schema.yml/<the test's path>.sql``, a file in a folder
   named after the yml;
3. for a snapshot (dbt writes no compiled file for one), the SQL its run wrote under
   ``<target>/run/``: the query of its first run's ``CREATE TABLE ... AS``. A later run's file is
   dbt's ``MERGE`` from a staging table, which holds no query: that is reported.

The stale rule: SQL compiled before the node's source file last changed is an earlier run's SQL
of a source edited since, and is never read. A file counts as compiled when its mtime says; the
manifest's ``compiled_code`` as compiled at its ``metadata.generated_at`` (the parse that
compiled it). A file newer than its source is what dbt compiles from that source today (macros
and vars changed since are not seen: no file says when). The time of the manifest itself is no
rule: a ``dbt run-operation`` after ``dbt compile`` writes a manifest newer than every compiled
file, all of them current.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from python_ops.advise.origins import DIALECT

_JINJA = re.compile(r"\{\{|\{%|\{#")


@dataclass(frozen=True)
class NodeSql:
    """A node's compiled SQL, or why there is none to read.

    Attributes:
        unique_id: The dbt node.
        sql: The compiled SQL (None when it cannot be read).
        problem: Why there is no SQL to parse ('' when there is).
        origin: Where the SQL came from: 'manifest' or the file's path under the project ('' when
            there is none).
    """

    unique_id: str
    sql: str | None
    problem: str = ""
    origin: str = ""


def layout_path(node: Mapping[str, Any]) -> str:
    """The node's path under ``<target>/compiled/<package>/`` (and ``run/``), as dbt writes it.

    Args:
        node: A manifest node.

    Returns:
        ``original_file_path`` when the node is alone in its file, else
        ``<original_file_path>/<path>`` (a generic test in a yml: a folder named after it).
    """
    original = str(node.get("original_file_path") or "")
    own = str(node.get("path") or original)
    if os.path.basename(own) == os.path.basename(original):
        return original
    return os.path.join(original, own)


def _generated_at(manifest: Mapping[str, Any]) -> float | None:
    stamp = (manifest.get("metadata") or {}).get("generated_at")
    try:
        when = datetime.fromisoformat(str(stamp)) if stamp else None
    except ValueError:
        return None
    if when is None:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()  # dbt: UTC


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _query_of_run_sql(text: str) -> str | None:
    """The query a snapshot's run SQL holds: its ``CREATE TABLE ... AS`` query, else None."""
    try:
        statements = [s for s in sqlglot.parse(text, read=DIALECT) if s is not None]
    except SqlglotError:
        return text  # the reader reports it as unparsable, with sqlglot's words
    if len(statements) == 1 and isinstance(statements[0], exp.Query):
        return text
    if len(statements) == 1 and isinstance(statements[0], exp.Create):
        query = statements[0].expression
        if isinstance(query, exp.Query):
            return str(query.sql(dialect=DIALECT))
    return None


@dataclass(frozen=True)
class _Found:
    """One place a node's SQL may be: its text (None: nothing there) and when it was compiled.

    Attributes:
        kind: 'manifest', 'compiled' (``target/compiled``) or 'run' (``target/run``).
        origin: 'manifest', or the file's path under the project directory.
        text: What is there (None: nothing).
        compiled_at: When it was compiled (None: unknown).
    """

    kind: str
    origin: str
    text: str | None
    compiled_at: float | None

    def read(self, source: str, changed: float | None) -> tuple[str | None, str]:
        """``(sql, '')`` to read here, or ``(None, problem)``: stale, or a snapshot run's MERGE.

        Args:
            source: The node's source file, as the manifest names it.
            changed: When that file last changed (None: unknown).
        """
        if changed is not None and self.compiled_at is not None and self.compiled_at < changed:
            return None, (
                f"compiled before {source} last changed ({self.origin} is an earlier run's "
                "SQL, not read): run dbt compile"
            )
        text = str(self.text)
        if self.kind != "run":
            return text, ""
        query = _query_of_run_sql(text)
        if query is None:
            return None, (
                f"{self.origin} holds dbt's MERGE of a later snapshot run, not the snapshot's "
                "query (the manifest of dbt compile, run or build holds it)"
            )
        return query, ""


@dataclass(frozen=True)
class CompiledSql:
    """The compiled-SQL resolver of one project: every front end of the advisor uses it.

    Attributes:
        project_dir: The dbt project directory.
        target_path: dbt's target path (relative to ``project_dir``, or absolute).
        project_name: The root project (``metadata.project_name``; other packages' sources are
            under ``dbt_packages/``), None when the manifest does not say.
        manifest_time: The manifest's ``generated_at`` as a POSIX time (None: unknown).
    """

    project_dir: str
    target_path: str = "target"
    project_name: str | None = None
    manifest_time: float | None = None

    @classmethod
    def of(
        cls, manifest: Mapping[str, Any], project_dir: str, target_path: str = "target"
    ) -> CompiledSql:
        """The resolver for ``manifest`` (read from ``<project_dir>/<target_path>``)."""
        name = (manifest.get("metadata") or {}).get("project_name")
        return cls(project_dir, target_path, str(name) if name else None, _generated_at(manifest))

    def resolve(self, node: Mapping[str, Any]) -> NodeSql:
        """The node's current compiled SQL (module docstring: where, in which order), or why not.

        Args:
            node: A manifest node.

        Returns:
            The SQL and where it came from, or the problem that keeps the advisor from it.
        """
        uid = str(node.get("unique_id"))
        if node.get("language") == "python":
            return NodeSql(
                uid, None, "a Python model: its DataFrame code is not SQL the advisor reads"
            )
        source_file = self._source_file(node)
        changed = _mtime(source_file) if source_file else None
        problems: list[str] = []
        places = self._places(node)
        for found in places:
            if found.text is None:
                continue
            sql, problem = found.read(str(node.get("original_file_path")), changed)
            if sql is None:
                problems.append(problem)
            elif _JINJA.search(sql):
                return NodeSql(uid, None, "Jinja left uncompiled in its SQL", found.origin)
            else:
                return NodeSql(uid, sql, "", found.origin)
        if problems:
            return NodeSql(uid, None, problems[0])
        files = " or ".join(f.origin for f in places if f.kind != "manifest")
        return NodeSql(uid, None, f"not compiled yet (no compiled SQL in the manifest, no {files})")

    def _places(self, node: Mapping[str, Any]) -> list[_Found]:
        code = node.get("compiled_code") if node.get("compiled") else None
        places = [_Found("manifest", "manifest", str(code) if code else None, self.manifest_time)]
        kinds = ("compiled", "run") if node.get("resource_type") == "snapshot" else ("compiled",)
        for kind in kinds:
            full = os.path.join(
                self.project_dir,
                self.target_path,
                kind,
                str(node.get("package_name")),
                layout_path(node),
            )
            origin = os.path.relpath(full, self.project_dir)
            places.append(_Found(kind, origin, _read(full), _mtime(full)))
        return places

    def _source_file(self, node: Mapping[str, Any]) -> str | None:
        original = node.get("original_file_path")
        if not original:
            return None
        package = node.get("package_name")
        if self.project_name and package and package != self.project_name:
            return os.path.join(self.project_dir, "dbt_packages", str(package), str(original))
        return os.path.join(self.project_dir, str(original))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None
