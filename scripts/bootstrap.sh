#!/usr/bin/env bash
# Create or refresh the project-local environment in .venv (idempotent).
#   scripts/bootstrap.sh run   what the demo runs: the package and its dependencies only
#   scripts/bootstrap.sh dev   (the default) that plus the thrift extra and the test and lint
#                              tools (pytest, mypy, ruff, moto, dbt's adapter test suite)
# Re-installs only when pyproject.toml or constraints.txt changed since the last install, or
# when the environment has less than asked for: a dev install serves a later `run` as it is, a
# `run` install is extended by a later `dev`; nothing is ever uninstalled.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
want_set="${1:-dev}"
case "$want_set" in
  run) extras="" ;;
  dev) extras="[dev]" ;;
  *) echo "bootstrap: unknown argument '$want_set' (use run or dev)" >&2; exit 2 ;;
esac
venv="$root/.venv"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
stamp="$venv/.installed"  # "<hash of pyproject.toml and constraints.txt> <run|dev>"
hash="$(cat "$root/pyproject.toml" "$root/constraints.txt" | sha256sum | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$have" = "$hash dev" ] || [ "$have" = "$hash $want_set" ]; then
  :  # installed, with at least what was asked for
else
  echo "Installing the project ($want_set) into .venv (pinned by constraints.txt; log:" \
    ".venv/install.log), a few minutes the first time ..." >&2
  log="$venv/install.log"
  # compat mode: a plain .pth entry, so the dbt/ plugin joins dbt's pkgutil namespace.
  # pip's own lines go to the log; one progress line per package resolved goes to stderr, so
  # a first install is never minutes of silence.
  if ! PIP_CONSTRAINT="$root/constraints.txt" "$venv/bin/python" -m pip install \
      -e "$root$extras" --config-settings editable_mode=compat 2>&1 | tee "$log" | {
        n=0
        while IFS= read -r line; do
          case "$line" in
            Collecting*) n=$((n + 1)); echo "  [$n] ${line#Collecting }" >&2 ;;
            "Installing collected packages"*) echo "  installing $n packages ..." >&2 ;;
          esac
        done
      }; then
    grep -v "^WARNING: Location" "$log" | tail -30 >&2
    echo "bootstrap: pip install failed; full log in $log" >&2
    exit 1
  fi
  "$venv/bin/python" -c "import dbt.adapters.sparkdelta, python_ops, pysail, deltalake"
  echo "$hash $want_set" > "$stamp"
fi
# Delta Lake's JVM jars (pinned, checksummed; nothing happens when they are already there)
"$root/scripts/fetch_delta_jars.sh"
# the tests' own JVM jars (S3Proxy), and the headless Chromium the HTML report's tests drive;
# the demo needs neither
if [ "$want_set" = "dev" ]; then
  "$root/scripts/fetch_test_jars.sh"
  "$root/scripts/install_chromium.sh"
fi
