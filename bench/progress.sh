#!/usr/bin/env bash
# The progress line's cost: the default run over an mbox of MESSAGES corpus messages
# (bench/make_mbox.py) with standard error on a pseudo-terminal (script -qc: the progress
# line and the summary drawn) against the same run with standard error piped (silent), in
# interleaved rounds (RUNS, default 5; bench/lib.sh). Prints per label the median wall time
# and its spread, the ratio of the medians (the bar: at most 1.05), and the machine's load
# before and after. The outputs must be the same bytes (cmp). OTHER=BUILD_DIR adds that
# binary's two runs (the code before) to the same rounds.
# Usage: [RUNS=N] [OTHER=BUILD_DIR] bash bench/progress.sh [BUILD_DIR] [MESSAGES]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${2:-20000}
runs=${RUNS:-5}
bin=$(realpath "$build/mimeuri")
corpus=${CORPUS:-../shared/corpus}
out=bench/out
mkdir -p "$out"
mbox=$out/corpus-$count.mbox
[ -f "$mbox" ] || python3 bench/make_mbox.py "$corpus" "$count" "$mbox"
command -v script >/dev/null || { echo "progress.sh: needs script(1) (bsdutils)" >&2; exit 1; }
. bench/lib.sh
echo "load before: $(uptime)"
args=(tty "script -qec '$bin --no-config $mbox -o $out/progress-tty.mbox' /dev/null"
      piped "$bin --no-config $mbox -o $out/progress-pipe.mbox 2>&1 | cat")
if [ -n "${OTHER:-}" ]; then
  other=$(realpath "$OTHER/mimeuri")
  args+=(tty-other "script -qec '$other --no-config $mbox -o $out/progress-tty-other.mbox' /dev/null"
         piped-other "$other --no-config $mbox -o $out/progress-pipe-other.mbox 2>&1 | cat")
fi
times=$(mktemp)
rounds_median "$runs" "${args[@]}" > "$times"
echo "load after:  $(uptime)"
cmp "$out/progress-tty.mbox" "$out/progress-pipe.mbox"
echo "$(basename "$mbox"): $(stat -c %s "$mbox") bytes, $runs interleaved rounds; wall seconds: median (best-worst), CPU median"
awk '{ printf "  %-12s %7.3f (%.3f-%.3f)  cpu %.3f\n", $1, $2, $3, $4, $5 }' "$times"
awk '$1 == "tty" { t = $2 } $1 == "piped" { p = $2 } $1 == "tty-other" { to = $2 } $1 == "piped-other" { po = $2 }
     END { printf "tty / piped: %.3f (bar: at most 1.05)\n", t / p
           if (to) printf "before: tty / piped: %.3f\n", to / po }' "$times"
rm -f "$times" "$out"/progress-*.mbox
