#!/usr/bin/env python3
"""The layers of src/ (docs/design.md, "The layers"), checked from the includes.

The build already refuses a .cc file that includes a header of a layer above its own (each
layer's library sees only its own folder and those below). This check covers what the build
cannot see: a header that includes a header of a layer above it but that no .cc file of its
own layer happens to include, and an include that names a file no layer has. It prints one
line per back-edge and exits 1 if there is any."""
import os
import re
import sys

# Each layer, and the layers whose headers its files may include (itself included).
BELOW = {
    "util": {"util"},
    "input": {"util", "input"},
    "html": {"util", "html"},
    "mime": {"util", "input", "html", "mime"},
    "index": {"util", "input", "html", "mime", "index"},
    "run": {"util", "input", "html", "mime", "index", "run"},
    "filters": {"util", "input", "html", "mime", "index", "filters"},
    "app": {"util", "input", "html", "mime", "index", "run", "filters", "app"},
}


def folder_of(layer, top):
    return os.path.join(top, "filters") if layer == "filters" else os.path.join(top, "src", layer)


def main(top):
    home = {}  # header name -> its layer
    for layer in BELOW:
        for name in os.listdir(folder_of(layer, top)):
            if name.endswith((".hh", ".h")):
                if name in home:
                    print(f"{name}: in both {home[name]} and {layer}: an include names one file")
                    return 1
                home[name] = layer
    stray = [n for n in os.listdir(os.path.join(top, "src")) if os.path.isfile(os.path.join(top, "src", n)) and n != "meson.build"]
    problems = [f"src/{n}: a file outside every layer" for n in stray]
    files = 0
    for layer, allowed in BELOW.items():
        folder = folder_of(layer, top)
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".cc", ".hh", ".c", ".h")):
                continue
            files += 1
            path = os.path.join(folder, name)
            for no, line in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                target = m.group(1)
                if target not in home:
                    problems.append(f"{os.path.relpath(path, top)}:{no}: includes \"{target}\", which no layer holds")
                elif home[target] not in allowed:
                    problems.append(f"{os.path.relpath(path, top)}:{no}: {layer} includes \"{target}\" of {home[target]}, a layer above or beside it")
    for p in problems:
        print(p)
    print(f"{files} files in {len(BELOW)} layers, {len(problems)} back-edges")
    return 1 if problems or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
