"""ListObjectsV2 pages parsed straight from their XML, for listing threads that share one GIL.

botocore parses every response with its generic, model-driven XML parser: for a 1,000-key
listing page about 15 ms of CPU, most of a listing thread's work. Listing threads hold the GIL
while they parse, so a prefix listed as key ranges on 8 threads is bounded by the parsing, not
by the store. ``parse_listing`` is a ``before-parse`` handler (the hook botocore's own S3
customizations use) that reads a page with ElementTree into the same structure botocore would
produce, hands it back as the customized response, and leaves botocore an empty result element
to parse. Anything it does not know (an element it does not expect, an error, another status)
it leaves to botocore untouched. ``S3Settings.boto3_client`` registers it on its session
before botocore's own handlers, so botocore's check for errors in 200 responses (another full
XML parse) sees the empty element: a body whose root is ``ListBucketResult`` is no error, and
any other body is left as it came.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from xml.etree import ElementTree


def iso_timestamp(value: Any) -> Any:
    """Parse a timestamp of an S3 response as botocore does, ISO 8601 ones much faster.

    Every key of a listing page carries an ISO 8601 ``LastModified``; botocore's default
    parser (dateutil) spends about 30 ms of CPU per 1,000-key page on them, holding the GIL, so
    listing threads wait on each other. ``datetime.fromisoformat`` gives the same time-zone
    aware value; anything else (HTTP dates in headers, epoch numbers) goes to botocore's parser.

    Args:
        value: The timestamp as the response carries it.

    Returns:
        A time-zone aware ``datetime``.
    """
    if isinstance(value, str):  # (no import here: this runs once per listed key)
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return parsed
    from botocore.utils import parse_timestamp

    return parse_timestamp(value)


_EMPTY = b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></ListBucketResult>'
_TEXT = {"Name", "Prefix", "Delimiter", "EncodingType", "ContinuationToken"}
_TEXT |= {"NextContinuationToken", "StartAfter"}
_INTS = {"MaxKeys", "KeyCount"}
_OBJECT_TEXT = {"Key", "ETag", "StorageClass", "ChecksumType"}


def _object(node: Any, names: dict[str, str]) -> dict[str, Any] | None:
    item: dict[str, Any] = {}
    for child in node:
        name, text = names.get(child.tag, ""), child.text or ""
        if name in _OBJECT_TEXT:
            item[name] = text
        elif name == "Size":
            item[name] = int(text)
        elif name == "LastModified":
            item[name] = iso_timestamp(text)
        elif name == "ChecksumAlgorithm":  # a flattened list
            item.setdefault(name, []).append(text)
        else:
            return None  # Owner, RestoreStatus, ...: botocore's parser knows them
    return item


def parse_page(body: bytes) -> dict[str, Any] | None:
    """A ListObjectsV2 response body as botocore parses it, or None where unsure.

    Args:
        body: The XML of a successful response.

    Returns:
        The parsed fields (``Contents``, ``CommonPrefixes``, ``IsTruncated`` ...), or None
        when the body holds anything this parser does not expect.
    """
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        return None
    namespace, _, local = root.tag.rpartition("}")
    if local != "ListBucketResult":
        return None
    prefix = f"{namespace}}}" if namespace else ""
    known = _TEXT | _INTS | _OBJECT_TEXT | {"Contents", "CommonPrefixes", "IsTruncated"}
    known |= {"Size", "LastModified", "ChecksumAlgorithm", "Prefix"}
    names = {prefix + name: name for name in known}  # tag as ElementTree gives it -> name
    parsed: dict[str, Any] = {}
    for node in root:
        name, text = names.get(node.tag, ""), node.text or ""
        if name == "Contents":
            item = _object(node, names)
            if item is None:
                return None
            parsed.setdefault("Contents", []).append(item)
        elif name == "CommonPrefixes":
            prefixes = {names.get(c.tag, ""): c.text or "" for c in node}
            if set(prefixes) != {"Prefix"}:
                return None
            parsed.setdefault("CommonPrefixes", []).append(prefixes)
        elif name == "IsTruncated":
            parsed[name] = text.strip().lower() == "true"
        elif name in _INTS:
            parsed[name] = int(text)
        elif name in _TEXT:
            parsed[name] = text
        else:
            return None
    return parsed


def parse_listing(
    response_dict: dict[str, Any],
    customized_response_dict: dict[str, Any],
    operation_model: Any = None,
    **_: Any,
) -> None:
    """``before-parse.s3.*`` handler: parse a ListObjectsV2 page here, not in botocore.

    Args:
        response_dict: botocore's response (status, headers, body); a parsed page's body is
            replaced by an empty result element.
        customized_response_dict: Where the parsed fields go (botocore merges them in).
        operation_model: The operation (only ``ListObjectsV2`` is parsed here).
    """
    if getattr(operation_model, "name", None) != "ListObjectsV2":
        return
    body = response_dict.get("body")
    if response_dict.get("status_code") != 200 or not isinstance(body, bytes | bytearray):
        return
    parsed = parse_page(bytes(body))
    if parsed is not None:
        customized_response_dict.update(parsed)
        response_dict["body"] = _EMPTY
