#!/usr/bin/env bash
# Fetch the pinned Delta Lake JVM jars into jars/ and check their sha256: a thin call of
# `python -m python_ops jars fetch` (the lock is python_ops/delta_jars.lock, package data).
# Idempotent: a jar already there with the right checksum is not fetched again.
# DELTA_JARS_DIR picks another folder; JARS_FETCH_VIA=maven downloads through Maven instead of
# plain HTTPS from Maven Central.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# the project's environment (bootstrap.sh's PYTHON names the interpreter that creates it, which
# need not have the package's dependencies)
python="$root/.venv/bin/python"
[ -x "$python" ] || python=python3.11
# this checkout's python_ops, whatever the environment has installed
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m python_ops jars fetch \
  --dest "${DELTA_JARS_DIR:-$root/jars}" --via "${JARS_FETCH_VIA:-https}" --quiet 1>&2
