#!/usr/bin/env bash
# Archives beyond one run (issue 17): the persistent Message-ID index.
#  (a) `mimeuri index` over an mbox of N corpus messages (bench/make_archive.py: the corpus's
#      single messages repeated, each with a Message-ID of its own): messages/s and index
#      bytes per message, against `--passes=none -o /dev/null` (parse and copy) and `--check`
#      (the default passes, report only) over the same mbox, in interleaved rounds.
#  (b) the cost of a mid: reference looked up in an index against one resolved by the run's
#      own index. Mbox B: N/10 HTML messages, PER (50) mid: links each to messages of A (one in four
#      mid:msg/cid); B0: the same bytes with tag: for mid: (no reference, nothing looked up).
#      One run over both files (`--check A B`, the run's own index) and one over B alone with
#      --mid-index=A's index, each against the same run with B0: the difference, divided by
#      the number of references, is what a reference costs. The reports of B's messages must be
#      the same bytes both ways. Each message of A is referred to about PER/10 times there
#      (lookups are kept from message to message); "cold" does the same with every
#      reference to a different message (N/10 messages of 10 links): nothing kept helps.
#      bench/mid_lookup.c then times the index's two queries alone.
#  (c) peak RSS (/usr/bin/time %M) of `mimeuri index`, of a --mid-index run (1,000 messages,
#      20 references each, spread over the whole index) and of one `--check` run over the
#      archive (its own index in memory), as the archive grows: N/10, N, 3N messages (GROW).
# Figures go to standard output and bench/out/archive-N.txt.
# Usage: bash bench/archive.sh [N|quick] [BUILD_DIR]   (N 100000; quick: N=2000, one round)
#        RUNS=3 rounds; PER=50 links per message of B; GROW="10000 100000 300000" sizes for (c)
#        (N/10 N 3N); CORPUS=../shared/corpus. Quick mode's per-reference figures are noise.
#        ONLY=b runs part (b) alone, over the mboxes and index an earlier run left.
# The mboxes stay in bench/out/archive/ for the next run: about 7 GB per million messages
# (2.9 GB with N=100000); remove them when done.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
arg=${1:-100000}
build=${2:-build}
if [ "$arg" = quick ]; then n=2000; runs=${RUNS:-1}; else n=$arg; runs=${RUNS:-3}; fi
grow=${GROW:-"$((n / 10)) $n $((3 * n))"}
bin=$(realpath "$build/mimeuri")
corpus=$(realpath "${CORPUS:-../shared/corpus}")
out=bench/out/archive
mkdir -p "$out"
. bench/lib.sh
figures=$top/bench/out/archive-$arg.txt
exec > >(tee "$figures")
cc -O2 -o "$out/mid_lookup" bench/mid_lookup.c -lsqlite3
cd "$out" # the indexes keep input names as given: short ones, the same in every run
gen() { python3 "$top/bench/make_archive.py" "$@"; }
archive() { # M: a-M.mbox, messages a.0 .. a.M-1
  [ -f "a-$1.mbox" ] || gen corpus "$corpus" "$1" "a-$1.mbox" a
}
rss() { # command... -> "seconds KiB" (the command's output discarded)
  local t; t=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$t" "$@" > /dev/null
  cat "$t"; rm -f "$t"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
field() { # LABEL N(2 best wall, 3 worst, 4 cpu, 5 rss) rows...
  local l=$1 k=$2; shift 2
  printf '%s\n' "$@" | awk -v l="$l" -v k="$k" '$1 == l { print $k }'
}

echo "bench/archive.sh: N=$n, $runs interleaved rounds, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$("$bin" --version | head -1); build $build"

# (a) Indexing speed and size.
archive "$n"
a=a-$n.mbox
if [ "${ONLY:-}" != b ]; then
size=$(stat -c %s "$a")
echo
echo "## (a) mimeuri index over $a: $n messages, $size bytes"
mapfile -t rows < <(rounds "$runs" \
  index "rm -f a.tmp.idx a.tmp.idx-journal; $bin index -q -o a.tmp.idx $a" \
  none "$bin --passes=none -o /dev/null $a" \
  check "$bin --check $a")
mv a.tmp.idx "a-$n.idx"
idx=a-$n.idx
ids=$(sqlite3 "$idx" "SELECT count(*) FROM messages")
cids=$(sqlite3 "$idx" "SELECT count(*) FROM cids")
isize=$(stat -c %s "$idx")
printf '%-34s %9s %9s %9s %12s %9s %10s\n' run "best s" "worst s" "cpu s" messages/s "peak RSS" "vs none"
tn=$(field none 2 "${rows[@]}")
for l in index none check; do
  t=$(field $l 2 "${rows[@]}")
  case $l in
    index) what="mimeuri index -o INDEX";;
    none) what="mimeuri --passes=none -o /dev/null";;
    check) what="mimeuri --check (default passes)";;
  esac
  printf '%-34s %9.3f %9.3f %9.3f %12.0f %6.1f MiB %9sx\n' "$what" "$t" "$(field $l 3 "${rows[@]}")" \
    "$(field $l 4 "${rows[@]}")" "$(echo "$n / $t" | bc -l)" "$(echo "$(field $l 5 "${rows[@]}") / 1024" | bc -l)" \
    "$(ratio "$t" "$tn")"
done
echo "index: $isize bytes, $ids Message-IDs ($((ids - n)) more than messages: embedded messages), $cids Content-IDs"
printf 'index bytes per message: %.1f (per Message-ID: %.1f)\n' "$(echo "$isize / $n" | bc -l)" "$(echo "$isize / $ids" | bc -l)"
echo "where the bytes are (dbstat):"
sqlite3 "$idx" "SELECT '  ' || name || ': ' || sum(pgsize) || ' bytes' FROM dbstat GROUP BY name HAVING sum(pgsize) > 8192 ORDER BY sum(pgsize) DESC"
again=$(rss "$bin" index -q -o "$idx" "$a")
echo "the same index again, the mbox unchanged (nothing read): ${again% *} s"
fi
idx=a-$n.idx
[ -f "$idx" ] || { echo "bench/archive.sh: no $idx: run it once without ONLY" >&2; exit 66; }

# (b) A reference looked up in the index against one in the run's own index.
nb=$((n / 10)); per=${PER:-50}
b=b-$n.mbox; b0=b0-$n.mbox
[ -f "$b" ] || gen refs "$corpus" "$nb" "$b" b a "$n" "$per" mid
[ -f "$b0" ] || gen refs "$corpus" "$nb" "$b0" b a "$n" "$per" tag
"$bin" --check "$a" "$b" | grep -F '"source":"'"$b"'"' > run.jsonl
"$bin" --check --mid-index="$idx" "$b" > idx.jsonl
refs=$(grep -o '"kind":"mid"' idx.jsonl | wc -l)
resolved=$(grep -o '"kind":"mid","status":"resolved"' idx.jsonl | wc -l)
withcid=$(grep -o '"url":"mid:[^"]*/[^"]*","kind":"mid","status":"resolved"' idx.jsonl | wc -l)
same=no; cmp -s run.jsonl idx.jsonl && same=yes
echo
echo "## (b) $b: $nb HTML messages, $refs mid: references to $a ($resolved resolved, $withcid of them mid:msg/cid)"
echo "reports of B's messages, one run over A and B vs B alone with --mid-index: identical: $same"
# One input (A and B in one mbox) as well as two: a run over one input indexes its messages
# as it plans them and holds those with a dangling mid: until the input's end (a later one
# may carry the id), as B alone with --mid-index does; over two inputs it indexes all first.
six_runs() { # B B0 AB AB0 -> rows: the runs with and without references, three ways
  [ -f "$3" ] || cat "$a" "$1" > "$3"
  [ -f "$4" ] || cat "$a" "$2" > "$4"
  mapfile -t rows < <(rounds "$runs" \
    run_mid "$bin --check $a $1" \
    run_tag "$bin --check $a $2" \
    one_mid "$bin --check $3" \
    one_tag "$bin --check $4" \
    idx_mid "$bin --check --mid-index=$idx $1" \
    idx_tag "$bin --check --mid-index=$idx $2")
}
six_runs "$b" "$b0" "ab-$n.mbox" "ab0-$n.mbox"
printf '%-44s %9s %9s %9s\n' run "best s" "worst s" "cpu s"
for l in run_mid run_tag one_mid one_tag idx_mid idx_tag; do
  case $l in
    run_mid) what="one run: --check A B";;
    run_tag) what="one run: --check A B0 (no references)";;
    one_mid) what="one run, one input: --check AB";;
    one_tag) what="one run, one input: --check AB0";;
    idx_mid) what="--check --mid-index=A.idx B";;
    idx_tag) what="--check --mid-index=A.idx B0 (no references)";;
  esac
  printf '%-44s %9.3f %9.3f %9.3f\n' "$what" "$(field $l 2 "${rows[@]}")" "$(field $l 3 "${rows[@]}")" "$(field $l 4 "${rows[@]}")"
done
per_ref() { # kind(2 wall, 4 cpu) mid tag -> microseconds per reference
  awk -v a="$(field "$2" "$1" "${rows[@]}")" -v b="$(field "$3" "$1" "${rows[@]}")" -v r="$refs" 'BEGIN { printf "%.2f", (a - b) * 1e6 / r }'
}
per_ref_lines() { # label prefix
  local rw rc ow oc iw ic
  rw=$(per_ref 2 run_mid run_tag); rc=$(per_ref 4 run_mid run_tag)
  ow=$(per_ref 2 one_mid one_tag); oc=$(per_ref 4 one_mid one_tag)
  iw=$(per_ref 2 idx_mid idx_tag); ic=$(per_ref 4 idx_mid idx_tag)
  echo "${1}per reference, the run's own index, two inputs: $rw us wall, $rc us cpu"
  echo "${1}per reference, the run's own index, one input:  $ow us wall, $oc us cpu"
  echo "${1}per reference, --mid-index:                      $iw us wall, $ic us cpu"
  echo "${1}per-reference cost, --mid-index / the run's own index: $(ratio "$iw" "$rw")x wall, $(ratio "$ic" "$rc")x cpu (two inputs); $(ratio "$iw" "$ow")x wall, $(ratio "$ic" "$oc")x cpu (one input) (goal: at most 1x)"
}
per_ref_lines ""
echo "whole runs: B alone with --mid-index takes $(ratio "$(field idx_mid 2 "${rows[@]}")" "$(field run_mid 2 "${rows[@]}")")x the time of one run over A and B"
# The same with every reference to a message of its own (N/10 messages of N/(N/10) links:
# each message of A referred to once), so that nothing looked up before helps.
pc=$((n / nb)); bc=bc-$n.mbox; bc0=bc0-$n.mbox
[ -f "$bc" ] || gen refs "$corpus" "$nb" "$bc" b a "$n" "$pc" mid
[ -f "$bc0" ] || gen refs "$corpus" "$nb" "$bc0" b a "$n" "$pc" tag
"$bin" --check "$a" "$bc" | grep -F '"source":"'"$bc"'"' > run-cold.jsonl
"$bin" --check --mid-index="$idx" "$bc" > idx-cold.jsonl
crefs=$(grep -o '"kind":"mid"' idx-cold.jsonl | wc -l)
cdistinct=$(grep -o '"url":"mid:[^"/]*' idx-cold.jsonl | sort -u | wc -l)
same=no; cmp -s run-cold.jsonl idx-cold.jsonl && same=yes
echo
echo "cold: $bc, $nb messages of $pc links, $crefs mid: references to $cdistinct different messages; reports identical both ways: $same"
six_runs "$bc" "$bc0" "abc-$n.mbox" "abc0-$n.mbox"
refs=$crefs
per_ref_lines "cold, "
grep -o '"url":"mid:[^"]*' idx.jsonl | sed 's/^"url":"mid://; s,/.*,,' > lookup.ids
echo "the index's two queries alone (bench/mid_lookup.c, $(wc -l < lookup.ids) lookups, microseconds each):"
./mid_lookup "$idx" < lookup.ids | awk '{ printf "  %-12s %7.2f us  (%s found)\n", $1, $2, $3 }'

# (c) Peak memory as the index grows.
[ "${ONLY:-}" = b ] && exit 0
echo
echo "## (c) peak RSS as the archive grows"
printf '%-9s %12s %11s %11s %9s %11s %9s %12s %9s\n' messages "index bytes" "index s" "index RSS" "lookup s" "lookup RSS" "us/ref" "--check RSS" "check s"
for m in $grow; do
  archive "$m"
  am=a-$m.mbox; im=a-$m.idx
  read -r ti ri < <(rm -f "$im"; rss "$bin" index -q -o "$im" "$am")
  c=c-$m.mbox; c0=c0-$m.mbox
  [ -f "$c" ] || gen refs "$corpus" 1000 "$c" c a "$m" 20 mid
  [ -f "$c0" ] || gen refs "$corpus" 1000 "$c0" c a "$m" 20 tag
  read -r tl rl < <(rss "$bin" --check --mid-index="$im" "$c")
  cr=$("$bin" --check --mid-index="$im" "$c" | grep -o '"kind":"mid"' | wc -l)
  mapfile -t lrows < <(rounds "$runs" mid "$bin --check --mid-index=$im $c" tag "$bin --check --mid-index=$im $c0")
  us=$(awk -v a="$(field mid 2 "${lrows[@]}")" -v b="$(field tag 2 "${lrows[@]}")" -v r="$cr" 'BEGIN { printf "%.1f", (a - b) * 1e6 / r }')
  read -r tc rc < <(rss "$bin" --check "$am")
  printf '%-9s %12s %11s %7.1f MiB %9s %7.1f MiB %9s %8.1f MiB %9s\n' "$m" "$(stat -c %s "$im")" "$ti" \
    "$(echo "$ri / 1024" | bc -l)" "$tl" "$(echo "$rl / 1024" | bc -l)" "$us" "$(echo "$rc / 1024" | bc -l)" "$tc"
done
echo "(lookup: --check --mid-index over 1,000 messages with 20,000 references spread over the index;"
echo " us/ref: its best wall time less that of the same messages without references, per reference)"
