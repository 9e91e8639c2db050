#!/usr/bin/env bash
# cid: resolution against the number of parts (issue 48 item 6): one HTML part naming each of
# N and 10 x N image parts by cid: (bench/make_cid_parts.py), the default job and --cid=inline,
# in interleaved rounds (RUNS, default 3; bench/lib.sh). Prints each run's median CPU seconds
# (user + system) and, per job, CPU(10 N) / CPU(N) less the run without passes: about 10 when
# the time grows as the input does, about 100 when it grows with its square. OTHER=BUILD_DIR
# adds that binary (the code before) to the same rounds. The machine's load is printed. CPU
# times come from /usr/bin/time, in hundredths: keep N at 1000 or more.
# Usage: [RUNS=N] [OTHER=BUILD_DIR] bash bench/resolver.sh [BUILD_DIR] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-1000}
runs=${RUNS:-3}
out=bench/out
mkdir -p "$out"
small=$out/cid-parts-$n.eml large=$out/cid-parts-$((n * 10)).eml
[ -f "$small" ] || python3 bench/make_cid_parts.py "$n" "$small"
[ -f "$large" ] || python3 bench/make_cid_parts.py "$((n * 10))" "$large"
. bench/lib.sh
bins=(new "$(realpath "$build/mimeuri")")
[ -z "${OTHER:-}" ] || bins+=(old "$(realpath "$OTHER/mimeuri")")
args=()
for ((b = 0; b < ${#bins[@]}; b += 2)); do
  for size in small large; do
    f=${!size}
    args+=("${bins[b]}-none-$size" "${bins[b+1]} --no-config --passes=none $f"
           "${bins[b]}-default-$size" "${bins[b+1]} --no-config $f"
           "${bins[b]}-inline-$size" "${bins[b+1]} --no-config --cid=inline $f")
  done
done
echo "load before: $(uptime)"
times=$(mktemp)
rounds_median "$runs" "${args[@]}" > "$times"
echo "load after:  $(uptime)"
echo "$n and $((n * 10)) parts named by cid:, $runs interleaved rounds; CPU seconds, median"
awk '{ printf "  %-22s cpu %7.3f\n", $1, $5 }' "$times"
awk '{ cpu[$1] = $5 }
     END {
       n = split("new old", bs, " ")
       for (i = 1; i <= n; i++) for (j = 1; j <= 2; j++) {
         job = j == 1 ? "default" : "inline"; k = bs[i] "-" job
         if (!((k "-small") in cpu)) continue
         s = cpu[k "-small"] - cpu[bs[i] "-none-small"]; l = cpu[k "-large"] - cpu[bs[i] "-none-large"]
         printf "%s %s: 10x the parts costs %.1fx the CPU (linear: 10, quadratic: 100)\n", bs[i], job, l / (s > 0.01 ? s : 0.01)
       }
     }' "$times"
rm -f "$times"
