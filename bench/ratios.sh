#!/usr/bin/env bash
# Issue 53's figures: the default job against GMime (parse and write back,
# bench/gmime_roundtrip.c), Python's email (the same job, bench/pyjob.py) and cat, in
# interleaved rounds on three inputs:
#   corpus   every single corpus message under 1 MB, as one mbox (bench/make_mbox.py ... 0)
#   1 GB     that mbox repeated until it passes 1 GiB (its Message-IDs repeat: the same job
#            for every program, and mimeuri's index sees each id many times)
#   Maildir  the same messages, a file each (cur/ and new/), written out as one mbox by
#            every program (mimeuri --format=mbox)
# For each: CPU seconds (user + system, the median of RUNS rounds), MB/s of CPU, and each
# program's CPU over mimeuri's. Then callgrind's Ir a byte for mimeuri on the corpus mbox and
# the Maildir (IR_1G=1: the 1 GB mbox too, about 50 times its run). Outputs go to /dev/null;
# the machine's load is printed before and after.
# Usage: bash bench/ratios.sh [BUILD_DIR]   (RUNS=3; SETS="corpus 1g maildir"; PY=0 leaves Python out)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-build}" 3
bin=$(realpath "$bin")
corpus=${CORPUS:-../shared/corpus}
mbox=$out/ratios-corpus.mbox
big=$out/ratios-1g.mbox
md=$out/ratios-maildir
gr=$out/gmime_roundtrip
gcc -O2 -o "$gr" bench/gmime_roundtrip.c $(pkg-config --cflags --libs gmime-3.0)
[ -f "$mbox" ] || python3 bench/make_mbox.py "$corpus" 0 "$mbox" > /dev/null
if [ ! -f "$big" ]; then
  : > "$big.tmp"
  while [ "$(stat -c %s "$big.tmp")" -lt $((1 << 30)) ]; do cat "$mbox" >> "$big.tmp"; done
  mv "$big.tmp" "$big"
fi
if [ ! -d "$md" ]; then
  rm -rf "$md.tmp"
  # The mbox's messages as the corpus files they came from: every other one in new/.
  python3 - "$corpus" "$md.tmp" <<'EOF'
import os, sys
corpus, path = sys.argv[1], sys.argv[2]
rows = [l.split("\t") for l in open(f"{corpus}/INDEX.tsv").read().splitlines()[1:]]
msgs = [open(f"{corpus}/{r[0]}", "rb").read() for r in rows if r[7] != "1" and 0 < int(r[1]) <= 1_000_000]
for sub in ("cur", "new", "tmp"):
    os.makedirs(f"{path}/{sub}", exist_ok=True)
for i, m in enumerate(msgs):
    name = f"cur/17000{i:05d}.M{i}P1.bench:2,S" if i % 2 == 0 else f"new/17000{i:05d}.M{i}P1.bench"
    open(f"{path}/{name}", "wb").write(m)
EOF
  mv "$md.tmp" "$md"
fi

echo "load before: $(uptime | sed 's/.*load average: //')"
echo "mimeuri: $bin ($(git rev-parse --short HEAD 2>/dev/null || echo '?')); $runs interleaved rounds; CPU = user + system, median"
printf '| input | bytes | program | CPU s | MB/s of CPU | × mimeuri'"'"'s CPU |\n|---|---|---|---|---|---|\n'
for set in ${SETS:-corpus 1g maildir}; do
  case $set in
    corpus | 1g)
      f=$mbox; [ "$set" = 1g ] && f=$big
      size=$(stat -c %s "$f")
      args=(cat "cat $f" gmime "$gr $f" mimeuri "$bin $f")
      [ "${PY:-1}" = 0 ] || args+=(python-email "python3 bench/pyjob.py $f") ;;
    maildir)
      size=$(du -sb --apparent-size "$md" | cut -f1)
      args=(cat "find $md -type f -print0 | xargs -0 cat" gmime "find $md -type f -print0 | xargs -0 $gr --files"
            mimeuri "$bin --format=mbox $md")
      [ "${PY:-1}" = 0 ] || args+=(python-email "python3 bench/pyjob.py $md") ;;
  esac
  # A run over the corpus or the Maildir takes a tenth of a second: each round runs every
  # command REPEAT times (10) and the CPU is divided by it, past /usr/bin/time's 10 ms steps.
  rep=${REPEAT:-10}; [ "$set" = 1g ] && rep=1
  for ((k = 1; k < ${#args[@]}; k += 2)); do args[k]="for _ in \$(seq $rep); do ${args[k]}; done"; done
  mapfile -t rows < <(rounds_median "$runs" "${args[@]}")
  ref=$(printf '%s\n' "${rows[@]}" | awk '$1 == "mimeuri" { print $5 }')
  for r in "${rows[@]}"; do
    read -r label _ _ _ cpu _ <<<"$r"
    awk -v s="$set" -v b="$size" -v l="$label" -v c="$cpu" -v m="$ref" -v r="$rep" 'BEGIN { c /= r; m /= r
      printf "| %s | %d | %s | %.3f | %s | %s |\n", s, b, l, c, (c > 0 ? sprintf("%.0f", b / 1e6 / c) : "-"), (m > 0 ? sprintf("%.2f", c / m) : "-") }'
  done
done
echo "load after: $(uptime | sed 's/.*load average: //')"

# Instructions a byte (callgrind's Ir: load does not move it).
ir() { # input... -> Ir
  local f; f=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$f" "$bin" "$@" > /dev/null 2>&1
  callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'
  rm -f "$f"
}
for set in corpus maildir ${IR_1G:+1g}; do
  case $set in
    corpus) size=$(stat -c %s "$mbox"); n=$(ir "$mbox") ;;
    1g) size=$(stat -c %s "$big"); n=$(ir "$big") ;;
    maildir) size=$(du -sb --apparent-size "$md" | cut -f1); n=$(ir --format=mbox "$md") ;;
  esac
  awk -v s="$set" -v n="$n" -v b="$size" 'BEGIN { printf "%s: %.1f M instructions, %.1f a byte\n", s, n / 1e6, n / b }'
done
