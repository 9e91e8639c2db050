#!/usr/bin/env python3
"""The remote pass in the milter service (issue 52), over its socket with milter_ops.py's
client: the service's own setting is --remote=check; [policy:strict] turns --remote=block on
for one recipient domain, [policy:open] turns the pass off for another. The strict domain's message is delivered with its remote
image emptied (alt and box kept) and its tracker's URL emptied too: a tracker only the envelope names
(the image URL carries the MD5 of the RCPT TO address, which no header of the message holds:
To is a list's address). The open domain's message is delivered as it came. The report says
what was done; the log line counts it. Usage: milter_remote.py MIMEURI remote"""
import hashlib
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from milter_ops import Client, Service, fail, report  # noqa: E402

MIMEURI = sys.argv[1]

CONF = """[milter]
report = {report}
on-error = tempfail
remote = check
[policy:strict]
recipient-domain = private.example
remote = block
[policy:open]
recipient-domain = open.example
remote = keep
"""


def html_message(mid, rcpt):
    digest = hashlib.md5(rcpt.encode()).hexdigest()  # the second reader of the rule: hashlib
    html = (f'<p>Sale</p><img src="https://cdn.example/banner.png" alt="Banner" width="600" height="200">'
            f'<img src="https://t.example/open/{digest}.gif" alt="">')
    body = f"<html><body>{html}</body></html>\r\n".encode()
    fields = [(b"From", b"news@shop.example"), (b"To", b"list@lists.example"), (b"Message-ID", f"<{mid}>".encode()),
              (b"MIME-Version", b"1.0"), (b"Content-Type", b"text/html; charset=utf-8")]
    return fields, body, digest


def run(folder):
    rep = os.path.join(folder, "report.jsonl")
    conf = os.path.join(folder, "mimeuri.conf")
    with open(conf, "w") as f:
        f.write(CONF.format(report=rep))
    svc = Service(folder, ["--config=" + conf])
    bodies = {}
    for k, rcpt in enumerate(["bob@private.example", "ann@open.example"]):
        fields, body, digest = html_message(f"r{k}@shop.example", rcpt)
        c = Client(svc.sock)
        c.envelope("192.0.2.1", "news@shop.example", [rcpt])
        if c.message(fields, body) != b"a":
            fail(f"message r{k} was not accepted")
        c.close()
        bodies[k] = (c.body, digest)
    blocked, digest = bodies[0]
    # The strict domain's copy: the banner's URL emptied, its alt and box kept; the tracker's <img> gone.
    want = b'<img src="" alt="Banner" width="600" height="200">'
    if want not in blocked or b"cdn.example" in blocked or digest.encode() in blocked or b"<p>Sale</p>" not in blocked:
        fail(f"the strict domain's message was not blocked as it should be: {blocked[:600]!r}")
    if bodies[1][0]:
        fail(f"the open domain's message was changed: {bodies[1][0][:300]!r}")
    svc.stop()
    lines = {r["message_id"]: r for r in report(rep)}
    entries = lines.get("r0@shop.example", {}).get("remote", [])
    said = sorted((e["host"], e["tracker"], e["action"]) for e in entries)
    if said != [("cdn.example", None, "blocked"), ("t.example", "recipient", "removed")]:
        fail(f"the report of the strict domain's message: {entries}")
    if lines.get("r1@shop.example", {}).get("remote"):
        fail("the open domain's message has remote entries: the pass ran for it")
    print("remote: blocked by policy for private.example (the envelope's tracker named and removed), left for open.example")


folder = tempfile.mkdtemp(prefix="mimeuri-remote-")
try:
    run(folder)
finally:
    if not os.environ.get("KEEP"): shutil.rmtree(folder, ignore_errors=True)
