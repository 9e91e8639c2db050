#!/usr/bin/env bash
# mid: across a mailbox (issue 13, defect 2): mboxes of 10,000 and 20,000 messages, each with
# a mid: reference that no message of the run carries (it stays dangling). Times the default
# run (mid=check: every message indexed, references looked up, forward references waited
# for) against --mid=off measured in the same run (best of three each), and the 20,000 run
# against the 10,000 one (linear: about 2x). Also with --jobs=2.
# Usage: bash bench/mid.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/mimeuri
out=bench/out
mkdir -p "$out"

make_mbox() { # n path
  python3 - "$1" "$2" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    for i in range(n):
        f.write(f"From bench@example.org Sat Nov 21 00:00:00 2026\nMessage-ID: <m{i}@example.org>\n"
                "MIME-Version: 1.0\nContent-Type: text/html; charset=utf-8\n\n"
                f"<p>See <a href=\"mid:gone{i}@example.org\">the earlier message</a>.</p>\n\n")
PY
}

. bench/lib.sh

printf '%-9s %-8s %12s %12s %10s\n' messages jobs "mid=check s" "mid=off s" ratio
declare -A t_check
for n in 10000 20000; do
  mb=$out/mid-$n.mbox
  [ -f "$mb" ] || make_mbox "$n" "$mb"
  for jobs in 1 2; do
    on=$(best_of_3 "$bin" --jobs=$jobs "$mb")
    off=$(best_of_3 "$bin" --jobs=$jobs --mid=off "$mb")
    t_check[$n-$jobs]=$on
    printf '%-9s %-8s %12.3f %12.3f %9.2fx\n' "$n" "$jobs" "$on" "$off" "$(echo "$on / $off" | bc -l)"
  done
done
for jobs in 1 2; do
  printf 'linearity, jobs=%s: 20,000 messages take %.2fx the time of 10,000\n' "$jobs" \
    "$(echo "${t_check[20000-$jobs]} / ${t_check[10000-$jobs]}" | bc -l)"
done
