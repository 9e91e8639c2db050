# Shared by the benchmark scripts: source it.

best_of_3() { # command... -> seconds (best of three)
  local best=""
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
    best=$(awk -v a="$best" -v b="$(echo "$e - $s" | bc)" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  echo "$best"
}

# On a loaded machine: N rounds, each running every command once (so that all of them see
# the same load), and per label the best and worst wall seconds, the best CPU seconds
# (user + system) and the largest peak RSS (KiB).
# Usage: rounds N LABEL 'COMMAND' [LABEL 'COMMAND']...  Prints "LABEL best worst cpu rss".
rounds() {
  local n=$1; shift
  local -a labels=() cmds=()
  while [ $# -gt 0 ]; do labels+=("$1"); cmds+=("$2"); shift 2; done
  local tmp; tmp=$(mktemp)
  for ((r = 0; r < n; r++)); do
    for i in "${!cmds[@]}"; do
      /usr/bin/time -f "${labels[$i]} %e %U %S %M" -a -o "$tmp" bash -c "${cmds[$i]}" > /dev/null 2>&1
    done
  done
  for l in "${labels[@]}"; do
    awk -v l="$l" '$1 == l { w = $2; c = $3 + $4; if (b == "" || w < b) b = w; if (w > x) x = w
                             if (cb == "" || c < cb) cb = c; if ($5 > m) m = $5 }
      END { printf "%s %.3f %.3f %.3f %d\n", l, b, x, cb, m }' "$tmp"
  done
  rm -f "$tmp"
}

# As rounds, with the median: per label "LABEL median best worst cpu_median rss" (wall
# seconds; CPU is user + system; rss the largest peak RSS in KiB).
rounds_median() {
  local n=$1; shift
  local -a labels=() cmds=()
  while [ $# -gt 0 ]; do labels+=("$1"); cmds+=("$2"); shift 2; done
  local tmp; tmp=$(mktemp)
  for ((r = 0; r < n; r++)); do
    for i in "${!cmds[@]}"; do
      /usr/bin/time -f "${labels[$i]} %e %U %S %M" -a -o "$tmp" bash -c "${cmds[$i]}" > /dev/null 2>&1
    done
  done
  for l in "${labels[@]}"; do
    awk -v l="$l" '$1 == l { w[n + 0] = $2; c[n + 0] = $3 + $4; n++; if ($5 > m) m = $5 }
      function median(a, k,   i, j, t) { for (i = 0; i < k; i++) for (j = i + 1; j < k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                         return k % 2 ? a[(k - 1) / 2] : (a[k / 2 - 1] + a[k / 2]) / 2 }
      END { printf "%s %.3f", l, median(w, n); lo = w[0]; hi = w[n - 1]; printf " %.3f %.3f %.3f %d\n", lo, hi, median(c, n), m }' "$tmp"
  done
  rm -f "$tmp"
}

# A script's common start, after cd to the repository: build (its first argument, default
# build), bin (the mimeuri there), out (bench/out, made), runs (RUNS, default $2).
bench_init() {
  build=${1:-build}
  bin=$build/mimeuri
  out=bench/out
  runs=${RUNS:-$2}
  mkdir -p "$out"
}
