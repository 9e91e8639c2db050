#!/usr/bin/env python3
"""The report never claims what did not happen (issue 18).

For every single-message file of the corpus and every golden case, in several modes, each
reference the report says was repaired, rewritten or inlined must be an edit in the output:
the HTML part it names (read with Python's email package, an independent MIME parser)
decodes differently in the output than in the input, and the message is reported changed.
A message reported unchanged must come out byte-identical. Exit 1 on any difference.
Usage: report_truth.py MIMEURI CORPUS_DIR TESTDATA_DIR
"""
import email, email.policy, json, os, subprocess, sys, tempfile
from skip import skip  # tests/skip.py

CLAIMS = {"repaired", "rewritten", "inlined"}
MODES = [[], ["--cid=inline"], ["--mid=repair"], ["--mid-url=https://archive.example/{id}"]]


def part_at(msg, section):
    """The entity at an IMAP section ("1", "2.1", ...) of a parsed message, or None."""
    nums = [int(n) for n in section.split(".")]
    m = msg
    while nums:
        n, nums = nums[0], nums[1:]
        if m.is_multipart() and not m.get_content_type().startswith("message/"):
            kids = m.get_payload()
            if n < 1 or n > len(kids):
                return None
            part = kids[n - 1]
        elif n == 1:
            part = m
        else:
            return None
        if not nums:
            return part
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()
            m = inner[0] if isinstance(inner, list) and inner else None
            if m is None:
                return None
        else:
            m = part
    return m


def decoded(msg, section):
    p = part_at(msg, section)
    return None if p is None else p.get_payload(decode=True)


def check(mimeuri, path, args, problems):
    with tempfile.TemporaryDirectory() as d:
        rep, out = os.path.join(d, "r"), os.path.join(d, "o")
        with open(out, "wb") as o:
            rc = subprocess.run([mimeuri, "--format=message", "--report=" + rep, *args, path], stdout=o,
                                stderr=subprocess.DEVNULL).returncode
        if rc not in (0, 65):
            problems.append(f"{path} {args}: exit {rc}")
            return
        lines = open(rep).read().splitlines()
        data_in, data_out = open(path, "rb").read(), open(out, "rb").read()
    if len(lines) != 1:
        return
    r = json.loads(lines[0])
    claims = [x for x in r.get("refs", []) if x.get("action") in CLAIMS]
    if not r.get("changed"):
        if data_in != data_out:
            problems.append(f"{path} {args}: reported unchanged, but the output differs")
        if claims:
            problems.append(f"{path} {args}: reported unchanged, but claims {claims[0]['action']} of {claims[0]['url']}")
        return
    if not claims:
        return
    mi = email.message_from_bytes(data_in, policy=email.policy.compat32)
    mo = email.message_from_bytes(data_out, policy=email.policy.compat32)
    for c in claims:
        if c.get("matched") == "content-location" and c["action"] == "repaired":
            # The reference stays as written; the repair is the Content-ID its target gains.
            t = part_at(mo, c["target"]) if c.get("target") else None
            if t is None or t.get("Content-ID") is None:
                problems.append(f"{path} {args}: claims {c['action']} of {c['url']}, but part {c.get('target')} "
                                "has no Content-ID in the output")
            continue
        a, b = decoded(mi, c["part"]), decoded(mo, c["part"])
        if a is None or b is None:
            continue  # a part Python's parser does not find where GMime does: not comparable
        if a == b:
            problems.append(f"{path} {args}: claims {c['action']} of {c['url']} in part {c['part']}, "
                            "but the part is unchanged")


def mhtml_default(mimeuri, path, problems):
    """Well-formed MHTML (RFC 2557 Content-Location references) comes out byte-identical in
    the default mode; Blink's "Content-Location: cid:" form (resolved, but a reader matching
    cid: URLs against Content-IDs only, RFC 2557 8.3, would not find it) only gains the
    Content-ID lines its references name."""
    with tempfile.TemporaryDirectory() as d:
        rep = os.path.join(d, "r")
        out = subprocess.run([mimeuri, "--format=message", "--report=" + rep, path], capture_output=True).stdout
        report = [json.loads(l) for l in open(rep)]
    data = open(path, "rb").read()
    if out == data:
        return
    blink = [x for r in report for x in r.get("refs", []) if x.get("matched") == "content-location"]
    added = [l for l in out.splitlines() if l not in set(data.splitlines())]
    if not blink or not all(l.startswith(b"Content-ID: <") for l in added) or \
            len(out.splitlines()) != len(data.splitlines()) + len(added):
        problems.append(f"{path}: MHTML changed in the default mode beyond Content-IDs for cid: Content-Locations")


def main():
    mimeuri, corpus, testdata = sys.argv[1:4]
    files, mhtml = [], []
    index = os.path.join(corpus, "INDEX.tsv")
    # Without the corpus only the golden cases are read: that counts as a skip (tests/skip.py)
    # where skips are not allowed.
    if not os.path.exists(index) and os.environ.get("MIMEURI_STRICT_TESTS") == "1":
        skip(f"no corpus at {corpus}: only the golden cases would be read")
    if os.path.exists(index):
        rows = [l.rstrip("\n").split("\t") for l in open(index, encoding="utf-8")]
        head = rows[0]
        for row in rows[1:]:
            f = dict(zip(head, row))
            if f.get("is_mbox") == "0" and f.get("has_html") == "1":
                files.append(os.path.join(corpus, f["path"]))
            if f.get("is_mbox") == "0" and f.get("has_content_location") == "1":
                mhtml.append(os.path.join(corpus, f["path"]))
    cases = os.path.join(testdata, "cases")
    for c in sorted(os.listdir(cases)):
        files.append(os.path.join(cases, c, "input.eml"))
    problems = []
    for path in files:
        for args in MODES:
            check(mimeuri, path, args, problems)
    for path in mhtml:
        mhtml_default(mimeuri, path, problems)
    for p in problems:
        print(p)
    print(f"{len(files)} files x {len(MODES)} modes, {len(mhtml)} MHTML files, {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
