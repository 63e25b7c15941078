#!/usr/bin/env bash
# A headless Chromium for the HTML report's browser tests (tests/helpers/browser.py), from
# Debian's packages: chromium-headless-shell, driven by Playwright (a dev dependency) through
# its executable path. Playwright's own browser downloads come from hosts the project's machines
# cannot reach, so `playwright install` is never run. Safe to run again: nothing happens when a
# Chromium is already there. Without root or apt-get it only says so, and those tests skip
# with that reason.
set -euo pipefail
if [ -n "${SPARKDELTA_CHROMIUM:-}" ]; then
  exit 0
fi
for name in chromium-headless-shell chromium chromium-browser; do
  if command -v "$name" >/dev/null 2>&1; then
    exit 0
  fi
done
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "bootstrap: no Chromium here and no apt-get as root to install one; the HTML report's" \
    "browser tests will skip (set SPARKDELTA_CHROMIUM to a Chromium binary)" >&2
  exit 0
fi
echo "Installing Debian's chromium-headless-shell (the HTML report's browser tests) ..." >&2
log="$(mktemp)"
install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    chromium-headless-shell >>"$log" 2>&1
}
if ! install; then
  # a machine whose package lists were never fetched knows no such package yet
  DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$log" 2>&1 || true
  if ! install; then
    tail -20 "$log" >&2
    echo "bootstrap: apt-get could not install chromium-headless-shell (above); the HTML" \
      "report's browser tests will skip" >&2
  fi
fi
rm -f "$log"
