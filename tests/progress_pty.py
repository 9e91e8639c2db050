#!/usr/bin/env python3
"""The progress line on a terminal: progress_pty.py MIMEURI.

The run with one job over an mbox whose every message has a mid: reference to a message not
(yet) seen, on a pseudo-terminal (python pty) as standard error: the default run, and one
with --report, whose plans wait for the index until the input's end (where the line stayed
at "0%" or "1%": it went by the messages written). The line must move (at least three
different shares, never going back) and end at 100%; the output must be the same bytes as
the run piped; the summary line follows."""
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from skip import skip  # noqa: E402

MIMEURI = sys.argv[1]


def make_mbox(path, count):
    """Messages with an HTML part whose image is a mid: reference no message answers, and a
    padding, about 1 KiB each."""
    with open(path, "wb") as f:
        for i in range(count):
            f.write(b"From t@example.test Sat Nov 21 00:00:00 2026\n")
            f.write((f"From: t@example.test\nMessage-ID: <m{i}@example.test>\nSubject: {i}\n"
                     "MIME-Version: 1.0\nContent-Type: text/html\n\n"
                     f"<p><img src=\"mid:nowhere{i}@example.test\"></p>\n<p>{'x' * 900}</p>\n\n").encode())


def run_on_pty(args):
    """Runs MIMEURI with its standard error on a pseudo-terminal; (status, what it drew)."""
    try:
        master, slave = pty.openpty()
    except OSError as e:
        skip(f"no pseudo-terminal here: {e}")
    p = subprocess.Popen([MIMEURI] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    drawn = b""
    while True:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            drawn += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    return p.wait(), drawn.decode(errors="replace")


def check(d, mbox, extra):
    began = time.time()
    status, drawn = run_on_pty(["--no-config", mbox, "-o", os.path.join(d, "tty.mbox")] + extra)
    seconds = time.time() - began
    if status != 0:
        return f"exit {status}:\n{drawn}"
    lines = [l.replace("\x1b[K", "") for l in re.split(r"[\r\n]+", drawn) if l.strip()]
    shares = [int(m.group(1)) for l in lines for m in [re.search(r", (\d+)%", l)] if m]
    print(f"{' '.join(extra) or 'default'}: {seconds:.1f} s; the line showed {shares}")
    if len(set(shares)) < 3:
        return f"the line did not move (fewer than 3 shares shown):\n{lines}"
    if shares != sorted(shares):
        return f"the share went back: {shares}"
    if shares[-1] != 100:
        return f"the line did not reach 100%: {shares}"
    if not re.search(r"mimeuri: 8000 messages, 0 changed, 8000 dangling references", drawn):
        return f"no summary line for 8000 messages:\n{lines[-3:]}"
    piped = subprocess.run([MIMEURI, "--no-config", mbox, "-o", os.path.join(d, "pipe.mbox")] + extra,
                           stderr=subprocess.PIPE, check=False)
    if piped.returncode != 0 or piped.stderr:
        return f"the piped run: {piped.returncode} {piped.stderr!r}"
    with open(os.path.join(d, "tty.mbox"), "rb") as a, open(os.path.join(d, "pipe.mbox"), "rb") as b:
        if a.read() != b.read():
            return "the run on a terminal wrote other bytes than the piped run"
    return None


def main():
    with tempfile.TemporaryDirectory(prefix="mimeuri-progress-") as d:
        mbox = os.path.join(d, "in.mbox")
        make_mbox(mbox, 8000)
        for extra in ([], ["--report=" + os.path.join(d, "r.jsonl")]):
            why = check(d, mbox, extra)
            if why:
                print(f"FAIL ({' '.join(extra) or 'default'}): {why}")
                return 1
    return 0


sys.exit(main())
