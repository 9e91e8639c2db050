#!/usr/bin/env python3
"""make_mbox.py CORPUS COUNT OUT: an mbox of COUNT messages from the corpus's single
messages (repeated; COUNT 0: each once, the corpus mbox of bench/instructions.sh), with mboxo ">From " quoting. Skips mboxes, empty files and files over 1 MB; keeps
CR-only and mixed line ends (the mbox issue 14 measured held them: an earlier version meant to
skip them but read the wrong column, and every figure in bench/README.md is on that selection)."""
import re, sys
corpus, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(f"{corpus}/INDEX.tsv").read().splitlines()
col = {name: k for k, name in enumerate(lines[0].split("\t"))}
rows = [l.split("\t") for l in lines[1:]]
msgs = []
for r in rows:
    size = int(r[col["size"]])
    if r[col["is_mbox"]] == "1" or size == 0 or size > 1_000_000:
        continue
    data = open(f"{corpus}/{r[col['path']]}", "rb").read()
    if not data.endswith(b"\n"):
        data += b"\n"
    msgs.append(re.sub(rb"(?m)^From ", b">From ", data))
count = count or len(msgs)
with open(path, "wb") as f:
    for i in range(count):
        f.write(b"From bench@example.org Sat Nov 21 00:00:00 2026\n" + msgs[i % len(msgs)] + b"\n")
