#!/usr/bin/env bash
# Chromium for the web explorer's browser test (Playwright drives the Debian package; the test
# never downloads a browser). Installs it from Debian's packages if missing; prints its path.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo -n"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2 || true
  $SUDO apt-get install -y -qq chromium >&2
fi
command -v chromium
