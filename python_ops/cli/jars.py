"""``python -m python_ops jars fetch``: the Delta jars for local Spark, fetched and checked."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from python_ops.delta_jars import JARS_ENV, jar_dirs, user_jars_dir
from python_ops.jars_fetch import MAVEN_CENTRAL, REPOSITORY_ENV, FetchVia, fetch_jars


def add_jars_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    """The ``jars`` command and its ``fetch`` action.

    Args:
        sub: The top-level parser's subparsers.

    Returns:
        The ``jars`` parser (the caller adds the common logging flags).
    """
    jars: argparse.ArgumentParser = sub.add_parser(
        "jars",
        help="the Delta Lake jars that mode: local and Delta's own writer load",
        allow_abbrev=False,
    )
    jars.add_argument("action", choices=("fetch",), help="fetch: download and check the jars")
    jars.add_argument(
        "--dest",
        default=None,
        help=f"folder to put them in (default: ${JARS_ENV}, else {user_jars_dir()}); "
        f"set {JARS_ENV} to it if it is neither",
    )
    jars.add_argument(
        "--via",
        choices=[v.value for v in FetchVia],
        default=FetchVia.HTTPS.value,
        help="https: plain download from the repository (default); maven: mvn dependency:copy "
        "(honours ~/.m2/settings.xml)",
    )
    jars.add_argument(
        "--repository",
        default=None,
        help=f"Maven repository base URL (default: ${REPOSITORY_ENV}, else {MAVEN_CENTRAL})",
    )
    jars.add_argument(
        "--quiet", action="store_true", help="print only the jars fetched (none: nothing)"
    )
    jars.add_argument("--json", action="store_true", help="print what was done as JSON")
    return jars


def default_dest() -> Path:
    """``$SPARKDELTA_DELTA_JARS`` when set, else the per-user folder the package looks in."""
    dirs = jar_dirs()
    return dirs[0] if len(dirs) == 1 else user_jars_dir()


def run_jars(args: argparse.Namespace) -> int:
    """Fetch the jars into ``--dest`` and print one line per jar.

    Args:
        args: The parsed ``jars`` arguments.

    Returns:
        0 (a failure raises ``EngineError``, which the command line reports with exit 2).
    """
    dest = Path(args.dest) if args.dest else default_dest()
    done = fetch_jars(dest, via=FetchVia(args.via), repository=args.repository)
    if args.json:
        print(json.dumps([dataclasses.asdict(d) for d in done]))
        return 0
    for jar in done:
        if args.quiet and not jar.fetched:
            continue
        how = f"fetched from {jar.source}" if jar.fetched else "already there"
        print(f"{jar.path}: {how}, sha256 {jar.sha256} matches the lock")
    if not args.quiet and dest.resolve() not in [d.resolve() for d in jar_dirs()]:
        print(f"note: sessions look for them in {JARS_ENV}: set {JARS_ENV}={dest}")
    return 0
