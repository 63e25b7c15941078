#!/usr/bin/env bash
# The main job: build the example project on the embedded engine, load the incremental fact
# in small batches, and print each model's table health. Safe to run again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/bootstrap.sh" run  # what the demo runs: no test or lint tools
cd "$root"
exec "$root/.venv/bin/python" "$root/scripts/run_example.py" "$@"
