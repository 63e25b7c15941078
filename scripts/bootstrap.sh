#!/usr/bin/env bash
# Create or refresh the project-local environment in .venv (idempotent).
# Re-installs only when pyproject.toml or constraints.txt changed since the last install.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
stamp="$venv/.installed"
want="$(cat "$root/pyproject.toml" "$root/constraints.txt" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "Installing the project into .venv (pinned by constraints.txt; log: .venv/install.log)," \
    "a few minutes the first time ..." >&2
  log="$venv/install.log"
  # compat mode: a plain .pth entry, so the dbt/ plugin joins dbt's pkgutil namespace.
  # pip's own lines go to the log; one progress line per package resolved goes to stderr, so
  # a first install is never minutes of silence.
  if ! PIP_CONSTRAINT="$root/constraints.txt" "$venv/bin/python" -m pip install \
      -e "$root[dev]" --config-settings editable_mode=compat 2>&1 | tee "$log" | {
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
  echo "$want" > "$stamp"
fi
# Delta Lake's JVM jars (pinned, checksummed; nothing happens when they are already there)
"$root/scripts/fetch_delta_jars.sh"
