#!/bin/sh
# check_core_symbols.sh LIB [CC [LIB2...]]: fails if LIB (libgk_core.a)
# needs any symbol that libc does not define: no uv_, enet_, cJSON_, libm
# or other. What the archives LIB2... define counts as defined too (the
# portable lockstep library, libgk_lockstep.a, may use the core and libc only).
set -eu
lib=$1
cc=${2:-cc}
shift
[ $# -eq 0 ] || shift
libc=$($cc -print-file-name=libc.so.6)
[ -f "$libc" ] || { echo "cannot find libc.so.6 via $cc"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
syms() { awk 'NF >= 2 && $1 !~ /:$/ {print $1}' | sed 's/@.*//' | sort -u; }
# What the archive's objects define for each other is not a need.
nm --defined-only --format=posix "$lib" "$@" | syms > "$tmp/own"
nm -u --format=posix "$lib" | syms | comm -23 - "$tmp/own" > "$tmp/undef"
nm -D --defined-only --format=posix "$libc" | syms > "$tmp/libc"
bad=""
for s in $(cat "$tmp/undef"); do
  case "$s" in
    __asan_*|__ubsan_*|__tsan_*|__sanitizer_*|__stack_chk_fail|_GLOBAL_OFFSET_TABLE_|__gcov_*|__llvm_*) continue ;;
  esac
  grep -qx -- "$s" "$tmp/libc" || bad="$bad $s"
done
if [ -n "$bad" ]; then
  echo "$(basename "$lib") needs symbols that libc (and any LIB2) does not provide:$bad"
  exit 1
fi
echo "ok: $(grep -c . "$tmp/undef") undefined symbols, all from libc"
