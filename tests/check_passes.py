#!/usr/bin/env python3
"""Each pass owns its report (docs/design.md, "A new pass"; issue 49 item 1): src/ names no
pass's entry type.

- The entry types the core's report declares (src/mime/report.hh, `struct NameEntry`) are the core's: errors, kept edits,
  unreferenced parts, signatures, pages, and the three lists that still live in the core's
  report (references, external bodies, labels). A pass's entries are declared in its own
  filters/*_report.hh, beside its section.
- No file of src/ names a type (struct, class, enum) that a filters/*_report.hh declares:
  the core writes, sends and counts a pass's section through ReportSection
  (src/mime/report_section.hh) alone, so a new pass touches no file of src/.
It prints one line a problem and exits 1 if there is any."""
import os
import re
import sys

CORE_ENTRIES = {"ErrorEntry", "KeptEntry", "UnreferencedEntry", "SignatureEntry", "PageEntry",
                # The core's report still holds these three lists (issue 49 item 1: next to move).
                "RefEntry", "ExternalBodyEntry", "LabelEntry"}


def sources(folder):
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            if f.endswith((".cc", ".hh", ".c", ".h")):
                yield os.path.join(root, f)


def code(path):
    """The file's text without comments and string literals (a comment may name a pass)."""
    text = open(path, encoding="utf-8", errors="replace").read()
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def main(top):
    problems = []
    src, filters = os.path.join(top, "src"), os.path.join(top, "filters")
    report = os.path.join(src, "mime", "report.hh")
    for name in re.findall(r"^struct\s+(\w+Entry)\b", code(report), re.M):
        if name not in CORE_ENTRIES:
            problems.append(f"src/mime/report.hh: declares {name}, a pass's entry type "
                            "(it belongs in the pass's filters/*_report.hh)")
    owned = {}
    for path in sources(filters):
        if path.endswith("_report.hh"):
            # What it declares at namespace scope (not a member, not a template parameter).
            for name in re.findall(r"^(?:struct|class|enum\s+class|enum)\s+(\w+)", code(path), re.M):
                owned[name] = os.path.relpath(path, top)
    if not owned:
        problems.append("filters/: no *_report.hh declares a pass's report section")
    for path in sources(src):
        text = code(path)
        for name, where in sorted(owned.items()):
            if re.search(r"\b%s\b" % re.escape(name), text):
                problems.append(f"{os.path.relpath(path, top)}: names {name} ({where}): a pass's own")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
