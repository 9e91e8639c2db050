#!/usr/bin/env bash
# --in-place over a Maildir with --jobs: a Maildir of N files (default 10,000) from the
# corpus's single messages (repeated; half in cur/ with flags, half in new/), rewritten in
# place by the default job with --jobs=1 and --jobs=2, each on a fresh copy (the copy is not
# timed), best of three; the resulting folders and reports must be identical.
# Usage: bash bench/maildir.sh [BUILD_DIR] [FILES]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${2:-10000}
bin=$(realpath "$build/mimeuri")
corpus=${CORPUS:-../shared/corpus}
out=bench/out
mkdir -p "$out"
src=$out/maildir-$count
if [ ! -d "$src" ]; then
  python3 - "$corpus" "$count" "$src" <<'EOF'
import os, sys
corpus, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [l.split("\t") for l in open(f"{corpus}/INDEX.tsv").read().splitlines()[1:]]
msgs = [open(f"{corpus}/{r[0]}", "rb").read() for r in rows
        if r[7] != "1" and r[18] not in ("cr", "mixed") and 0 < int(r[1]) <= 1_000_000]
for sub in ("cur", "new", "tmp"):
    os.makedirs(f"{path}/{sub}", exist_ok=True)
for i in range(count):
    name = f"cur/17000{i:05d}.M{i}P1.bench:2,S" if i % 2 == 0 else f"new/17000{i:05d}.M{i}P1.bench"
    open(f"{path}/{name}", "wb").write(msgs[i % len(msgs)])
EOF
fi
size=$(du -sb "$src" | cut -f1)
best() { # jobs; seconds, best of three, each on a fresh copy
  local b=""
  for _ in 1 2 3; do
    rm -rf "$out/md-$1"; cp -a "$src" "$out/md-$1"; sync
    local s e; s=$(date +%s.%N)
    "$bin" --in-place --jobs="$1" --report="$out/md-$1.jsonl" "$out/md-$1"
    e=$(date +%s.%N)
    b=$(echo "$e - $s" | bc -l | awk -v a="$b" '{ print (a == "" || $1 < a) ? $1 : a }')
  done
  echo "$b"
}
t1=$(best 1)
t2=$(best 2)
same=no
diff -r "$out/md-1" "$out/md-2" >/dev/null && sed "s|/md-2/|/md-1/|" "$out/md-2.jsonl" | cmp -s - "$out/md-1.jsonl" && same=yes
changed=$(grep -c '"changed":true' "$out/md-1.jsonl" || true)
echo "Maildir: $count files, $size bytes ($changed changed by the default job); $(nproc) cores"
printf '%-10s %8s %12s\n' run seconds files/s
for row in "jobs=1 $t1" "jobs=2 $t2"; do
  set -- $row
  printf '%-10s %8.3f %12.0f\n' "$1" "$2" "$(echo "$count / $2" | bc -l)"
done
echo "speed-up jobs=2 over jobs=1: $(echo "$t1 / $t2" | bc -l | cut -c1-4)x; folders and reports identical: $same"
rm -rf "$out/md-1" "$out/md-2" "$out/md-1.jsonl" "$out/md-2.jsonl"
