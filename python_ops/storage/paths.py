"""What a path below a table root *is*: one algebra for the log, listings, reports and deletes.

Every path an op compares or deletes is a *relative path*: ``/``-separated names below the
table root. Only one spelling of each is *canonical*: no empty name (``a//b``), no ``.`` or
``..`` name, no leading or trailing ``/``. Delta reads a path from the log through Hadoop's
``Path`` (``new Path(new URI(path))``: percent-escapes decoded, ``//`` collapsed, ``.`` dropped,
``..`` resolved), so a log path maps to at most one canonical path (``canonical``).

The rule that keeps other spellings from doing harm: a spelling found anywhere else (a listing,
an inventory report's row) that is not canonical is never compared under, nor deleted through,
another name. On a local disk ``p=a//x`` and ``p=a/x`` are one file; on an object store they
are two objects. Either way the non-canonical one is kept and counted, and ``Storage`` refuses
to delete any path that is not canonical (``require_canonical``), whoever asks. Names are
compared as stored: Unicode is not normalised (NFC and NFD spellings are different files) and
case is kept.
"""

from __future__ import annotations

from urllib.parse import unquote

from python_ops.errors import DeltaLogError, StorageError


def is_canonical(rel: str) -> bool:
    """Tell whether ``rel`` is the one canonical spelling of a relative path.

    Args:
        rel: A ``/``-separated path relative to a table root.

    Returns:
        True when it is non-empty and has no empty, ``.`` or ``..`` name (so no leading,
        trailing or doubled ``/`` either).
    """
    if not rel:
        return False
    return all(name not in ("", ".", "..") for name in rel.split("/"))


def canonical(spelling: str) -> str | None:
    """Map a relative spelling to its canonical path, as Hadoop's ``Path`` does.

    ``//`` collapses, ``.`` names drop, ``..`` removes the name before it. Nothing is decoded
    (see ``decode_log_path``).

    Args:
        spelling: A relative path in any spelling.

    Returns:
        The canonical path; None when it names the root itself or climbs above it.
    """
    if is_canonical(spelling):
        return spelling
    names: list[str] = []
    for name in spelling.split("/"):
        if name in ("", "."):
            continue
        if name == "..":
            if not names:
                return None
            names.pop()
        else:
            names.append(name)
    return "/".join(names) or None


def decode_log_path(path: str) -> str:
    """A path from the Delta log with its percent-escapes decoded, as ``java.net.URI`` does.

    Args:
        path: The URL-encoded path of an action (relative, or the path part of a URI).

    Returns:
        The decoded path (``+`` stays ``+``: URI paths are not form-encoded).

    Raises:
        DeltaLogError: When a ``%`` is not followed by two hex digits (``java.net.URI`` refuses
            such a path, so Delta cannot read it either), or the escapes are not UTF-8.
    """
    if "%" not in path:
        return path
    at = path.find("%")
    while at != -1:
        escape = path[at + 1 : at + 3]
        if len(escape) != 2 or any(c not in "0123456789abcdefABCDEF" for c in escape):
            raise DeltaLogError(f"malformed percent-escape in log path '{path}'")
        at = path.find("%", at + 3)
    try:
        return unquote(path, errors="strict")
    except UnicodeDecodeError as err:
        raise DeltaLogError(f"log path '{path}' escapes bytes that are not UTF-8") from err


def require_canonical(rel: str, root: str) -> str:
    """``rel`` itself when canonical; otherwise refuse it (the guard before every delete).

    Args:
        rel: A relative path about to be deleted.
        root: The table root, for the message.

    Returns:
        ``rel`` unchanged.

    Raises:
        StorageError: When ``rel`` is not canonical: it is never deleted under another name.
    """
    if not is_canonical(rel):
        raise StorageError(
            f"refusing to delete '{rel}' in {root}: not the canonical spelling of a path "
            f"(canonical: {canonical(rel)!r}); such a spelling is kept, never deleted under "
            "another name"
        )
    return rel
