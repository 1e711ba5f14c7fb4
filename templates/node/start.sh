#!/bin/sh
# Start the Member Node whose memberkit.config.json is in this folder (systemd's ExecStart,
# the Docker image and a terminal all use it). Extra arguments go to `memberkit serve`,
# e.g. ./start.sh --port 9090. Logs are pino JSON lines on stdout (see README.md).
#
# The memberkit command, first found: $MEMBERKIT_CMD; `memberkit` on the PATH (an installed
# @memberkit/cli); the CLI of a memberkit checkout this folder is inside; npx.
set -eu

HERE=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
NODE_DIR=${MEMBERKIT_NODE_DIR:-$HERE}

if [ -z "${MEMBERKIT_CMD:-}" ]; then
  if command -v memberkit >/dev/null 2>&1; then
    MEMBERKIT_CMD=memberkit
  else
    d=$HERE
    while [ "$d" != "/" ] && [ ! -f "$d/packages/cli/src/bin.ts" ]; do d=$(dirname -- "$d"); done
    if [ -f "$d/packages/cli/src/bin.ts" ]; then
      # Inside the memberkit repository: its CLI, run from TypeScript sources (no build needed).
      cd "$d"
      MEMBERKIT_CMD="env TSX_TSCONFIG_PATH=tsconfig.dev.json node --conditions=@memberkit/source --import tsx packages/cli/src/bin.ts"
    else
      MEMBERKIT_CMD="npx --no-install memberkit"
    fi
  fi
fi

# exec: the node process receives SIGTERM directly and shuts down gracefully.
# shellcheck disable=SC2086 # MEMBERKIT_CMD is a command line, split on purpose
exec $MEMBERKIT_CMD serve "$NODE_DIR" "$@"
