#!/usr/bin/env bash
# Outputs, reports and exit statuses the same as another binary's, file by file (a change
# that must change no result: a move of code, an interface reshaped). Every corpus file
# (../shared/corpus/INDEX.tsv), every golden case's input, every hostile input kept in
# testdata/fuzz-regressions, each run by both binaries with each of ARGS_LIST's option sets
# (';'-separated; each run also writes --report=FILE), then standard output, the report and
# the exit status compared. Prints the differing runs and one summary line; exits 1 if any
# differs. bench/identical.sh compares the outputs of large and mbox inputs, file and pipe.
# REPORT=0: no --report (the default job's path: a message no pass can change is copied
# without a full parse only then); ARGS_LIST=' ' runs the default job alone.
# Usage: BEFORE=/path/to/the/other/mimeuri bash bench/same_results.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/mimeuri
corpus=${CORPUS:-../shared/corpus}
: "${BEFORE:?BEFORE=/path/to/the/other/mimeuri}"
IFS=';' read -r -a arg_sets <<< "${ARGS_LIST:---passes=all;--cid=inline --mid=repair --summary-header;--cid=check --labels=all --external-body=check;--cid=repair --location-to-cid --drop-inlined}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

inputs=()
if [ -f "$corpus/INDEX.tsv" ]; then
  while IFS=$'\t' read -r path _; do inputs+=("$corpus/$path"); done < <(tail -n +2 "$corpus/INDEX.tsv")
fi
for f in testdata/cases/*/input.eml testdata/fuzz-regressions/*; do inputs+=("$f"); done

runs=0 differ=0
for args in "${arg_sets[@]}"; do
  for in in "${inputs[@]}"; do
    for side in new before; do
      exe=$bin; [ $side = before ] && exe=$BEFORE
      # shellcheck disable=SC2086
      report=(--report="$work/$side.jsonl")
      if [ "${REPORT:-1}" = 0 ]; then report=(); : > "$work/$side.jsonl"; fi
      set +e; timeout 60 "$exe" $args "${report[@]}" "$in" > "$work/$side.out" 2>/dev/null
      echo $? > "$work/$side.status"; set -e
    done
    runs=$((runs + 1))
    for what in out jsonl status; do
      if ! cmp -s "$work/new.$what" "$work/before.$what"; then
        echo "DIFFERENT ($what) $in $args"; differ=$((differ + 1)); break
      fi
    done
  done
done
# What the option tables make: --help and the effective configuration.
for args in --help --print-config "--print-config --passes=references --cid=inline"; do
  # shellcheck disable=SC2086
  if ! cmp -s <("$bin" $args 2>&1) <("$BEFORE" $args 2>&1); then echo "DIFFERENT mimeuri $args"; differ=$((differ + 1)); fi
done
echo "$runs runs compared ($(( ${#inputs[@]} )) inputs x ${#arg_sets[@]} option sets): $differ differ"
[ "$differ" = 0 ]
