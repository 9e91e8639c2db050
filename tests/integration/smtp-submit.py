#!/usr/bin/env python3
"""Submits FILE over SMTP: smtp-submit.py HOST PORT SENDER RCPT[,RCPT] FILE (loopback tests)."""
import smtplib, sys
host, port, sender, rcpts, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(","), sys.argv[5]
with smtplib.SMTP(host, port, timeout=20) as s:
    s.sendmail(sender, rcpts, open(path, "rb").read())
