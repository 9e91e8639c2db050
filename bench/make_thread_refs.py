#!/usr/bin/env python3
"""make_thread_refs.py M OUT [known|unknown]: one thread of M messages for bench/thread_index.sh.

Message k replies to message k+1 (a thread read backwards: the replies come first, as an mbox
of a list sorted newest first holds them). Every message's References name its parent, then
(nearest, last) 20 of its deepest replies, m0 .. m19: the ids the threading of the archive's
index used to check by a walk up the whole thread. "unknown": the same bytes, but the 20 name
ids no message has (z0 .. z19 for m0 .. m19), so that only the threading's work differs.
"""
import sys

m, out = int(sys.argv[1]), sys.argv[2]
known = (sys.argv[3] if len(sys.argv) > 3 else "known") == "known"
with open(out, "w") as f:
    for k in range(m):
        refs = "".join(f" <{'m' if known else 'z'}{j}@t>" for j in range(20))
        parent = f"References: <m{k + 1}@t>{refs}\n" if k + 1 < m else ""
        f.write(f"From a@x Mon Jan  1 00:00:00 2024\nFrom: a@x\nSubject: message {k}\n"
                f"Date: Mon, 1 Jan 2024 00:00:00 +0000\nMessage-ID: <m{k}@t>\n{parent}\ntext {k}\n\n")
