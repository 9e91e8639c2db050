#!/usr/bin/env bash
# --remote (issue 52): what the corpus holds and what it costs.
#  1. counts: every message of the corpus through --remote=check, the "remote" entries of the
#     report tallied (fetches, by kind, trackers by shape, hosts, messages with any), then
#     through --remote=block, and the same output checked again: fetches left;
#  2. linear time: pages of N and 10N remote images (bench/make_remote.py), --remote=block
#     on each, best of RUNS; the ratio should be near 10 (quadratic: 100);
# Roundcube's washer side by side (requests left, text and layout kept, time): bench/remote_peers.sh.
# Usage: bash bench/remote.sh [BUILD_DIR]   (RUNS=3, N=2000)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 3
n=${N:-2000}
d=$out/remote
rm -rf "$d"
mkdir -p "$d"
corpus=${CORPUS:-../shared/corpus}
echo "load before: $(uptime)"

echo "== 1. the corpus through --remote=check, then --remote=block and check again"
tail -n +2 "$corpus/INDEX.tsv" | cut -f1 | sed "s|^|$corpus/|" | tr '\n' '\0' > "$d/files"
: > "$d/check.jsonl"
while IFS= read -r -d '' f; do
  "$bin" --check --passes=remote --remote=check --report="$d/one.jsonl" "$f" > /dev/null 2>&1 || true
  [ -f "$d/one.jsonl" ] && cat "$d/one.jsonl" >> "$d/check.jsonl" && rm -f "$d/one.jsonl"
done < "$d/files"
python3 - "$d/check.jsonl" <<'PY'
import collections, json, sys
msgs = with_remote = fetches = trackers = 0
kinds, why, hosts = collections.Counter(), collections.Counter(), collections.Counter()
for line in open(sys.argv[1]):
    r = json.loads(line)
    msgs += 1
    entries = r.get("remote", [])
    with_remote += bool(entries)
    for e in entries:
        fetches += 1
        kinds[e["kind"]] += 1
        hosts[e["host"]] += 1
        if e["tracker"]:
            trackers += 1
            why[e["tracker"]] += 1
print(f"messages {msgs}, with remote content {with_remote}; fetches {fetches} ({dict(kinds)}); "
      f"trackers {trackers} ({dict(why)}); hosts {len(hosts)}; top: {hosts.most_common(5)}")
PY
mkdir -p "$d/blocked"
: > "$d/block.jsonl"
i=0
while IFS= read -r -d '' f; do
  i=$((i + 1))
  "$bin" --passes=remote --remote=block --report="$d/one.jsonl" "$f" > "$d/blocked/$i" 2>/dev/null || cp "$f" "$d/blocked/$i"
  [ -f "$d/one.jsonl" ] && cat "$d/one.jsonl" >> "$d/block.jsonl" && rm -f "$d/one.jsonl"
done < "$d/files"
: > "$d/after.jsonl"
for f in "$d"/blocked/*; do
  "$bin" --check --passes=remote --remote=check --report="$d/one.jsonl" "$f" > /dev/null 2>&1 || true
  [ -f "$d/one.jsonl" ] && cat "$d/one.jsonl" >> "$d/after.jsonl" && rm -f "$d/one.jsonl"
done
python3 - "$d/block.jsonl" "$d/after.jsonl" <<'PY'
import collections, json, sys
done = collections.Counter((e["action"], e.get("reason", "")) for line in open(sys.argv[1])
                           for e in json.loads(line).get("remote", []))
left = [e for line in open(sys.argv[2]) for e in json.loads(line).get("remote", [])]
print(f"block: {dict(done)}")
print(f"after block, checked again: {len(left)} fetches found (block kept {sum(n for (a, _), n in done.items() if a == 'kept')} "
      f"in signed parts, left {sum(n for (a, r), n in done.items() if a == 'none' and r != 'keep-host')} it could not change)")
PY

echo "== 2. linear time: $n and $((10 * n)) remote images, --remote=block, best of $runs"
python3 bench/make_remote.py "$d/small.eml" "$n"
python3 bench/make_remote.py "$d/large.eml" $((10 * n))
small=$(best_of_3 "$bin" --remote=block "$d/small.eml")
large=$(best_of_3 "$bin" --remote=block "$d/large.eml")
echo "N=$n: ${small}s, 10N: ${large}s, ratio $(echo "scale=1; $large / $small" | bc) (linear: 10)"
echo "bytes: $(stat -c %s "$d/small.eml") and $(stat -c %s "$d/large.eml")"

echo "load after: $(uptime)"
