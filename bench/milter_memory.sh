#!/usr/bin/env bash
# bench/milter_memory.sh [BUILD_DIR] [BASELINE_BIN]: the service front's peak RSS (VmHWM, KiB)
# against the size of a changed HTML part x the connections that hand one over at once
# (issue 43, item 12), by bench/milter_memory.py (--jobs=2, a fresh service for each cell,
# every new body checked against the batch run's). Sizes 1, 8, 24 MiB; 1, 4, 8 connections;
# 7bit then quoted-printable with --cid=inline (the streamed body). With BASELINE_BIN (another
# build's mimeuri), each cell runs it too, right after, so that both see the same load.
# Prints "cte MiB connections front_hwm_kib [baseline_kib]" and the load.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BASE=${2:-}
hwm() { python3 "$ROOT/bench/milter_memory.py" "$@" | sed -n 's/.*front_hwm_kib=\([0-9]*\).*/\1/p'; }
echo "# $(uptime)"
for mode in 7bit inline; do
  extra=()
  [ "$mode" = inline ] && extra=(--cte=quoted-printable --option=--cid=inline)
  for mb in 1 8 24; do
    for conns in 1 4 8; do
      line="$mode $mb $conns $(hwm "$BUILD/mimeuri" "$mb" "$conns" --check "${extra[@]}")"
      [ -z "$BASE" ] || line="$line $(hwm "$BASE" "$mb" "$conns" --check "${extra[@]}")"
      echo "$line"
    done
  done
done
echo "# $(uptime)"
