#!/usr/bin/env python3
"""Runs deploy/quickstart.sh as a user would, on the CPU over a small range
(QUICKSTART_TO=2^24, reusing this build through QUICKSTART_BUILD_DIR): it must end with the
short summary (no record listing). Then, with --print-records, compares the delay and class
records it prints with shared/data (every reference record below 2^24, nothing else, none
marked "candidate"); that second run must search nothing."""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

BOUND = 1 << 24


def reference(path, key_n, key_other):
    with open(path, newline="") as f:
        return [(int(r[key_n]), int(r[key_other])) for r in csv.DictReader(f) if int(r[key_n]) < BOUND]


def parse(stdout):
    delay, klass, section, summary = [], [], None, ""
    for line in stdout.splitlines():
        if line.startswith("# delay records"):
            section = delay
        elif line.startswith("# class records"):
            section = klass
        elif line.startswith("# searched"):
            summary, section = line, None
        elif section is not None and line.strip():
            parts = line.split()
            if len(parts) == 3 and parts[2] == "candidate":
                parts = parts[:2]  # reported separately
            if len(parts) != 2:
                raise ValueError(f"unexpected record line {line!r}")
            section.append((int(parts[0]), int(parts[1])))
    return delay, klass, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    want_delay = reference(os.path.join(a.data, "delay_records_below_2p28.csv"), "n", "delay")
    # Class records print as "delay n"; compare in that order.
    want_class = [(d, n) for (n, d) in reference(os.path.join(a.data, "class_records_below_2p28.csv"), "n", "delay")]
    tmp = tempfile.mkdtemp(prefix="collatz-quickstart-")
    failures = []
    try:
        env = dict(os.environ, QUICKSTART_TO="2^24", QUICKSTART_BUILD_DIR=os.path.abspath(a.build))
        cmd = [os.path.join(a.source, "deploy/quickstart.sh"), "--db", os.path.join(tmp, "quickstart.db"), "--threads", "2"]
        for attempt in ("first run", "second run"):
            args = cmd + (["--print-records"] if attempt == "second run" else [])
            r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
            print(f"{attempt}: exit {r.returncode}")
            print("\n".join(l for l in r.stdout.splitlines() if l.startswith(("quickstart:", "#"))))
            if r.returncode != 0:
                failures.append(f"{attempt}: exit {r.returncode}\n{r.stderr[-2000:]}")
                break
            if attempt == "first run":
                # The summary, not a thousand lines of records.
                lines = r.stdout.splitlines()
                for part in ("# searched ", "# found: 57 final delay records and 0 candidates",
                             "# the last delay record: 15733191 (delay 704)", "# database: ", "# next: "):
                    if not any(l.startswith(part) for l in lines):
                        failures.append(f"first run: no summary line starting {part!r}")
                if len(lines) > 20:
                    failures.append(f"first run printed {len(lines)} lines, not a short summary")
                continue
            marked = [l for l in r.stdout.splitlines() if not l.startswith("#") and l.endswith(" candidate")]
            if marked:
                failures.append(f"{attempt}: records below the covered prefix 2^24 marked candidate: {marked[:3]}")
            delay, klass, summary = parse(r.stdout)
            if delay != want_delay:
                failures.append(f"{attempt}: {len(delay)} delay records, reference has {len(want_delay)}; "
                                f"first difference: {next(((x, y) for x, y in zip(delay, want_delay) if x != y), None)}")
            if klass != want_class:
                failures.append(f"{attempt}: {len(klass)} class records, reference has {len(want_class)}; "
                                f"first difference: {next(((x, y) for x, y in zip(klass, want_class) if x != y), None)}")
            if not summary:
                failures.append(f"{attempt}: no '# searched' summary line")
            if attempt == "second run" and " 0 new units" not in summary:
                failures.append(f"second run searched again: {summary}")
        print(f"{len(want_delay)} delay and {len(want_class)} class records below 2^24 in the reference")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f)
    if failures:
        sys.exit(1)
    print("deploy_quickstart_test: records equal the reference")


if __name__ == "__main__":
    main()
