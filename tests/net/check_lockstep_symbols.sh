#!/bin/sh
# check_lockstep_symbols.sh LIB CORE [CC]: fails if LIB (libgk_lockstep.a,
# the portable lockstep library, or libgk_config_kv.a) names any uv_, enet_
# or cJSON_ symbol, or needs a symbol that neither it, the core library
# CORE (libgamekit-core.a) nor libc defines (the second half is
# tests/core/check_core_symbols.sh with CORE counted as defined).
set -eu
lib=$1
core=$2
cc=${3:-cc}
io=$(nm --format=posix "$lib" | awk 'NF >= 2 && $1 !~ /:$/ {print $1}' |
  grep -E '^(uv_|enet_|cJSON_)' | sort -u | tr '\n' ' ' || true)
if [ -n "$io" ]; then
  echo "$(basename "$lib") names I/O symbols: $io"
  exit 1
fi
echo "ok: $(basename "$lib") names no uv_/enet_/cJSON_ symbol"
exec sh "$(dirname "$0")/../core/check_core_symbols.sh" "$lib" "$cc" "$core"
