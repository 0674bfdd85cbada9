#!/usr/bin/env bash
# Idempotent set-up of everything the server and the test suite need, from the project's own files:
#   scripts/setup.sh run   -> Python venv with the app, htmx assets from the npm registry
#   scripts/setup.sh test  -> the above plus test/bench extras and the system Chromium for browser tests
# Re-running is cheap: each step is skipped when its inputs have not changed.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-run}"
venv=.venv
py="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi

extras=""
[ "$mode" = test ] && extras="[test,bench]"
stamp="$venv/.installed-$(echo "$mode" | tr -c 'a-z' '_')"
digest=$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e ".$extras"
  echo "$digest" > "$stamp"
fi

# htmx + ws extension + idiomorph (the morph swap), pinned exactly in web/package-lock.json, served by the app.
if [ -f web/package.json ]; then
  lock=$(sha256sum web/package-lock.json | cut -c1-16)
  if [ ! -f web/node_modules/.mineduel-lock ] || [ "$(cat web/node_modules/.mineduel-lock)" != "$lock" ]; then
    (cd web && npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock" > web/node_modules/.mineduel-lock
  fi
fi

# Browser tests drive Debian's Chromium (Playwright's own browser download cannot work here).
if [ "$mode" = test ] && ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: the browser tests need Chromium at /usr/bin/chromium (apt-get install chromium)" >&2
    exit 1
  fi
fi
