#!/usr/bin/env python3
"""files_to_mbox.py LIST OUT: the messages named in LIST (one path a line) as one mbox, in
that order, with mboxo ">From " quoting (as make_mbox.py), so that one mimeuri run reads
the messages another program reads one file at a time."""
import re, sys
with open(sys.argv[2], "wb") as out:
    for path in open(sys.argv[1]).read().split("\n"):
        if not path:
            continue
        data = open(path, "rb").read()
        if not data.endswith(b"\n"):
            data += b"\n"
        out.write(b"From bench@example.org Mon Jan  1 00:00:00 2024\n")
        out.write(re.sub(rb"(?m)^From ", b">From ", data) + b"\n") # a blank line before the next
