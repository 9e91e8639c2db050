#!/usr/bin/python3
"""The DKIM and ARC body-hash verdicts of mimeuri's report against python3-dkim's.

For every message of the corpus whose top-level header holds a DKIM-Signature or an
ARC-Message-Signature, python3-dkim canonicalises the body (its CanonicalizationPolicy, l=
applied, the body as its own parser splits it) and compares the hash with bh=; mimeuri's
report must give each such signature, in header order, the same state: "intact" where
python3-dkim's hash matches, "broken" where it does not (or where the field is not a valid
signature), "unverifiable" for an algorithm or canonicalization neither knows.
Usage: crosscheck_body_hash.py MIMEURI CORPUS. Exit 77 (skipped) without python3-dkim unless
MIMEURI_STRICT_TESTS=1.

With --opendkim (by hand: opendkim-tools is not in .ci/packages), every single message of the
corpus is signed by opendkim's own signer instead (opendkim-testmsg with a throw-away key: rsa-sha1,
c=relaxed/simple), and mimeuri must find that signature's body hash intact. opendkim-testmsg
cannot verify offline: it has no key-file option for verifying, only DNS.
"""
import base64
import binascii
import hashlib
import json
import os
import re
import subprocess
import sys

try:
    import dkim
    from dkim.canonicalization import CanonicalizationPolicy, InvalidCanonicalizationPolicyError
    from dkim.util import parse_tag_value, InvalidTagValueList
except ImportError:
    print("python3-dkim is not installed (.ci/packages)")
    sys.exit(1 if os.environ.get("MIMEURI_STRICT_TESTS") == "1" else 77)

SIG_RE = re.compile(rb"^(DKIM-Signature|ARC-Message-Signature):", re.I | re.M)
HASHES = {b"rsa-sha256": hashlib.sha256, b"ed25519-sha256": hashlib.sha256, b"rsa-sha1": hashlib.sha1}


def header_block(data):
    m = re.search(rb"\r?\n\r?\n", data)
    return data[: m.start()] if m else data


def python_verdict(headers, body, value):
    """python3-dkim's reading of one signature field: intact, broken or unverifiable."""
    try:
        sig = parse_tag_value(value)
    except InvalidTagValueList:
        return "broken"
    if not all(k in sig for k in (b"a", b"bh", b"b", b"h")) or not sig[b"b"].strip():
        return "broken"  # RFC 6376 3.5: required tags (mimeuri: "not a valid signature field")
    algo = re.sub(rb"\s+", b"", sig[b"a"]).lower()
    if algo not in HASHES:
        return "unverifiable"
    try:
        policy = CanonicalizationPolicy.from_c_value(re.sub(rb"\s+", b"", sig.get(b"c", b"simple/simple")))
    except InvalidCanonicalizationPolicyError:
        return "unverifiable"
    canon = policy.canonicalize_body(body)
    if b"l" in sig:
        length = int(re.sub(rb"\s+", b"", sig[b"l"]))
        if length > len(canon):
            return "broken"  # RFC 6376 3.5: l= past the body
        canon = canon[:length]
    try:
        want = base64.b64decode(re.sub(rb"\s+", b"", sig[b"bh"]))
    except binascii.Error:
        return "broken"  # no digest can match it
    return "intact" if HASHES[algo](canon).digest() == want else "broken"


def opendkim(binary, corpus):
    import tempfile
    tmp = tempfile.mkdtemp()
    key = os.path.join(tmp, "k.pem")
    subprocess.run(["openssl", "genrsa", "-out", key, "1024"], check=True, capture_output=True)
    signed = intact = 0
    for root, _, names in os.walk(corpus):
        for n in sorted(names):
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                data = f.read()
            if data.startswith(b"From ") or n in ("INDEX.tsv", "MANIFEST.tsv") or n.endswith(".md") or not data:
                continue
            run = subprocess.run(["opendkim-testmsg", "-d", "example.org", "-s", "sel", "-k", key], input=data,
                                 capture_output=True)
            if run.returncode != 0 or not run.stdout.startswith(b"DKIM-Signature:"):
                continue  # a message opendkim does not sign (no header it can read)
            out = os.path.join(tmp, "m.eml")
            with open(out, "wb") as f:
                f.write(run.stdout)
            rep = subprocess.run([binary, "--check", "--report=/dev/stdout", out], capture_output=True)
            lines = [l for l in rep.stdout.splitlines() if l.startswith(b"{")]
            sigs = json.loads(lines[0]).get("signatures", []) if lines else []
            signed += 1
            if sigs and sigs[0]["part"] == "" and sigs[0]["state"] == "intact":
                intact += 1
            else:
                print(f"not ok - {p}: signed by opendkim, mimeuri says {sigs[:1]}")
    print(f"{signed} corpus messages signed by opendkim-testmsg, {intact} found intact by mimeuri")
    return 0 if signed and signed == intact else 1


def main():
    if sys.argv[1] == "--opendkim":
        return opendkim(sys.argv[2], sys.argv[3])
    binary, corpus = sys.argv[1], sys.argv[2]
    files = []
    for root, _, names in os.walk(corpus):
        for n in sorted(names):
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                data = f.read()
            if data.startswith(b"From "):
                continue  # an mbox: python3-dkim reads one message
            if SIG_RE.search(header_block(data)):
                files.append((p, data))
    files.sort()
    checked = disagree = 0
    tally = {}
    for path, data in files:
        try:
            headers, body = dkim.rfc822_parse(data)
        except (dkim.MessageFormatError, IndexError) as e:
            print(f"# {path}: python3-dkim cannot parse it ({e}): not compared")
            continue
        want = [python_verdict(headers, body, v) for n, v in headers
                if n.lower() in (b"dkim-signature", b"arc-message-signature")]
        run = subprocess.run([binary, "--check", "--report=/dev/stdout", path], capture_output=True)
        lines = [l for l in run.stdout.splitlines() if l.startswith(b"{")]
        if not lines:
            print(f"not ok - {path}: no report ({run.stderr.decode(errors='replace').strip()})")
            disagree += 1
            continue
        report = json.loads(lines[0])
        got = [s["state"] for s in report.get("signatures", []) if s["part"] == "" and s["kind"] in ("dkim", "arc")]
        checked += 1
        for v in want:
            tally[v] = tally.get(v, 0) + 1
        if got != want:
            disagree += 1
            print(f"not ok - {path}: mimeuri {got}, python3-dkim {want}")
    print(f"{checked} signed messages compared ({', '.join(f'{n} signatures {v}' for v, n in sorted(tally.items()))}), "
          f"{disagree} disagreeing")
    if checked == 0:
        print("no signed message found in the corpus")
        return 1 if os.environ.get("MIMEURI_STRICT_TESTS") == "1" else 77
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
