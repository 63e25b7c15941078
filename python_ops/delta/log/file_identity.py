r"""A file action's identity: the key Delta replays ``add`` and ``remove`` actions by.

Delta on Spark reconstructs a snapshot by canonicalising each action's path
(``DeltaLog.getCanonicalPathFunction``: ``new Path(new URI(path))``, an absolute path without a
scheme qualified with the table's file system, anything else left as the URI spells it), grouping
the actions by that *string* (``spark.databricks.delta.snapshotPartitions``, 50 by default) and
then, within a group, keying them by ``java.net.URI`` of it with the deletion vector's unique id
(``FileAction.pathAsUri`` in ``InMemoryLogReplay``). ``java.net.URI`` compares paths in their raw,
*encoded* form. So ``p=café/x`` and ``p=caf%C3%A9/x`` are two different files to Delta (and to
delta-rs), although both name one physical file; a ``remove`` spelled one way cancels nothing
spelled the other way. Two strings that are one URI (``%c3`` and ``%C3``) cancel only when the
grouping happens to put them together (measured against Delta 4.4:
``tests/integration/test_file_identity_delta.py``).

``delta_identity`` is the canonical string: actions with one string always meet, so it is the
key replay uses here. ``uri_class`` is the URI's equality class: a ``remove`` whose class matches
a live ``add`` of another string is *ambiguous* (Delta may or may not cancel the add), and the
snapshot says so: VACUUM keeps the file, a rewrite refuses the table. ``relativize``
(``actions``) is a different thing: the *physical* file an action maps to, used only for I/O
and for what VACUUM must protect.

A path ``java.net.URI`` refuses (a raw space, ``"``, ``<``, ``>``, ``\\``, ``^``, `````, ``{``,
``|``, ``}``, ``[``, ``]``, a control or Unicode space character, a ``%`` not followed by two hex
digits, a colon in a first segment that is no scheme) cannot be read by Delta either; a raw
``?`` or ``#`` would make the rest a query or fragment, which no writer produces. All of these
are refused here (``DeltaLogError``), never guessed at.
"""

from __future__ import annotations

import re
import unicodedata

from python_ops.errors import DeltaLogError

# Characters that cannot appear raw in the path of a java.net.URI (plus '?' and '#', which
# would end it): ASCII controls, space and the excluded punctuation.
_ILLEGAL_ASCII = re.compile(r'[\x00-\x20"<>\\^`{|}\[\]?#\x7f]')
# A path whose identity is its own spelling: relative, plain ASCII, nothing to normalise.
_PLAIN = re.compile(r"[A-Za-z0-9_\-=.+,;@&$!~*'()]+(?:/[A-Za-z0-9_\-=.+,;@&$!~*'()]+)*")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_ESCAPE = re.compile(r"%(..)")
_HEX = frozenset("0123456789abcdefABCDEF")


def _refuse(path: str, problem: str) -> DeltaLogError:
    return DeltaLogError(
        f"log path '{path}' {problem}: java.net.URI refuses it, so Delta cannot read this "
        "table either; nothing was done"
    )


def _check_characters(path: str) -> None:
    """Refuse what ``java.net.URI`` refuses in a path (see the module docstring)."""
    bad = _ILLEGAL_ASCII.search(path)
    if bad is not None:
        raise _refuse(path, f"holds the character {bad.group()!r} unescaped")
    if not path.isascii():
        for ch in path:
            if ord(ch) >= 0x80 and (
                unicodedata.category(ch) in ("Zs", "Zl", "Zp", "Cc") or 0x80 <= ord(ch) <= 0x9F
            ):
                raise _refuse(path, f"holds the character {ch!r} unescaped")
    at = path.find("%")
    while at != -1:
        escape = path[at + 1 : at + 3]
        if len(escape) != 2 or not set(escape) <= _HEX:
            raise _refuse(path, "has a malformed percent-escape")
        at = path.find("%", at + 3)


def _normalise(path: str) -> str:
    """``java.net.URI.normalize`` of a path: ``.`` dropped, ``..`` resolved, ``//`` collapsed."""
    absolute = path.startswith("/")
    names = path.split("/")
    trailing = len(names) > 1 and names[-1] in ("", ".", "..")
    out: list[str] = []
    for name in names:
        if name in ("", "."):
            continue
        if name == ".." and out and out[-1] != "..":
            out.pop()
            continue
        out.append(name)
    body = "/".join(out)
    if trailing and out:
        body += "/"
    return ("/" + body) if absolute else body


def _upper_escapes(text: str) -> str:
    """Percent-escapes with upper-case hex digits (``URI.equals`` ignores their case)."""
    return _ESCAPE.sub(lambda m: "%" + m.group(1).upper(), text) if "%" in text else text


def _qualifier(table_root: str) -> str:
    """What Delta's ``makeQualified`` puts before an absolute path in this table."""
    match = _SCHEME.match(table_root)
    if match is None or len(match.group(1)) == 1:  # a local path (or a drive letter)
        return "file://"
    rest = table_root[match.end() :]
    if rest.startswith("//"):
        authority = rest[2:].split("/", 1)[0]
        return f"{match.group(1)}://{authority}"
    return "file://"


def delta_identity(path: str, table_root: str) -> str:
    """The canonical path string Delta replays a file action by (without its deletion vector).

    Delta's ``getCanonicalPathFunction``: ``new Path(new URI(path))``, which normalises the
    path (``.`` dropped, ``..`` resolved, ``//`` collapsed); an absolute path without a scheme
    qualified with the table's file system (``/t/x`` becomes ``file:///t/x``); every other
    character kept as the log spells it. Actions are grouped by this string before they are
    replayed, so two actions with one string always meet; two strings that are one URI
    (``uri_class``) meet only by chance of the grouping (``ambiguous``).

    Args:
        path: The path exactly as the log spells it.
        table_root: The normalised table location (qualifies absolute paths without a scheme).

    Returns:
        The canonical string.

    Raises:
        DeltaLogError: When ``java.net.URI`` would refuse the path.
    """
    if _PLAIN.fullmatch(path) is not None and all(n not in (".", "..") for n in path.split("/")):
        return path
    _check_characters(path)
    scheme = _SCHEME.match(path)
    if scheme is not None:
        rest = path[scheme.end() :]
        if rest.startswith("//"):
            authority, _, tail = rest[2:].partition("/")
            normal = _normalise("/" + tail)
            if not authority and normal != "/" + tail:
                return f"{scheme.group(1)}:{normal}"  # java.net.URI rebuilds it without '//'
            return f"{scheme.group(1)}://{authority}{normal}"
        return f"{scheme.group(1)}:{_normalise(rest)}"
    first = path.split("/", 1)[0]
    if ":" in first:
        raise _refuse(path, "has a colon in its first segment that is not a URI scheme")
    if path.startswith("/"):
        return _qualifier(table_root) + _normalise(path)
    return _normalise(path)


def uri_class(identity: str) -> str:
    """What ``java.net.URI.equals`` compares of a canonical string (``delta_identity``).

    Hex digits of escapes in one case, the scheme and host in lower case, ``file:///x`` as
    ``file:/x`` (an empty authority is none). Two identities of one class are one file to
    Delta's replay only when its grouping puts them together.

    Args:
        identity: A ``delta_identity`` string.

    Returns:
        The class's spelling.
    """
    scheme = _SCHEME.match(identity)
    if scheme is None:
        return _upper_escapes(identity)
    rest = identity[scheme.end() :]
    if rest.startswith("//"):
        authority, _, tail = rest[2:].partition("/")
        head = f"{scheme.group(1).lower()}:" + (f"//{authority.lower()}" if authority else "")
        return head + _upper_escapes("/" + tail)
    return f"{scheme.group(1).lower()}:" + _upper_escapes(rest)
