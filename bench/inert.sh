#!/usr/bin/env bash
# A message that cannot change: an mbox of MESSAGES plain-text messages (no HTML, no
# external-body, nothing to label; a third of them multipart with an attachment, a third
# DKIM-signed), through the default job, against cat (reading it) and against the same job
# with --report (which turns the inert copy off: every message parsed and planned whole), in
# interleaved rounds. Usage: bash bench/inert.sh [BUILD_DIR] [MESSAGES]   (RUNS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${2:-10000}
bin=$build/mimeuri
out=bench/out
runs=${RUNS:-5}
mkdir -p "$out"
. bench/lib.sh
mbox=$out/inert-$count.mbox
[ -f "$mbox" ] || python3 - "$count" "$mbox" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
text = "".join(f"Line {i} of a plain message that no pass has any business with.\n" for i in range(60))
with open(path, "w") as f:
    for i in range(n):
        f.write(f"From bench@example.org Sat Nov 21 00:00:00 2026\nFrom: a@example.org\nTo: b@example.org\n"
                f"Subject: plain {i}\nMessage-ID: <inert{i}@example.org>\nMIME-Version: 1.0\n")
        if i % 3 == 2:
            f.write("DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.org; s=s;\n"
                    " h=from:to:subject; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=AAAA\n")
        if i % 3 == 1:
            f.write('Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\n' + text +
                    "--b\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n" +
                    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n" * 40 + "--b--\n\n")
        else:
            f.write("Content-Type: text/plain; charset=us-ascii\n\n" + text + "\n")
PY
size=$(stat -c %s "$mbox")
echo "$count messages, $size bytes; $runs interleaved rounds"
mapfile -t rows < <(rounds "$runs" \
  cat "cat $mbox" \
  default "$bin $mbox" \
  whole "$bin --report=/dev/null $mbox")
base=$(echo "${rows[0]}" | awk '{ print $2 }')
printf '%-32s %8s %8s %8s %11s\n' run best worst cpu "per message"
for r in "${rows[@]}"; do
  set -- $r
  label=$1; [ "$1" = default ] && label="mimeuri (inert copy)"; [ "$1" = whole ] && label="mimeuri --report (parsed whole)"
  printf '%-32s %8.3f %8.3f %8.3f %8.1f us\n' "$label" "$2" "$3" "$4" "$(echo "$2 * 1000000 / $count" | bc -l)"
done
