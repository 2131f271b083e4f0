#!/usr/bin/env bash
# Test-runner install hook (runs before the network namespace): the real Delta Chat core from
# npm, pinned, into .tools/deltachat (gitignored); interop tests drive it as a peer. No-op when
# the binary is already there. Prints the binary's path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version=2.57.0
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "install-deltachat: no Delta Chat core package for $(uname -m)" >&2; exit 1 ;;
esac
prefix="$root/.tools/deltachat"
bin="$prefix/node_modules/@deltachat/stdio-rpc-server-linux-$arch/deltachat-rpc-server"
if [ ! -x "$bin" ] || [ "$("$bin" --version 2>&1)" != "$version" ]; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error \
    "@deltachat/stdio-rpc-server@$version" >&2
fi
[ -x "$bin" ] || { echo "install-deltachat: $bin missing after npm install" >&2; exit 1; }
echo "$bin"
