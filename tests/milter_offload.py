#!/usr/bin/env python3
"""The offload pass in the milter service (issue 51), over its socket with milter_ops.py's
client: by [policy:] recipient-domain, the archive's message has its attachment stored before
it is accepted (the file named by its HMAC under the store's key, checked here with Python's
hmac) and its body replaced by one holding the link; another domain's message is left; a
store that cannot be written (chattr +i: root writes anywhere else) answers 451, nothing
replaced, the report saying why. Usage: milter_offload.py MIMEURI offload"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from milter_ops import Client, Service, counters_now, fail, report  # noqa: E402

MIMEURI = sys.argv[1]


OFFLOAD = """[milter]
report = {report}
on-error = tempfail
[policy:archive]
recipient-domain = archive.example.org
offload-min = 4000
offload-dir = {store}
offload-url = https://files.example.org/{{name}}/{{filename}}
"""


def attachment_message(mid):
    """A message with a 6,000-byte attachment (base64 in 76-character lines, CRLF)."""
    import base64
    data = bytes(k % 253 for k in range(6000))
    body = (b'--m\r\nContent-Type: text/plain\r\n\r\nSee the file.\r\n\r\n--m\r\n'
            b'Content-Type: application/octet-stream; name="f.bin"\r\nContent-Disposition: attachment; filename="f.bin"\r\n'
            b"Content-Transfer-Encoding: base64\r\n\r\n" + base64.encodebytes(data).replace(b"\n", b"\r\n") + b"--m--\r\n")
    fields = [(b"From", b"a@example.org"), (b"Message-ID", f"<{mid}>".encode()), (b"MIME-Version", b"1.0"),
              (b"Content-Type", b'multipart/mixed; boundary="m"')]
    return fields, body, data


def offload(folder):
    """The three cases above."""
    import hashlib, hmac
    rep, store = os.path.join(folder, "report.jsonl"), os.path.join(folder, "store")
    os.mkdir(store)
    conf = os.path.join(folder, "mimeuri.conf")
    with open(conf, "w") as f:
        f.write(OFFLOAD.format(report=rep, store=store))
    stats = os.path.join(folder, "mimeuri.prom")
    svc = Service(folder, ["--config=" + conf, "--stats=" + stats])
    for k, rcpt in enumerate(["x@archive.example.org", "y@example.com"]):
        fields, body, data = attachment_message(f"o{k}@example.test")
        c = Client(svc.sock)
        c.envelope("192.0.2.1", "a@example.org", [rcpt])
        if c.message(fields, body) != b"a":
            fail(f"message o{k} was not accepted")
        c.close()
        name = hmac.new(open(os.path.join(store, ".key"), "rb").read(), data, hashlib.sha256).hexdigest()
        stored = os.path.join(store, name)
        if k == 0 and (not os.path.exists(stored) or open(stored, "rb").read() != data
                       or f'x-mimeuri-offload="1 {name} base64 76 0"'.encode() not in c.body
                       or b"https://files.example.org/" not in c.body or b"access-type=URL" not in c.body):
            fail(f"the archive's message: stored {os.path.exists(stored)}, body replaced with {c.body[:600]!r}")
        if k == 1 and c.body:
            fail("a message for another domain was changed")
    # The part offloaded is the pass's edit in the counters, in all and under its policy (its
    # report section's edits()); the other domain's message has none.
    text = counters_now(svc, stats)
    for sample in ['mimeuri_edits_total{pass="offload"} 1', 'mimeuri_policy_edits_total{policy="archive",pass="offload"} 1']:
        if sample not in text.splitlines():
            fail(f"the counters do not say {sample}:\n{text}")
    subprocess.run(["chattr", "+i", store], check=True)
    try:
        fields, body, _ = attachment_message("o2@example.test")
        fields[-1] = (b"Content-Type", b'multipart/mixed; boundary="m"')
        body = body.replace(b"See the file.", b"Another file.").replace(b"AAEC", b"AQEC", 1)
        c = Client(svc.sock)
        c.envelope("192.0.2.1", "a@example.org", ["x@archive.example.org"])
        got = c.message(fields, body)
        said = c.said
        c.close()
    finally:
        subprocess.run(["chattr", "-i", store], check=True)
    # A temporary failure: SMFIR_TEMPFAIL, or a reply code of 4xx (SMFIR_REPLYCODE, with the text).
    if not (got == b"t" or (got == b"y" and said[:1] == b"4")) or c.body:
        fail(f"an unwritable store: answered {got!r} {said!r}, body {'replaced' if c.body else 'kept'}")
    time.sleep(0.5)
    line = [r for r in report(rep) if r["message_id"] == "o2@example.test"]
    if not line or not any("offload store: cannot write" in e["message"] for e in line[0]["errors"]):
        fail(f"the report does not say the store failed: {line}")
    svc.stop()
    print("offload: the archive's message offloaded by policy and counted, another domain's left, an unwritable store tempfails")



folder = tempfile.mkdtemp(prefix="mimeuri-offload-")
try:
    offload(folder)
finally:
    shutil.rmtree(folder, ignore_errors=True)
