#!/usr/bin/env python3
"""reply_cids.py MIMEURI CORPUS WORKDIR: what share of a reply's dangling cid: comes back from
the messages it answers (issue 50; "matched":"thread" in the report).

Two measures, each one mimeuri run over every input at once, so that the run's index holds
every message (a run over several inputs indexes them all before it plans one):

  real:      the corpus as it is (every path of INDEX.tsv). A reply is a message with an
             In-Reply-To or References field; its cid: references that no part of its own
             message holds are reported "dangling" or, found in a message it answers,
             "resolved" with "matched":"thread".
  simulated: the corpus plus, for every corpus message with a Message-ID whose HTML holds a
             cid: that resolves in it, a reply written as the clients of the issue write one
             (Foxmail, Nextcloud Mail, Tutanota, EWS): the message's first HTML part quoted
             as it is, In-Reply-To and References naming it, and none of its parts. Each of
             those references dangles in the reply: how many come back, and why the others
             do not (read from the first run's report of the answered message).

Prints one table; the numbers go to bench/README.md.
"""
import collections, email, email.policy, json, os, re, subprocess, sys

mimeuri, corpus, work = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(work, exist_ok=True)
paths = [l.split("\t")[0] for l in open(os.path.join(corpus, "INDEX.tsv")).read().splitlines()[1:] if l]


def run(inputs, report):
    # One run: its index holds every input's messages. Exit 65 (a malformed input) is fine.
    subprocess.run([mimeuri, "--check", "--report=" + report] + inputs, cwd=corpus,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return [json.loads(l) for l in open(report)]


def message_bytes(o):
    """The message a report line is about: its input's bytes from its offset to the next From_."""
    path = o["source"] if os.path.isabs(o["source"]) else os.path.join(corpus, o["source"])
    data = open(path, "rb").read()
    start = o["offset"]
    if data[start:start + 5] == b"From ":
        start = data.find(b"\n", start) + 1
        end = re.search(rb"(?m)^From ", data[start:])
        data = data[start:start + end.start()] if end else data[start:]
    else:
        data = data[start:]
    return data


def header_block(data):
    m = re.search(rb"\r?\n\r?\n", data)
    return data[:m.start()] if m else data


def is_reply(o):
    return re.search(rb"(?im)^(in-reply-to|references)[ \t]*:", header_block(message_bytes(o))) is not None


def first_html(part, inside=False):
    """The first text/html part, and whether it is inside a message/rfc822 (a forward)."""
    if part.get_content_type() == "text/html":
        return part, inside
    if part.is_multipart() or part.get_content_type() == "message/rfc822":
        for sub in part.get_payload() or []:
            found = first_html(sub, inside or part.get_content_type() == "message/rfc822")
            if found[0] is not None:
                return found
    return None, False


def own_missing(r):
    # A cid: that no part of its own message holds: dangling, or come back from the thread.
    return r["kind"] == "cid" and (r["status"] == "dangling" or r.get("matched") == "thread")


def count(lines, only):
    replies = refs = back = 0
    whole = 0
    for o in lines:
        if not only(o):
            continue
        missing = [r for r in o["refs"] if own_missing(r)]
        if not missing or not is_reply(o):
            continue
        replies += 1
        refs += len(missing)
        came = sum(1 for r in missing if r.get("matched") == "thread")
        back += came
        whole += came == len(missing)
    return replies, refs, back, whole


real = run(paths, os.path.join(work, "real.jsonl"))
print("corpus: %d inputs, %d messages" % (len(paths), len(real)))

# The simulated replies: one per corpus message with a resolved cid: in its HTML.
replies_dir = os.path.join(work, "replies")
os.makedirs(replies_dir, exist_ok=True)
made, why_not = [], collections.Counter()
for n, o in enumerate(real):
    own = [r for r in o["refs"] if r["kind"] == "cid" and r["status"] == "resolved" and r.get("matched") != "thread"]
    if not own:
        continue
    if not o.get("message_id"):
        why_not["the message has no Message-ID: a reply cannot name it"] += 1
        continue
    msg = email.message_from_bytes(message_bytes(o), policy=email.policy.compat32)
    html, forwarded = first_html(msg)
    if html is None:
        continue
    body = html.get_payload(decode=True) or b""
    charset = html.get_content_charset() or "utf-8"
    mid = "<%s>" % o["message_id"]
    path = os.path.join(replies_dir, "reply-%04d.eml" % n)
    with open(path, "wb") as f:
        f.write(b"From: bench@example.org\nSubject: Re: quoted\nMessage-ID: <reply-%d@bench.invalid>\n" % n)
        f.write(b"In-Reply-To: %s\nReferences: %s\n" % (mid.encode(), mid.encode()))
        f.write(b"MIME-Version: 1.0\nContent-Type: text/html; charset=\"%s\"\n" % charset.encode())
        f.write(b"Content-Transfer-Encoding: 8bit\n\n" + body.replace(b"\r\n", b"\n") + b"\n")
    made.append((path, o, forwarded))

sim = run(paths + [p for p, _, _ in made], os.path.join(work, "simulated.jsonl"))
ours = {os.path.abspath(p) for p, _, _ in made}
replies, refs, back, whole = count(sim, lambda o: os.path.abspath(os.path.join(corpus, o["source"])) in ours)

# Why a simulated reply's reference did not come back: how its own message had matched it.
parent_of = {os.path.abspath(p): (o, fw) for p, o, fw in made}
carriers = collections.Counter(o.get("message_id") for o in sim)
not_back = collections.Counter()
for o in sim:
    parent, forwarded = parent_of.get(os.path.abspath(os.path.join(corpus, o["source"])), (None, False))
    if not parent:
        continue
    how = {r["url"]: (r.get("matched") or "content-id") for r in parent["refs"] if r["kind"] == "cid"}
    for r in o["refs"]:
        if not own_missing(r) or r.get("matched") == "thread":
            continue
        if forwarded:
            not_back["the quoted HTML is a forwarded message/rfc822's, indexed under its own id"] += 1
        elif carriers[parent["message_id"]] > 1:
            not_back["the answered message's Message-ID is carried by %d messages" % carriers[parent["message_id"]]] += 1
        else:
            not_back["in the answered message by " + how.get(r["url"], "?")] += 1

r_replies, r_refs, r_back, r_whole = count(real, lambda o: True)
with_cid = [o for o in real if any(r["kind"] == "cid" for r in o["refs"]) and is_reply(o)]
print("real replies with a cid: reference: %d (%d references, %d of them in the reply's own message)" % (
    len(with_cid), sum(1 for o in with_cid for r in o["refs"] if r["kind"] == "cid"),
    sum(1 for o in with_cid for r in o["refs"] if r["kind"] == "cid" and not own_missing(r))))
print("%-10s %8s %12s %10s %8s %14s" % ("set", "replies", "dangling", "came back", "share", "replies whole"))
for name, (a, b, c, d) in (("real", (r_replies, r_refs, r_back, r_whole)), ("simulated", (replies, refs, back, whole))):
    share = "%.1f%%" % (100.0 * c / b) if b else "-"
    print("%-10s %8d %12d %10d %8s %14d" % (name, a, b, c, share, d))
for why, k in sorted(why_not.items()):
    print("no reply made: %s: %d" % (why, k))
for why, k in sorted(not_back.items()):
    print("not back: %s: %d" % (why, k))
