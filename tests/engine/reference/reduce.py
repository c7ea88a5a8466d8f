#!/usr/bin/env python3
"""Shrink a case that compare.py reported until nothing more can go and the mismatch stays: a small repro.

    reduce.py --framesim build/framesim CASE.json OUT_DIR [--mode fluid|exact|either] [--min-diff S]

Tries, greedily and repeatedly: a shorter duration, dropping a task, a pipeline's last stage or a whole pipeline,
dropping or shortening a kernel, lowering a priority, moving a phase to 0, one core less. Writes the smallest case
still mismatching to OUT_DIR (hw.yaml, scenario.yaml, case.json) and prints the first differing job.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import describe, differences, framesim_jobs, run_framesim, write_case  # noqa: E402
from reference_scheduler import Case, simulate  # noqa: E402


def big(d, min_diff: float) -> bool:
    """A job missing, extra or unfinished, or one of its times off by more than min_diff seconds."""
    _, what, r, g = d
    return what != "differs" or max(abs(float(g[i]) - float(r[i])) for i in range(3)) > min_diff


def mismatches(args, case: Case, folder: str):
    shutil.rmtree(folder, ignore_errors=True)
    scenario = write_case(case, folder, args.title)  # the title decides how each job is written: keep it
    ref = simulate(case)
    found = []
    for mode, extra in (("fluid", []), ("exact", ["--exact"])):
        if args.mode not in (mode, "either"):
            continue
        out = os.path.join(folder, f"out_{mode}")
        p = run_framesim(args.framesim, ["run", scenario, "-o", out, "-q"] + extra)
        if p.returncode != 0:
            return []  # a variant framesim refuses is no repro
        got, unfinished = framesim_jobs(out, case)
        found += [(mode, d) for d in differences(ref, got, unfinished) if big(d, args.min_diff)]
    return found


def variants(c: Case):
    step = Fraction(1, 8192) if c.grid == "binary" else Fraction(1, 8000)
    for frac in (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), Fraction(9, 10)):
        d = (c.duration * frac // step) * step + step / 2
        if d < c.duration:
            v = copy.deepcopy(c)
            v.duration = d
            yield v
    for i in range(len(c.tasks)):
        v = copy.deepcopy(c)
        del v.tasks[i]
        if v.tasks or v.stages:
            yield v
    for s in c.sensors:  # a whole pipeline, or its last stage
        v = copy.deepcopy(c)
        chain = [s.name]
        while any(x.source == chain[-1] for x in v.stages):
            chain.append(next(x.name for x in v.stages if x.source == chain[-1]))
        v.stages = [x for x in v.stages if x.name != chain[-1]]
        if len(chain) == 2:
            v.sensors = [x for x in v.sensors if x.name != s.name]
        if v.tasks or v.stages:
            yield v
    for who in range(len(c.stages) + len(c.tasks)):
        for k in range(len((c.stages + c.tasks)[who].kernels)):
            v = copy.deepcopy(c)
            ks = (v.stages + v.tasks)[who].kernels
            if len(ks) > 1:
                del ks[k]
                yield v
            v = copy.deepcopy(c)
            ks = (v.stages + v.tasks)[who].kernels
            if ks[k] > step:
                ks[k] = max(step, (ks[k] / 2 // step) * step)
                yield v
        v = copy.deepcopy(c)
        x = (v.stages + v.tasks)[who]
        if x.priority != 0:
            x.priority = 0
            yield v
    for x in range(len(c.tasks) + len(c.sensors)):
        v = copy.deepcopy(c)
        p = (v.tasks + v.sensors)[x]
        if p.phase != 0:
            p.phase = Fraction(0)
            yield v
    if c.cores > 1:
        v = copy.deepcopy(c)
        v.cores -= 1
        yield v


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framesim", required=True)
    ap.add_argument("--mode", choices=["fluid", "exact", "either"], default="either")
    ap.add_argument("--min-diff", type=float, default=0.0,
                    help="keep only mismatches where a time differs by more than this (s): 1e-9 follows a "
                         "different decision rather than rounding")
    ap.add_argument("case")
    ap.add_argument("out")
    args = ap.parse_args(argv)
    with open(args.case, encoding="utf-8") as f:
        data = json.load(f)
    case, args.title = Case.from_json(data), data.get("title", "reduced")
    work = args.out + ".try"
    if not mismatches(args, case, work):
        print("no mismatch to reduce")
        return 1
    improved = True
    while improved:
        improved = False
        for v in variants(case):
            if mismatches(args, v, work):
                case, improved = v, True
                break
    found = mismatches(args, case, args.out)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{args.out}/scenario.yaml: {len(found)} jobs differ; first [{found[0][0]}]: {describe(found[0][1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
