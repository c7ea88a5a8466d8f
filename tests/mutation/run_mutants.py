#!/usr/bin/env python3
"""Mutation check (tests/MUTATION.md): applies each mutant of mutants.py alone, builds, runs tests, records which
tests fail (kill it), and restores the file byte for byte before the next one.

  python3 tests/mutation/run_mutants.py [--build build] [--timeout S] [--ctest-args "..."] [--out FILE] [NAME ...]
  python3 tests/mutation/run_mutants.py --killers [--build build] [--timeout S] [NAME ...]
  python3 tests/mutation/run_mutants.py --sample [--build build] [--timeout S] [NAME ...]

Without --killers or --sample, every mutant (or those named) runs against the whole release suite; survivors are
listed. --killers: every mutant (or those named) against its killer tests only (for each, only the targets they
need are rebuilt); the exit status is 1 when one survives. --sample (make test, so CI): --killers for the mutants
marked for the sample (or those named).

--timeout: the most seconds one test may take (ctest --timeout); a test that takes longer under a mutant fails as
"NAME (Timeout)", which counts as a kill, so a mutant that hangs runs costs a minute per test, not 120 s or more.
It is the default of the tests without their own TIMEOUT: the few programs whose tests can take more than about
10 s on a busy 2-core machine declare theirs (framesim_test(... TIMEOUT 300)), which ctest keeps (tests/MUTATION.md).

Run from the source root of a clean worktree (a file with uncommitted changes is refused: restoring it would
lose them). A mutant is never left in place: the file is restored even when the build or a test run is
interrupted. -j2 at most: the build machine is shared.
"""
import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants import MUTANTS  # noqa: E402

# The default per-test limit (seconds): several times the slowest release test without a TIMEOUT of its own, on
# 2 cores (tests/MUTATION.md).
DEFAULT_TIMEOUT_S = 60


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


def killer_tests(build, regex):
    """The tests `regex` selects in `build`, and the targets to rebuild for them: each test's executable, and
    framesim with its engine module (the examples and output tests run the framesim binary)."""
    listing = run(["ctest", "-N", "-R", regex, "--show-only=json-v1"], cwd=build)
    if listing.returncode != 0:
        sys.exit(f"ctest -N -R {regex!r} failed in {build}: {listing.stderr.strip()}")
    tests = json.loads(listing.stdout).get("tests", [])
    targets = {"framesim", "framesim_engine_module"}
    for t in tests:
        command = t.get("command") or []
        if command and os.path.dirname(os.path.abspath(command[0])).startswith(os.path.abspath(build)):
            targets.add(os.path.basename(command[0]))
    return [t["name"] for t in tests], sorted(targets)


def main():
    # A kill (SIGTERM, SIGHUP) unwinds like Ctrl-C, so the `finally` below restores the mutated file.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--ctest-args", default="-j2 --label-exclude slow",
                    help="ctest's arguments for the whole suite (without --killers or --sample)")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                    help=f"seconds one test may take; longer counts as a kill (default {DEFAULT_TIMEOUT_S:g})")
    ap.add_argument("--out", help="the results file to append to (default: BUILD/mutation_results.tsv)")
    ap.add_argument("--killers", action="store_true",
                    help="each mutant against its killer tests only; fail when one survives")
    ap.add_argument("--sample", action="store_true",
                    help="the sample: --killers for the mutants marked for the sample")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    if args.timeout <= 0:
        sys.exit(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    against_killers = args.killers or args.sample
    out = args.out or os.path.join(args.build, "mutation_results.tsv")
    chosen = [m for m in MUTANTS if (m.name in args.names) or (not args.names and (m.sample or not args.sample))]
    unknown = set(args.names) - {m.name for m in MUTANTS}
    if unknown:
        sys.exit(f"unknown mutant(s): {', '.join(sorted(unknown))}")
    # Outside a git work tree (a source archive) there is nothing to compare with: the file is restored byte for
    # byte from what was read either way.
    in_git = run(["git", "rev-parse", "--is-inside-work-tree"]).returncode == 0
    survivors = []
    rebuilt = set()
    with open(out, "a") as results:
        for name, path, old, new, what, killers_regex, _ in chosen:
            if in_git and run(["git", "diff", "--quiet", "--", path]).returncode != 0:
                sys.exit(f"{path} has uncommitted changes: commit or stash them first")
            original = open(path, encoding="utf-8").read()
            if original.count(old) != 1:
                sys.exit(f"{name}: the text to replace occurs {original.count(old)} times in {path} (it must be once)")
            started = time.time()
            targets, ctest_args = [], shlex.split(args.ctest_args) + ["--timeout", f"{args.timeout:g}"]
            if against_killers:
                names, targets = killer_tests(args.build, killers_regex)
                if not names:
                    sys.exit(f"{name}: its killers {killers_regex!r} name no test in {args.build} (renamed?)")
                rebuilt.update(targets)
                ctest_args = ["-j2", "--timeout", f"{args.timeout:g}", "-R", killers_regex]
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(original.replace(old, new))
                build = run(["cmake", "--build", args.build, "-j2", *(["--target", *targets] if targets else [])])
                if build.returncode != 0:
                    verdict, killers = "killed", ["(does not compile)"]
                else:
                    tests = run(["ctest", *ctest_args], cwd=args.build)
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
            if verdict != "killed":
                survivors.append(name)
    # Leave the build matching the sources again.
    run(["cmake", "--build", args.build, "-j2", *(["--target", *sorted(rebuilt)] if rebuilt else [])])
    print(f"mutation: {len(chosen) - len(survivors)} of {len(chosen)} mutant(s) killed", flush=True)
    if survivors:
        print(f"mutation: SURVIVED: {', '.join(survivors)} (a bug the tests cannot see: tests/MUTATION.md)")
        if against_killers:
            sys.exit(1)


if __name__ == "__main__":
    main()
