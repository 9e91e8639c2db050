"""How the Python suites skip: testing::skip's rule (tests/helpers.hh) for scripts.

skip(reason) prints the reason and exits 77 (meson counts the test as skipped), or, under
MIMEURI_STRICT_TESTS=1 (as .ci/run sets it), exits 1: a test that cannot run there fails,
so that no suite passes by skipping."""
import os
import sys


def skip(reason):
    print(f"skipped: {reason}")
    if os.environ.get("MIMEURI_STRICT_TESTS") == "1":
        print("MIMEURI_STRICT_TESTS=1: a test that cannot run here fails")
        sys.exit(1)
    sys.exit(77)


def corpus_or_skip(corpus):
    """The corpus folder, checked before anything reads it: skip() when it is not there."""
    if not os.path.isfile(os.path.join(corpus, "INDEX.tsv")):
        skip(f"no corpus at {corpus} (shared/corpus beside the source tree)")
    return corpus
