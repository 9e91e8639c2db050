#!/usr/bin/env python3
"""The HTML's size before and after --data=attach, and whether Gmail would clip it (it clips
a message whose HTML passes about 102 KB, data: images included; cid: parts do not count).
For each message file named (mbox files: each message), prints the HTML bytes before and
after and a total line with how many would be clipped before and after.
Usage: data_sizes.py MIMEURI FILE...
"""
import email, email.policy, mailbox, subprocess, sys, tempfile, os

CLIP = 102 * 1024


def html_size(msg):
    return sum(len(p.get_content().encode("utf-8", "surrogateescape")) for p in msg.walk()
               if p.get_content_type() == "text/html")


def messages(path):
    data = open(path, "rb").read()
    if data.startswith(b"From "):
        return [email.message_from_bytes(m.as_bytes(), policy=email.policy.default) for m in mailbox.mbox(path)]
    return [email.message_from_bytes(data, policy=email.policy.default)]


def main():
    mimeuri, files = sys.argv[1], sys.argv[2:]
    clipped_before = clipped_after = n = 0
    tb = ta = 0
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            out = os.path.join(d, "out")
            with open(out, "wb") as o:
                subprocess.run([mimeuri, "--data=attach", f], stdout=o, check=False)
            for before, after in zip(messages(f), messages(out)):
                b, a = html_size(before), html_size(after)
                if b == 0:
                    continue
                n += 1
                tb += b
                ta += a
                clipped_before += b > CLIP
                clipped_after += a > CLIP
                print(f"{os.path.basename(f)}\t{b}\t{a}")
    print(f"total\t{n} messages\tHTML {tb} -> {ta} bytes\tclipped by Gmail (>{CLIP} B): {clipped_before} -> {clipped_after}")


if __name__ == "__main__":
    main()
