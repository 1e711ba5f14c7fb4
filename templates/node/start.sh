#!/bin/sh
# Start the Member Node whose memberkit.config.json is in this folder (systemd's ExecStart,
# the Docker image and a terminal all use it). Extra arguments go to `memberkit serve`,
# e.g. ./start.sh --port 9090. Logs are pino JSON lines on stdout (see README.md).
#
# The memberkit command, first found (always compiled JavaScript, never a download):
#   1. $MEMBERKIT_CMD (the Docker image sets it);
#   2. node_modules/.bin/memberkit in this folder (`npm ci` here installs it from the
#      release this node was made with);
#   3. `memberkit` on the PATH;
#   4. the compiled CLI of a memberkit checkout this folder is inside
#      (packages/cli/dist/bin.js, written by `npm run build` or `npm run release` there).
set -eu

HERE=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
NODE_DIR=${MEMBERKIT_NODE_DIR:-$HERE}

if [ -z "${MEMBERKIT_CMD:-}" ]; then
  if [ -x "$HERE/node_modules/.bin/memberkit" ]; then
    MEMBERKIT_CMD="$HERE/node_modules/.bin/memberkit"
  elif command -v memberkit >/dev/null 2>&1; then
    MEMBERKIT_CMD=memberkit
  else
    d=$HERE
    while [ "$d" != "/" ] && [ ! -f "$d/packages/cli/package.json" ]; do d=$(dirname -- "$d"); done
    if [ -f "$d/packages/cli/dist/bin.js" ]; then
      MEMBERKIT_CMD="node $d/packages/cli/dist/bin.js"
    elif [ -f "$d/packages/cli/package.json" ]; then
      echo "start.sh: the memberkit checkout at $d is not built: run 'npm run build' there (or 'npm ci' in $HERE)" >&2
      exit 1
    else
      echo "start.sh: no memberkit command: run 'npm ci' in $HERE (installs it from the release), or set MEMBERKIT_CMD" >&2
      exit 1
    fi
  fi
fi

# exec: the node process receives SIGTERM directly and shuts down gracefully.
# shellcheck disable=SC2086 # MEMBERKIT_CMD is a command line, split on purpose
exec $MEMBERKIT_CMD serve "$NODE_DIR" "$@"
