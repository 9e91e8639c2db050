#!/usr/bin/env bash
# The recipes of docs/scale.md, run on a corpus-made archive and checked against one run.
# The archive: f.mbox (HTML messages whose mid: links point forward, into a.mbox), a.mbox
# (MESSAGES corpus messages, bench/make_archive.py) and b.mbox (links back into a.mbox); one
# link in ten has its domain in capitals, which --mid=repair rewrites only when the link
# resolves, so the output's bytes show what was found. archive.mbox is the three in a row.
#  1. one job per mbox file (parallel -k ... ::: f.mbox a.mbox b.mbox) against one run over
#     the three files: the same bytes, the same report;
#  2. one mbox in blocks (parallel --pipepart --recstart 'From ' --recend '\n\n' -k) against
#     one run over archive.mbox: the same bytes; the same references resolved the same way
#     (the report's source is "-" and its index and offsets count from each block's start);
#     also without --mid-index (references into other blocks dangle) and with --recstart alone
#     (blocks may start at a "From " inside a line: counted over 64 KiB blocks);
#  3. with SSHLOGIN set (e.g. SSHLOGIN=2/host1,2/host2, and SSH="ssh -F config" if needed),
#     recipe 2 again with the jobs spread over those machines (same paths on every machine).
# Usage: bash bench/shards.sh [MESSAGES] [BUILD_DIR]   (MESSAGES 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
n=${1:-20000}
build=${2:-build}
bin=$(realpath "$build/mimeuri")
corpus=$(realpath "${CORPUS:-../shared/corpus}")
out=bench/out/shards
mkdir -p "$out"
cd "$out"
PATH=$(dirname "$bin"):$PATH # the recipes say "mimeuri"
export PATH
block=${BLOCK:-1M}
opts="--mid=repair"
gen() { python3 "$top/bench/make_archive.py" "$@"; }
[ -f a.mbox ] || gen corpus "$corpus" "$n" a.mbox a
[ -f f.mbox ] || gen refs "$corpus" "$((n / 20))" f.mbox f a "$n" 10 mid 10
[ -f b.mbox ] || gen refs "$corpus" "$((n / 20))" b.mbox b a "$n" 10 mid 10
cat f.mbox a.mbox b.mbox > archive.mbox
ok=0; bad=0
check() { # what, then a command that succeeds when it holds
  local what=$1; shift
  if "$@"; then echo "  ok: $what"; ok=$((ok + 1)); else echo "  FAILED: $what"; bad=$((bad + 1)); fi
}
secs() { local s e; s=$(date +%s.%N); "$@"; e=$(date +%s.%N); printf '%.2f' "$(echo "$e - $s" | bc)"; }
# What a reference came to, message by message, whatever the shard: the message, whether it
# changed, and each reference's URL, status and action.
resolved() { jq -c '[.message_id, .changed, [.refs[] | [.url, .status, .action]]]' "$@"; }
in_order() { ls "$@" | sort -t. -k2,2n | xargs cat; } # part.1.jsonl part.2.jsonl ... by job
echo "archive: $(grep -c '^From ' archive.mbox) messages, $(stat -c %s archive.mbox) bytes;" \
  "$(grep -o 'href="mid:' f.mbox b.mbox | wc -l) mid: links; parallel $(parallel --version | head -1 | awk '{print $3}'), $(nproc) cores"

echo "1. one job per mbox file"
t_one=$(secs sh -c "mimeuri $opts --report=files.jsonl f.mbox a.mbox b.mbox > files.out")
rm -f files.idx part.*.jsonl
t_idx=$(secs mimeuri index -q -o files.idx f.mbox a.mbox b.mbox)
t_par=$(secs sh -c "parallel -k mimeuri $opts --mid-index=files.idx --report=part.{#}.jsonl {} ::: f.mbox a.mbox b.mbox > perfile.out")
in_order part.*.jsonl > perfile.jsonl
echo "  one run ${t_one} s; index ${t_idx} s, then parallel ${t_par} s"
check "output bytes identical to one run" cmp -s files.out perfile.out
check "report identical to one run (sources, indexes, offsets, targets)" cmp -s files.jsonl perfile.jsonl
check "the output differs from the input (repairs were made)" bash -c '! cmp -s files.out <(cat f.mbox a.mbox b.mbox)'

echo "2. one mbox in blocks (--pipepart, --block $block)"
t_one=$(secs sh -c "mimeuri $opts --report=one.jsonl archive.mbox > one.out")
rm -f archive.idx part.*.jsonl
t_idx=$(secs mimeuri index -q -o archive.idx archive.mbox)
t_par=$(secs sh -c "parallel --pipepart -a archive.mbox --block $block --recstart 'From ' --recend '\n\n' -k mimeuri $opts --mid-index=archive.idx --report=part.{#}.jsonl > parts.out")
jobs=$(ls part.*.jsonl | wc -l)
in_order part.*.jsonl > parts.jsonl
echo "  one run ${t_one} s; index ${t_idx} s, then parallel ${t_par} s ($jobs jobs)"
check "output bytes identical to one run" cmp -s one.out parts.out
check "every reference resolved as in one run" cmp -s <(resolved one.jsonl) <(resolved parts.jsonl)
check "the report's source is \"-\"" bash -c "! jq -r .source parts.jsonl | grep -vqx -- -"
check "offsets count from each block's start ($jobs messages at offset 0)" \
  test "$(jq -r .offset parts.jsonl | grep -cx 0)" -eq "$jobs"
t_big=$(secs sh -c "parallel --pipepart -a archive.mbox --block 32M --recstart 'From ' --recend '\n\n' -k mimeuri $opts --mid-index=archive.idx > big.out")
echo "  with --block 32M: parallel ${t_big} s"
check "output bytes identical to one run (32M blocks)" cmp -s one.out big.out
rm -f part.*.jsonl
parallel --pipepart -a archive.mbox --block "$block" --recstart 'From ' --recend '\n\n' -k mimeuri $opts --report=part.{#}.jsonl > noindex.out
in_order part.*.jsonl > noindex.jsonl
dangling() { grep -o '"status":"dangling"' "$1" | wc -l; }
echo "  without --mid-index: $(dangling noindex.jsonl) references dangling (one run: $(dangling one.jsonl))"
check "without --mid-index the bytes differ from one run" bash -c '! cmp -s one.out noindex.out'
# Where blocks start, with --recstart alone and with --recend too. GNU parallel looks for the
# split string from each block border on, so what it finds depends on the block size: small
# blocks, for many borders. Each job prints its block's size; the sizes give the cuts.
cuts() { # parallel options... -> "blocks inside_a_line after_a_quoting_> example"
  parallel --pipepart -a archive.mbox --block 64k "$@" -k 'wc -c' | python3 -c '
import sys
data = open("archive.mbox", "rb").read()
off, inside, quoted, ex = 0, 0, 0, ""
sizes = [int(x) for x in sys.stdin]
for n in sizes[:-1]:
    off += n
    if data[off - 1:off] != b"\n":
        inside += 1
        quoted += data[off - 1:off] == b">"
        ex = ex or data[off:off + 30].split(b"\n")[0].decode("latin-1")
print(len(sizes), inside, quoted, ex)'
}
read -r nb inside quoted ex < <(cuts --recstart 'From ')
echo "  --recstart alone, --block 64k: $inside of $nb blocks start inside a line ($quoted of them" \
  "between the > and the From of a quoted >From line), e.g. at \"$ex\""
read -r nb inside_end _ < <(cuts --recstart 'From ' --recend '\n\n')
check "with --recend '\\n\\n' no block starts inside a line ($nb blocks of 64k)" test "$inside_end" -eq 0

if [ -n "${SSHLOGIN:-}" ]; then
  echo "3. several machines (--sshlogin $SSHLOGIN)"
  rm -f part.*.jsonl
  t_par=$(secs sh -c "parallel --ssh '${SSH:-ssh}' --sshlogin '$SSHLOGIN' --workdir '$PWD' --pipepart -a archive.mbox --block $block --recstart 'From ' --recend '\n\n' -k '$bin' $opts --mid-index=archive.idx --report=part.{#}.jsonl > ssh.out")
  in_order part.*.jsonl > ssh.jsonl
  echo "  parallel over ssh ${t_par} s ($(ls part.*.jsonl | wc -l) jobs)"
  check "output bytes identical to one run" cmp -s one.out ssh.out
  check "every reference resolved as in one run" cmp -s <(resolved one.jsonl) <(resolved ssh.jsonl)
fi
echo "$ok checks passed, $bad failed"
[ "$bad" -eq 0 ]
