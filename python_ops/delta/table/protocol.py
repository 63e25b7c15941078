"""The protocol gate: which Delta table features each op understands, and refusal of the rest.

Every op asks ``check_protocol`` before it lists, writes or deletes anything. A table whose
protocol names a feature this project has not decided on, a protocol version above the known
ones, or a feature whose rule for the op is "refused" stops the op with
``UnsupportedFeatureError`` (exit 2 on the command line): a maintenance tool that deletes data
must never guess what an unknown feature means.

The decisions are ``features.FEATURES``, one table; this module reads a protocol action's
features (explicit lists, or implied by legacy versions) and applies that table to them, asking
the writer that will run (``Writer.DELTA`` when Delta's own SQL rewrites the table).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.delta.table.features import FEATURES, Op, Verdict, Writer
from python_ops.errors import UnsupportedFeatureError

MAX_READER_VERSION = 3
MAX_WRITER_VERSION = 7
# Features implied by legacy (pre-table-features) protocol versions.
_LEGACY_READER = {2: ("columnMapping",)}
_LEGACY_WRITER = {
    2: ("appendOnly", "invariants"),
    3: ("checkConstraints",),
    4: ("changeDataFeed", "generatedColumns"),
    5: ("columnMapping",),
    6: ("identityColumns",),
}


@dataclass(frozen=True)
class TableFeatures:
    """The features a protocol action enables (explicit lists, or implied by legacy versions).

    Attributes:
        min_reader_version: The protocol's reader version.
        min_writer_version: The protocol's writer version.
        reader: Reader-writer features.
        writer: Every writer feature (reader-writer ones included).
    """

    min_reader_version: int
    min_writer_version: int
    reader: frozenset[str]
    writer: frozenset[str]

    @property
    def all(self) -> frozenset[str]:
        """Every feature of the table."""
        return self.reader | self.writer


def table_features(protocol: Mapping[str, Any], *, location: str) -> TableFeatures:
    """The features a ``protocol`` action enables.

    Worked out once per distinct protocol (a process's tables share a few): every op and every
    decision asks.

    Args:
        protocol: The table's ``protocol`` action.
        location: The table, for errors.

    Returns:
        The table's features.

    Raises:
        UnsupportedFeatureError: For a protocol version above the known ones, or feature lists
            that contradict the versions.
    """
    key = _protocol_key(protocol)
    found = _known_features(key) if key is not None else _features(*_raw_key(protocol))
    if isinstance(found, TableFeatures):
        return found
    raise UnsupportedFeatureError(
        table=location, feature=found.feature, op=None, reason=found.reason
    )


@dataclass(frozen=True)
class _Refused:
    """A feature, or a protocol version, no op here understands (or this op refuses)."""

    feature: str
    reason: str


def _raw_key(protocol: Mapping[str, Any]) -> tuple[Any, Any, Any, Any]:
    return (
        protocol.get("minReaderVersion"),
        protocol.get("minWriterVersion"),
        protocol.get("readerFeatures"),
        protocol.get("writerFeatures"),
    )


def _protocol_key(protocol: Mapping[str, Any]) -> tuple[Any, Any, Any, Any] | None:
    """The protocol's fields as a hashable key (None: fields no cache can hold)."""
    reader, writer, reader_list, writer_list = _raw_key(protocol)
    try:
        key = (
            reader,
            writer,
            None if reader_list is None else tuple(reader_list),
            None if writer_list is None else tuple(writer_list),
        )
        hash(key)
    except TypeError:
        return None
    return key


@functools.lru_cache(maxsize=256)
def _known_features(key: tuple[Any, Any, Any, Any]) -> TableFeatures | _Refused:
    return _features(*key)


def _features(
    reader_raw: Any, writer_raw: Any, reader_list: Any, writer_list: Any
) -> TableFeatures | _Refused:
    """The features of a protocol's fields, or (feature, reason) refusing them."""
    reader_version = int(reader_raw or 0)
    writer_version = int(writer_raw or 0)
    problem = None
    if reader_version > MAX_READER_VERSION or writer_version > MAX_WRITER_VERSION:
        problem = (
            f"protocol version reader {reader_version} / writer {writer_version} is above the "
            f"newest this project knows (reader {MAX_READER_VERSION} / writer "
            f"{MAX_WRITER_VERSION})"
        )
    elif reader_version < 1 or writer_version < 1:
        problem = f"protocol version reader {reader_version} / writer {writer_version} is invalid"
    elif reader_version != 3 and reader_list:
        problem = "readerFeatures are listed although minReaderVersion is not 3"
    elif writer_version != 7 and writer_list:
        problem = "writerFeatures are listed although minWriterVersion is not 7"
    elif reader_version == 3 and (writer_version != 7 or reader_list is None):
        problem = "minReaderVersion 3 requires minWriterVersion 7 and a readerFeatures list"
    elif writer_version == 7 and writer_list is None:
        problem = "minWriterVersion 7 requires a writerFeatures list"
    if problem:
        return _Refused(f"protocol {reader_version}/{writer_version}", problem)
    if reader_version == 3:
        reader = frozenset(reader_list or ())
    else:
        reader = frozenset(f for v, fs in _LEGACY_READER.items() if reader_version >= v for f in fs)
    if writer_version == 7:
        writer = frozenset(writer_list or ())
    else:
        writer = frozenset(f for v, fs in _LEGACY_WRITER.items() if writer_version >= v for f in fs)
    undeclared = sorted(reader - writer) if writer_version == 7 else []
    if undeclared:
        return _Refused(
            undeclared[0],
            "a reader feature must also be listed in writerFeatures; the protocol action "
            "is inconsistent",
        )
    return TableFeatures(reader_version, writer_version, reader, writer | reader)


def check_protocol(
    protocol: Mapping[str, Any], op: Op, *, location: str, writer: Writer = Writer.DELTA_RS
) -> tuple[str, ...]:
    """Refuse ``op`` unless every feature of the table is supported for it.

    Args:
        protocol: The table's ``protocol`` action.
        op: The op about to run.
        location: The table, for errors.
        writer: Who will rewrite, checkpoint and commit (``Writer.DELTA`` when Delta's own
            writer runs the rewrite ops or the checkpoint); the other ops are ours and
            delta-rs's.

    Returns:
        The features whose rule applies to this op (sorted), for results and logs.

    Raises:
        UnsupportedFeatureError: For an unknown feature or protocol version, or a feature the
            op refuses; raised before anything is listed, written or deleted.
    """
    ruled = _ruled(table_features(protocol, location=location), op, writer)
    if isinstance(ruled, tuple):
        return ruled
    raise UnsupportedFeatureError(
        table=location, feature=ruled.feature, op=op.value, reason=ruled.reason
    )


@functools.lru_cache(maxsize=256)
def _ruled(features: TableFeatures, op: Op, writer: Writer) -> tuple[str, ...] | _Refused:
    """The features whose rule applies to ``op`` (sorted), or the first one refusing it."""
    ruled = []
    for name in sorted(features.all):
        feature = FEATURES.get(name)
        if feature is None:
            return _Refused(
                name, "the feature is unknown to this project, so no op can know what it requires"
            )
        decision = feature.decision(op, writer)
        if decision.verdict is Verdict.REFUSED:
            return _Refused(name, decision.reason)
        if decision.verdict is Verdict.RULE:
            ruled.append(name)
    return tuple(ruled)
