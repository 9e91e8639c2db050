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

# The rounds themselves: N rounds of every LABEL 'COMMAND', each timed into FILE, one line
# "LABEL wall user system rss" a run (wall to the millisecond, around /usr/bin/time, which
# gives the CPU and the peak RSS). Sets the caller's `labels`. SETTLE, when set, is a command
# run untimed before each timed one: jobs.sh removes the outputs and syncs, so that no
# command pays for writing back what the one before wrote.
time_rounds() { # FILE N LABEL 'COMMAND'...
  local file=$1 n=$2; shift 2
  local -a cmds=()
  local one; one=$(mktemp)
  labels=()
  while [ $# -gt 0 ]; do labels+=("$1"); cmds+=("$2"); shift 2; done
  for ((r = 0; r < n; r++)); do
    for i in "${!cmds[@]}"; do
      [ -z "${SETTLE:-}" ] || bash -c "$SETTLE"
      local s e
      s=$(date +%s%N)
      /usr/bin/time -f "%U %S %M" -o "$one" bash -c "${cmds[$i]}" > /dev/null 2>&1
      e=$(date +%s%N)
      echo "${labels[$i]} $(echo "scale=3; ($e - $s) / 1000000000" | bc | sed 's/^\./0./') $(cat "$one")" >> "$file"
    done
  done
  rm -f "$one"
}

# On a loaded machine: N rounds, each running every command once (so that all of them see
# the same load), and per label the best and worst wall seconds, the best CPU seconds
# (user + system) and the largest peak RSS (KiB).
# Usage: rounds N LABEL 'COMMAND' [LABEL 'COMMAND']...  Prints "LABEL best worst cpu rss".
rounds() {
  local tmp; tmp=$(mktemp)
  local -a labels
  time_rounds "$tmp" "$@"
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
  local tmp; tmp=$(mktemp)
  local -a labels
  time_rounds "$tmp" "$@"
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

# Of numbers separated by white space: the median (the upper one of an even count) and the
# spread as "least-greatest".
median() { printf '%s\n' $1 | sort -g | sed -n "$(( ($(wc -w <<<"$1") + 1) / 2 ))p"; }
spread() { printf '%s\n' $1 | sort -g | sed -n '1p;$p' | paste -sd-; }

# A milter service given as unix:PATH, local:PATH or inet:PORT@HOST (on this host): waits up
# to 10 s until it listens there.
listening() {
  for _ in $(seq 100); do
    case $1 in
      inet:*) local port=${1#inet:}; (exec 3<>"/dev/tcp/127.0.0.1/${port%@*}") 2>/dev/null && return 0 ;;
      *) [ -S "${1#*:}" ] && return 0 ;;
    esac
    sleep 0.1
  done
  echo "the service did not listen on $1" >&2; return 1
}

# bench/inline.sh's two sets, as lists of files ($out/SET.list) and as mboxes ($out/SET.mbox)
# (bench/files_to_mbox.py): mhtml, the corpus's saved pages (.mht/.mhtml, or a "Saved by" /
# Snapshot-Content-Location header) and MHTML_COUNT (40) pages from bench/make_mhtml.py; and
# mixed-html, every single message of the corpus with an HTML part (INDEX.tsv).
inline_sets() { # CORPUS
  local corpus=$1 mhtml=$out/mhtml.list count=${MHTML_COUNT:-40}
  : > "$mhtml"
  awk -F'\t' 'NR > 1 && $8 == 0 { print $1 }' "$corpus/INDEX.tsv" | while read -r p; do
    case "$p" in
      *.mht | *.mhtml) echo "$corpus/$p" ;;
      *) head -c 2000 "$corpus/$p" | grep -qi -m1 "Saved by\|Snapshot-Content-Location" && echo "$corpus/$p" ;;
    esac
  done >> "$mhtml" || true
  [ -f "$out/mhtml-gen-$count/mhtml-0000.eml" ] || python3 bench/make_mhtml.py "$out/mhtml-gen-$count" "$count"
  ls "$out/mhtml-gen-$count"/*.eml >> "$mhtml"
  awk -F'\t' 'NR > 1 && $3 == 1 && $8 == 0 { print $1 }' "$corpus/INDEX.tsv" | sed "s|^|$corpus/|" > "$out/mixed-html.list"
  local set
  for set in mhtml mixed-html; do python3 bench/files_to_mbox.py "$out/$set.list" "$out/$set.mbox"; done
}
