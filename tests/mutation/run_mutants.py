#!/usr/bin/env python3
"""Mutation check (tests/MUTATION.md): applies each mutant of mutants.py alone, builds, runs tests, records which
tests fail (kill it), and restores the file byte for byte before the next one.

  python3 tests/mutation/run_mutants.py [--build build] [--ctest-args "..."] [--out results.tsv] [NAME ...]

Run from the source root of a clean worktree (a file with uncommitted changes is refused: restoring it would
lose them). A mutant is never left in place: the file is restored even when the build or a test run is
interrupted. -j2 at most: the build machine is shared.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants import MUTANTS  # noqa: E402


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def failed_tests(ctest_output):
    """The names ctest lists after "The following tests FAILED:" (with why: Failed, Timeout, ...)."""
    out = []
    lines = ctest_output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("The following tests FAILED:"):
            for rest in lines[i + 1:]:
                m = re.match(r"\s*\d+ - (\S+) \((.+)\)", rest)
                if not m:
                    break
                out.append(m.group(1) if m.group(2) == "Failed" else f"{m.group(1)} ({m.group(2)})")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--ctest-args", default="-j2 --label-exclude slow --timeout 120")
    ap.add_argument("--out", help="the results file to append to (default: BUILD/mutation_results.tsv)")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    out = args.out or os.path.join(args.build, "mutation_results.tsv")
    chosen = [m for m in MUTANTS if not args.names or m[0] in args.names]
    unknown = set(args.names) - {m[0] for m in MUTANTS}
    if unknown:
        sys.exit(f"unknown mutant(s): {', '.join(sorted(unknown))}")
    with open(out, "a") as results:
        for name, path, old, new, what in chosen:
            if run(["git", "diff", "--quiet", "--", path]).returncode != 0:
                sys.exit(f"{path} has uncommitted changes: commit or stash them first")
            original = open(path, encoding="utf-8").read()
            if original.count(old) != 1:
                sys.exit(f"{name}: the text to replace occurs {original.count(old)} times in {path} (it must be once)")
            started = time.time()
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(original.replace(old, new))
                build = run(["cmake", "--build", args.build, "-j2"])
                if build.returncode != 0:
                    verdict, killers = "killed", ["(does not compile)"]
                else:
                    tests = run(["ctest", *shlex.split(args.ctest_args)], cwd=args.build)
                    # format_check fails on a mutant whose line clang-format would wrap: that is not a test
                    # catching the bug, so it does not count as a kill.
                    failed = failed_tests(tests.stdout)
                    killers = [t for t in failed if t != "format_check"]
                    if tests.returncode != 0 and not failed:
                        killers = ["(ctest failed: " + tests.stdout.strip().splitlines()[-1] + ")"]
                    verdict = "killed" if killers else "SURVIVED"
            finally:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(original)
            line = f"{name}\t{path}\t{verdict}\t{', '.join(killers)}\t{time.time() - started:.0f}s"
            print(line, flush=True)
            results.write(line + "\n")
            results.flush()
    # Leave the build matching the sources again.
    run(["cmake", "--build", args.build, "-j2"])


if __name__ == "__main__":
    main()
