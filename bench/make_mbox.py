#!/usr/bin/env python3
"""make_mbox.py CORPUS COUNT OUT: an mbox of COUNT messages from the corpus's single
messages (repeated), with mboxo ">From " quoting. Skips mboxes, CR-only or mixed line ends,
empty files and files over 1 MB."""
import re, sys
corpus, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [l.split("\t") for l in open(f"{corpus}/INDEX.tsv").read().splitlines()[1:]]
msgs = []
for r in rows:
    if r[7] == "1" or r[18] in ("cr", "mixed") or int(r[1]) == 0 or int(r[1]) > 1_000_000:
        continue
    data = open(f"{corpus}/{r[0]}", "rb").read()
    if not data.endswith(b"\n"):
        data += b"\n"
    msgs.append(re.sub(rb"(?m)^From ", b">From ", data))
with open(path, "wb") as f:
    for i in range(count):
        f.write(b"From bench@example.org Sat Nov 21 00:00:00 2026\n" + msgs[i % len(msgs)] + b"\n")
