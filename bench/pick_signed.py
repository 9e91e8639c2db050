#!/usr/bin/env python3
"""pick_signed.py CORPUS OUT_LIST [REPEAT [html]]: real signed list mail and newsletters from the
corpus (INDEX.tsv's single messages, is_mbox 0), or from every file of a folder without an
INDEX.tsv (such as ../shared/gathered/signed, see bench/README.md), whose header block has a DKIM-Signature,
ARC-Seal or ARC-Message-Signature field (signed) or a List-Id or List-Unsubscribe field (list
mail, newsletters), written REPEAT times (default 1) one path a line, in INDEX.tsv's order; "html": only those
with an HTML part.
Prints one line: how many of each kind, and their bytes."""
import os, re, sys

corpus, out_list = sys.argv[1], sys.argv[2]
repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 1
html_only = len(sys.argv) > 4 and sys.argv[4] == "html"
signed_re = re.compile(rb"(?im)^(dkim-signature|arc-seal|arc-message-signature):")
list_re = re.compile(rb"(?im)^(list-id|list-unsubscribe):")
html_re = re.compile(rb'(?im)^content-type:[ \t]*"?text/html')


def candidates():
    """(path, has an HTML part) of every single message to look at."""
    index_path = os.path.join(corpus, "INDEX.tsv")
    if not os.path.exists(index_path):
        for name in sorted(os.listdir(corpus)):
            path = os.path.join(corpus, name)
            if os.path.isfile(path) and not name.endswith(".tsv"):
                yield path, bool(html_re.search(open(path, "rb").read()))
        return
    with open(index_path) as index:
        cols = index.readline().rstrip("\n").split("\t")
        for line in index:
            row = dict(zip(cols, line.rstrip("\n").split("\t")))
            if row["is_mbox"] == "0":
                yield os.path.join(corpus, row["path"]), row["has_html"] == "1"


picked, signed, listed, html, size = [], 0, 0, 0, 0
for path, has_html in candidates():
    data = open(path, "rb").read()
    head = re.split(rb"\r?\n\r?\n", data, maxsplit=1)[0]
    s, l = bool(signed_re.search(head)), bool(list_re.search(head))
    if not (s or l) or (html_only and not has_html):
        continue
    picked.append(path)
    signed += s
    listed += l
    html += has_html
    size += len(data)
with open(out_list, "w") as out:
    for _ in range(repeat):
        out.writelines(p + "\n" for p in picked)
print(f"{len(picked)} messages ({signed} signed, {listed} list or newsletter, {html} with HTML), "
      f"{size} bytes, x{repeat}")
