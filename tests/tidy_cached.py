#!/usr/bin/env python3
"""clang-tidy on every source of sim/ and analysis/ (`make tidy`), skipping a file whose checked input is unchanged.

A file's result depends on what the compiler sees (the file with every header it includes, after the
preprocessor), the flags it is compiled with, .clang-tidy and clang-tidy's version. All of that is hashed; a file
that clang-tidy found clean is remembered under its hash in a cache folder (FRAMESIM_TIDY_CACHE, else
~/.cache/framesim/tidy), and checked again only when one of them changed. A file with a finding is never
remembered. Paths of the checkout are replaced before hashing, so a clone elsewhere (CI's) shares the cache.

Prints the findings (file:line:col: warning: ... [check]) and exits 1 if there is any, else 0; the last line
says how many files were checked and how many were found clean in the cache.
  tests/tidy_cached.py BUILD_DIR [--jobs N] [--no-cache]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIDY = "clang-tidy-14"
SOURCES = re.compile(re.escape(ROOT) + r"/(sim|analysis)/.*\.cpp$")
FINDING = re.compile(r": (warning|error): ")


def preprocess_args(entry):
    """The file's compile command turned into a preprocessor run on standard output (no dependency files)."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        out.append(a)
    return out + ["-E", "-P", "-o", "-"]


def key_of(entry, common):
    args = preprocess_args(entry)
    pre = subprocess.run(args, cwd=entry["directory"], capture_output=True, check=True).stdout
    h = hashlib.sha256(common)
    h.update(" ".join(args).replace(ROOT, "<root>").encode())
    h.update(pre.replace(ROOT.encode(), b"<root>"))
    return h.hexdigest()


def tidy(build, entry):
    r = subprocess.run([TIDY, "-p", build, "-quiet", "--extra-arg=-Wno-unknown-warning-option", entry["file"]],
                       capture_output=True, text=True)
    lines = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr).splitlines() if FINDING.search(ln)]
    return r.returncode, lines


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--no-cache", action="store_true", help="check every file, remember nothing")
    a = p.parse_args()
    build = os.path.abspath(a.build)
    cache = os.environ.get("FRAMESIM_TIDY_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "framesim",
                                                                    "tidy")
    entries = [e for e in json.load(open(os.path.join(build, "compile_commands.json"))) if SOURCES.match(e["file"])]
    entries.sort(key=lambda e: e["file"])
    if not entries:
        sys.exit(f"tidy: no source of sim/ or analysis/ in {build}/compile_commands.json")
    version = subprocess.run([TIDY, "--version"], capture_output=True, check=True).stdout
    common = version + open(os.path.join(ROOT, ".clang-tidy"), "rb").read()
    os.makedirs(cache, exist_ok=True)

    def one(entry):
        key = None if a.no_cache else key_of(entry, common)
        if key and os.path.exists(os.path.join(cache, key)):
            return entry["file"], True, 0, []
        rc, lines = tidy(build, entry)
        if key and rc == 0 and not lines:
            open(os.path.join(cache, key), "w").close()
        return entry["file"], False, rc, lines

    findings, cached, failed = set(), 0, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for file, hit, rc, lines in pool.map(one, entries):
            cached += hit
            findings.update(lines)
            if rc != 0 and not lines:
                failed.append(file)
    for line in sorted(findings):
        print(line)
    for file in failed:
        print(f"{file}: clang-tidy failed without a finding (run it by hand: {TIDY} -p {build} {file})")
    print(f"tidy: {len(entries)} files, {cached} unchanged since clang-tidy found them clean ({cache}), "
          f"{len(entries) - cached} checked")
    sys.exit(1 if findings or failed else 0)


if __name__ == "__main__":
    main()
