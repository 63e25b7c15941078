"""JSON text parsed as ``json.loads`` parses it, without its three Python frames per call.

The log's readers parse one JSON document per commit line, checksum file, schema string and
history proof: a post-hook parses about seven, a snapshot replay one per action. ``json.loads``
reaches the C scanner through ``loads``, ``JSONDecoder.decode`` and ``raw_decode``; ``loads``
here calls the same scanner with the same checks (a leading BOM, the whitespace around the
value, extra data after it), so the values and the errors (``json.JSONDecodeError``: message
and position) are ``json.loads``' own (``tests/unit/test_json_text.py`` over generated text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast

# the C scanner json.loads' default decoder uses (json.scanner.make_scanner of a default
# JSONDecoder), and its whitespace (json.decoder.WHITESPACE)
_SCAN: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009
# (``*``: it always matches, if only the empty string)
_SPACE = cast(
    "Callable[[str, int], re.Match[str]]",
    re.compile(r"[ \t\n\r]*", re.VERBOSE | re.MULTILINE | re.DOTALL).match,
)
_BOM = "\ufeff"


def _value(text: str) -> Any:
    """``JSONDecoder.decode``: the one value of ``text``, whitespace allowed around it."""
    try:
        value, end = _SCAN(text, _SPACE(text, 0).end())
    except StopIteration as err:
        raise json.JSONDecodeError("Expecting value", text, err.value) from None
    end = _SPACE(text, end).end()
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def loads(text: str) -> Any:
    """``json.loads`` of a string.

    Raises:
        json.JSONDecodeError: Where and why ``json.loads`` would.
    """
    if text.startswith(_BOM):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _value(text)


def loads_bytes(data: bytes) -> Any:
    """``json.loads`` of bytes: their encoding detected as it detects it (UTF-8, -16, -32).

    Raises:
        json.JSONDecodeError: Where and why ``json.loads`` would.
        UnicodeDecodeError: For bytes not in the detected encoding, as ``json.loads``.
    """
    return _value(data.decode(json.detect_encoding(data), "surrogatepass"))
