#!/usr/bin/env python3
"""An offloaded attachment as the readers people use show it (issue 51): for a message with a
PDF attachment (LF and CRLF line ends), offloaded with --offload-expire, Python's email
(policy.default), nodemailer's mailparser and postal-mime (npm, installed into
BUILD/readers-npm as test tools only) each show text holding the file's name, its size, the
link and the expiry; Python's email also finds the message/external-body part with
access-type=URL, that URL, size= and expiration=, and the original header in its phantom
header. The message's own text is still its first text.
Usage: offload_readers.py MIMEURI BUILD_DIR
Exit 77 (skipped) without node or npm, unless MIMEURI_STRICT_TESTS=1 (then 1).
"""
import base64, email, email.policy, json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data_readers  # noqa: E402 (node_readers: the npm readers, installed on first use)

MIMEURI, BUILD = sys.argv[1], sys.argv[2]
problems = []

MESSAGE = """From: a@example.org
To: b@example.org
Subject: the report
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="XX"

--XX
Content-Type: text/plain; charset=us-ascii

Hello, the report is attached.

--XX
Content-Type: application/pdf; name="report 2026.pdf"
Content-Disposition: attachment; filename="report 2026.pdf"
Content-Transfer-Encoding: base64

{body}--XX--
"""


def expect_note(where, text, size, url):
    for want in ("report 2026.pdf", f"{size} bytes", url, "Available until: "):
        if want not in text:
            problems.append(f"{where}: the text shown lacks {want!r}: {text[:300]!r}")


def check_python(path, size, url):
    m = email.message_from_bytes(open(path, "rb").read(), policy=email.policy.default)
    if "Hello, the report is attached." not in m.get_body(("plain",)).get_content():
        problems.append(f"{path}: Python: the message's own text is no longer its body")
    texts = [p.get_content() for p in m.walk() if p.get_content_type() == "text/plain"]
    if not any("report 2026.pdf" in t for t in texts):
        problems.append(f"{path}: Python: no text part shows the note")
    else:
        expect_note(f"{path}: Python", next(t for t in texts if "report 2026.pdf" in t), size, url)
    ext = [p for p in m.walk() if p.get_content_type() == "message/external-body"]
    if len(ext) != 1:
        problems.append(f"{path}: Python: {len(ext)} message/external-body parts")
        return
    e = ext[0]
    got = {k: e.get_param(k) for k in ("access-type", "url", "size", "expiration")}
    if got["access-type"] != "URL" or "".join(got["url"].split()) != url or got["size"] != str(size) or not got["expiration"]:
        problems.append(f"{path}: Python: external body parameters {got}")
    phantom = e.get_payload()[0] if e.is_multipart() else None
    if phantom is None or phantom.get_filename() != "report 2026.pdf" or phantom.get_content_type() != "application/pdf":
        problems.append(f"{path}: Python: the phantom header is not the original part's header")


def main():
    data = bytes(range(256)) * 800  # 204,800 bytes
    body = base64.encodebytes(data).decode()
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        os.mkdir(store)
        files = []
        for crlf in (False, True):
            text = MESSAGE.format(body=body)
            src = os.path.join(tmp, f"in{int(crlf)}.eml")
            open(src, "wb").write((text.replace("\n", "\r\n") if crlf else text).encode())
            out = os.path.join(tmp, f"out{int(crlf)}.eml")
            r = subprocess.run([MIMEURI, "--offload-min=100000", f"--offload-dir={store}",
                                "--offload-url=https://files.example.org/{name}/{filename}", "--offload-expire=30d",
                                f"--report={tmp}/r.json", src], capture_output=True)
            open(out, "wb").write(r.stdout)
            entries = json.loads(open(f"{tmp}/r.json").read()).get("offload", [])
            if r.returncode != 0 or [e["action"] for e in entries] != ["offloaded"]:
                problems.append(f"crlf {crlf}: exit {r.returncode}, entries {entries}")
                continue
            url = entries[0]["url"]
            check_python(out, len(data), url)
            files.append((out, url))
        why, seen = data_readers.node_readers(BUILD, [f for f, _ in files], "offload_readers.mjs")
        if why:
            print("skipped the npm readers:", why)
            if os.environ.get("MIMEURI_STRICT_TESTS") == "1":
                problems.append(why)
            elif not problems:
                return 77
        for s in seen:
            url = dict(files)[s["file"]]
            expect_note(f"{s['file']}: {s['reader']}", s["text"], len(data), url)
            if not s["text"].startswith("Hello, the report is attached."):
                problems.append(f"{s['file']}: {s['reader']}: the message's own text does not come first")
    problems.extend(data_readers.problems)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


sys.exit(main())
