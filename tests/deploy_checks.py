"""What the deploy_*_test.py scripts share: failed checks collected and reported at the end
(each script runs every check, not just up to the first failure), and the command line that
names the source tree and the built binaries."""
import argparse
import os
import sys

FAILURES = []


def fail(msg):
    """Records a failed check and prints it at once."""
    FAILURES.append(msg)
    print("FAIL: " + msg, flush=True)


def parse_args(*binaries):
    """--source DIR and one --NAME PATH per binary name (made absolute)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    for name in binaries:
        ap.add_argument("--" + name, required=True)
    a = ap.parse_args()
    for name in binaries:
        setattr(a, name, os.path.abspath(getattr(a, name)))
    return a


def finish(script):
    """Exit 1 if any check failed, else say that all passed."""
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print(f"{script}: all checks passed")
