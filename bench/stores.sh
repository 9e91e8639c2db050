#!/usr/bin/env bash
# One cold Message-ID lookup in three stores (issue 17): a hash table in memory (the kind the
# run's own index is), LMDB, and the mimeuri index (SQLite) with MidStore::find's statement;
# the same ids in the same shuffled order, each once, ten to a read transaction
# (bench/stores.cc says what each does). Per index: CPU microseconds per lookup (best of
# ROUNDS) and, with valgrind, instructions per lookup (callgrind, the lookups alone), each as
# a ratio to the hash table measured in the same run.
# Needs liblmdb-dev and valgrind (apt-get install liblmdb-dev valgrind): a bench tool only,
# not a dependency of mimeuri.
# Usage: bash bench/stores.sh [MESSAGES...] [BUILD_DIR=build]   (MESSAGES: 2000 100000; the
#        index bench/out/archive/a-N.idx, made as bench/archive.sh makes it when missing)
#        ROUNDS=3
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
sizes=${*:-2000 100000}
out=bench/out/archive
mkdir -p "$out"
g++ -std=c++20 -O2 -o "$out/stores" bench/stores.cc -lsqlite3 -llmdb
echo "bench/stores.sh: $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $sizes; do
  idx=$out/a-$n.idx
  if [ ! -f "$idx" ]; then
    [ -f "$out/a-$n.mbox" ] || python3 bench/make_archive.py corpus "$(realpath "${CORPUS:-../shared/corpus}")" "$n" "$out/a-$n.mbox" a
    (cd "$out" && "$OLDPWD/$build/mimeuri" index -q -o "a-$n.idx" "a-$n.mbox")
  fi
  echo
  echo "## $idx ($(stat -c %s "$idx") bytes)"
  printf '%-7s %9s %9s %9s %7s %12s %7s\n' store lookups found "us/lookup" ratio "instr/lookup" ratio
  base_us=""; base_ir=""
  for store in hash lmdb sqlite; do
    read -r _ looked found us < <("$out/stores" "$idx" "$store" "${ROUNDS:-3}")
    ir=-
    if command -v valgrind > /dev/null; then
      total=$(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/dev/null "$out/stores" "$idx" "$store" 1 2>&1 >/dev/null |
              sed -n 's/.*Collected : //p')
      ir=$((total / looked))
    fi
    [ -n "$base_us" ] || { base_us=$us; base_ir=$ir; }
    printf '%-7s %9s %9s %9s %7s %12s %7s\n' "$store" "$looked" "$found" "$us" "$(awk -v a="$us" -v b="$base_us" 'BEGIN { printf "%.1fx", a / b }')" \
      "$ir" "$([ "$ir" = - ] && echo - || awk -v a="$ir" -v b="$base_ir" 'BEGIN { printf "%.1fx", a / b }')"
  done
done
