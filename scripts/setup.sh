#!/usr/bin/env bash
# Install what WeClaw Desktop needs on this machine, then the package itself (editable).
#   scripts/setup.sh          system libraries Qt needs + the app
#   scripts/setup.sh --test   also the test tools: Xvfb, Chromium for the phone-page tests, test extras, git, and
#                             the reference MCP servers (pip: mcp-server-time, mcp-server-git; npm: server-everything)
# On Debian/Ubuntu it uses apt-get (as root or through sudo); elsewhere it skips that step.
set -euo pipefail
cd "$(dirname "$0")/.."
with_test=0
[ "${1:-}" = "--test" ] && with_test=1

apt_packages=(libegl1 libgl1 libx11-6 libdbus-1-3 libfontconfig1 libfreetype6 libglib2.0-0 libxkbcommon0
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0
  fonts-noto-cjk fonts-noto-color-emoji ca-certificates)  # emoji: assistants' icons
if [ $with_test = 1 ]; then
  # appstream and desktop-file-utils validate the Linux package files; gcc builds the ELF test libraries
  apt_packages+=(xvfb xauth chromium appstream desktop-file-utils gcc libc6-dev xz-utils git)
fi

if command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing system packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
else
  echo "no apt-get here: make sure OpenGL/EGL libraries and a CJK font are installed"
fi

PY=${PYTHON:-python3}
if [ $with_test = 1 ]; then
  "$PY" -m pip install -q -e ".[test]"
  # The reference MCP servers the tests run against (tests/mcp/test_reference_servers.py): PyPI's time and git
  # servers, and npm's server-everything (stdio, streamable HTTP, legacy SSE) into tests/mcp/servers (git-ignored).
  "$PY" -m pip install -q "mcp-server-time>=2025.1" "mcp-server-git>=2025.1"
  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive ${SUDO:-} apt-get install -y -qq --no-install-recommends nodejs npm
  fi
  if command -v npm >/dev/null 2>&1; then
    (cd tests/mcp/servers && npm ci --no-audit --no-fund --loglevel=error)
  else
    echo "npm not found: the server-everything MCP tests will fail in CI (skip locally)" >&2
  fi
else
  "$PY" -m pip install -q -e .
fi
echo "setup done"
