#!/usr/bin/env python3
"""The last lines of `make test`: every test that did not run, from CTest's JUnit files, with the reason its
GoogleTest skip gave, and one line a reader of a CI log cannot miss:
    tests/list_skipped.py build/ctest-junit.xml build-asan/ctest-junit-*.xml
Prints "SKIPPED: N test(s) did not run (...)" or "framesim: every test ran (no test skipped)"; a missing file is
named as such. Exit code 0 either way: a skip is reported here, the failures that matter fail `make deps`
(tests/when_fetch_fails.sh)."""
import sys
import xml.etree.ElementTree as ET


def skipped(path):
    """(test name, reason) of every test CTest did not run in the JUnit file at `path`."""
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.get("status") != "notrun":
            continue
        reason = ""
        text = (case.findtext("system-out") or "").splitlines()
        for i, line in enumerate(text):
            if line.endswith(": Skipped") and i + 1 < len(text):
                reason = text[i + 1].strip()
                break
        out.append((case.get("name"), reason))
    return out


def main(paths):
    rows, missing = [], []
    for path in paths:
        try:
            rows += [(path, name, reason) for name, reason in skipped(path)]
        except (OSError, ET.ParseError):
            missing.append(path)
    for path in missing:
        print(f"framesim: no test results in {path}")
    if not rows:
        print("framesim: every test ran (no test skipped)")
        return 0
    for path, name, reason in rows:
        print(f"  skipped: {name} ({path}){': ' + reason if reason else ''}")
    print(f"SKIPPED: {len(rows)} test(s) did not run ({', '.join(sorted({name for _, name, _ in rows}))})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
