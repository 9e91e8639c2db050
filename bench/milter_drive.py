#!/usr/bin/env python3
"""Drives a throw-away Postfix for bench/milter.sh: milter_drive.py PORT MAILDIR FILE SEQ PAR.

Latency: SEQ messages one after another, each on its own SMTP connection; for each, the time
the SMTP transaction took (connect to the 250 after DATA) and the time until it is in the
Maildir. Throughput: PAR messages over 4 connections at once, from the first connection to
the last delivery. Prints one line: smtp_median_ms delivery_median_ms messages_per_second.
"""
import os, smtplib, statistics, sys, threading, time

port, maildir, path, seq, par = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
msg = open(path, "rb").read()
new = os.path.join(maildir, "new")


def count():
    try:
        return len(os.listdir(new))
    except FileNotFoundError:
        return 0


def wait_for(n, limit=120):
    end = time.monotonic() + limit
    while count() < n:
        if time.monotonic() > end:
            sys.exit(f"only {count()} of {n} delivered")
        time.sleep(0.0005)


smtp_ms, deliv_ms = [], []
for _ in range(seq):
    have = count()
    t0 = time.perf_counter()
    with smtplib.SMTP("127.0.0.1", port, timeout=60) as s:
        s.sendmail("alice@example.test", ["carol@localhost"], msg)
        t1 = time.perf_counter()
    wait_for(have + 1)
    t2 = time.perf_counter()
    smtp_ms.append((t1 - t0) * 1000)
    deliv_ms.append((t2 - t0) * 1000)

have = count()


def sender(k):
    with smtplib.SMTP("127.0.0.1", port, timeout=120) as s:
        for _ in range(k):
            s.sendmail("alice@example.test", ["carol@localhost"], msg)


t0 = time.perf_counter()
threads = [threading.Thread(target=sender, args=(par // 4,)) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
wait_for(have + 4 * (par // 4))
rate = 4 * (par // 4) / (time.perf_counter() - t0)
print(f"{statistics.median(smtp_ms):.2f} {statistics.median(deliv_ms):.2f} {rate:.1f}")
