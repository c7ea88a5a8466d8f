#!/usr/bin/env python3
"""framesim's unit scheduler against reference_scheduler.py (exact fractions, no code shared with the engine).

What it shows: on random task sets and pipelines (fixed seeds; every policy; 1 to 4 cores with one-core jobs;
synchronous releases, harmonic periods and kernel durations on a grid (GRIDS), so releases coincide exactly with
each other and with kernel ends, the instants where wake order used to decide; stages declared out of chain
order), every job framesim writes to tasks.csv and stages.csv has the reference's release (a stage: its input's
enqueue), start and end, the response within 1e-9 relative or 1e-12 s, both with the fluid executor and with
--exact; no job is missing or extra. The reference first checks itself on cases worked by hand.

    compare.py --framesim build/framesim [--cases 60] [--seed 20] [--grid decimal|binary] [--chain-order]
               [--keep DIR] [--workers 2] [--first N]

Prints `reference: C cases, J jobs, M mismatches`, what the cases exercised (ties, preemptions, ...) and, per
mismatch, the case's folder (its hardware, scenario and case.json, kept) and the first job that differs. Exit
status 1 on any mismatch, 2 on a run that fails (a non-zero exit of framesim, a crash included).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_scheduler import POLICIES, Case, Periodic, StageSpec, self_test, simulate  # noqa: E402

# Every period, phase, kernel, quantum and switch cost is a multiple of the grid's step, so releases coincide
# exactly with each other and with kernel ends. Each period's rate (step count -> Hz) is written as a finite decimal
# whose reciprocal is the period exactly (a rate such as 333.3333333333333 Hz is not 3 ms). Two grids:
#   decimal: 1/8 ms steps, as a user writes times ("0.375 ms"); framesim's sums of such times carry rounding
#            errors of an ulp, so exact ties test that framesim treats one instant (1 ps) as one time;
#   binary:  1/8192 s steps and power-of-two periods: every time is exact in binary, so a tie is a tie in
#            framesim's doubles too (separates the rules from the rounding).
GRIDS = {
    # step, the periods in steps (harmonic families: frequent synchronous releases; and a few that are not)
    "decimal": (Fraction(1, 8000), [[16, 20, 25, 32, 40, 50, 64, 80, 100, 125, 128], [20, 40, 80, 160, 320],
                                   [32, 64, 128], [25, 50, 100, 200, 400],
                                   [16, 20, 25, 32, 40, 50, 64, 80, 100, 125, 128, 160, 200, 250, 320, 400]]),
    "binary": (Fraction(1, 8192), [[16, 32, 64], [32, 64, 128, 256], [16, 32, 64, 128, 256, 512]]),
}
NEVER_PHASE = Fraction(19, 10)  # the idle sensor of a task-only case captures first at 1.9 s (after the run)
MAX_DURATION = Fraction(18, 10)


def dec(x: Fraction) -> str:
    """The exact decimal of a fraction whose denominator is 2^a 5^b."""
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    x = abs(x)
    digits = 0
    while (x * 10**digits).denominator != 1:
        digits += 1
        if digits > 40:
            raise ValueError(f"{x} has no finite decimal")
    n = x.numerator * 10**digits // x.denominator
    s = str(n).rjust(digits + 1, "0")
    whole, frac = s[: len(s) - digits], s[len(s) - digits:]
    return sign + whole + ("." + frac.rstrip("0") if frac.strip("0") else "")


def rate(period: Fraction) -> str:
    return dec(1 / period)  # exact: see GRIDS


def generate(index: int, seed: int, grid: str = "decimal", shuffle: bool = True) -> Case:
    rng = random.Random(seed * 100003 + index)
    GRID, families = GRIDS[grid]

    def kernels(networked: bool) -> list:
        n = rng.choice([1, 1, 2, 3, 4, 6]) if networked else 1
        return [rng.randint(1, 24) * GRID for _ in range(n)]

    policy = POLICIES[index % 4]
    cores = (1, 2, 1, 3, 1, 4)[(index // 4) % 6]
    quantum = rng.choice([2, 4, 6, 8, 16, 24]) * GRID if policy == "time_slice" else None
    switch_cost = Fraction(0)
    if policy == "preemptive":
        switch_cost = rng.choice([0, 1, 1, 2, 4]) * GRID
    elif policy == "time_slice":
        switch_cost = rng.choice([0, 1, 1, 2]) * GRID * (1 if quantum >= 4 * GRID else 0)
    family = rng.choice(families)
    # all equal (ties decided by release and declaration) only where priorities do not rank anyway
    priorities = rng.choice(([[0]] if policy in ("fifo", "time_slice") else []) +
                            [[0, 1], [0, 1, 2, 3], list(range(-3, 10))])
    synchronous = rng.random() < 0.5

    def periodic(name: str, with_kernels: bool, networked: bool) -> Periodic:
        period = rng.choice(family) * GRID
        phase = Fraction(0) if synchronous or rng.random() < 0.3 else rng.randrange(0, period // GRID) * GRID
        return Periodic(name, period, phase, rng.choice(priorities), kernels(networked) if with_kernels else [])

    tasks = [periodic(f"t{i}", True, rng.random() < 0.5) for i in range(rng.randint(0, 4))]
    sensors, stages = [], []
    for p in range(rng.randint(0 if tasks else 1, 2)):
        sensors.append(periodic(f"cam{p}", False, False))
        source = f"cam{p}"
        for k in range(rng.randint(1, 3)):
            name = f"p{p}s{k}"
            stages.append(StageSpec(name, source, rng.choice(priorities), kernels(rng.random() < 0.6)))
            source = name
    if shuffle:
        rng.shuffle(stages)  # declaration order is not chain order

    # Keep the unit loaded but not overloaded (so the run drains): shrink the heaviest job until the utilisation
    # (plus the switches a time slice may cost) is at most the target.
    target = Fraction(rng.choice([40, 60, 75, 85, 92]), 100) * cores
    period_of = {s.name: s.period for s in sensors}
    for s in stages:
        src = s.source
        while src not in period_of:
            src = next(x.source for x in stages if x.name == src)
        period_of[s.name] = period_of[src]

    def load():
        items = [(sum(t.kernels) / t.period, t.kernels) for t in tasks]
        items += [(sum(s.kernels) / period_of[s.name], s.kernels) for s in stages]
        extra = 0
        if quantum:
            extra = sum(2 * switch_cost * (sum(k) // quantum + 1) / p for p, k in
                        [(t.period, t.kernels) for t in tasks] + [(period_of[s.name], s.kernels) for s in stages])
        return sum(u for u, _ in items) + extra, items

    while True:
        u, items = load()
        if u <= target:
            break
        ks = max(items, key=lambda x: x[0])[1]
        i = max(range(len(ks)), key=lambda i: ks[i])
        if len(ks) > 1 and ks[i] == GRID:
            ks.pop(i)
        elif ks[i] > GRID:
            ks[i] = max(GRID, (ks[i] // GRID // 2) * GRID)
        else:
            break  # every job is one grid step: accept (the target is only a guide)

    jobs_per_s = sum(1 / t.period for t in tasks) + sum(1 / period_of[s.name] for s in stages)
    duration = min(MAX_DURATION, Fraction(rng.choice([300, 500, 800])) / jobs_per_s)
    duration = max(20 * GRID, (duration // GRID) * GRID) + GRID / 2  # never on a release
    return Case(cores, policy, quantum, switch_cost, duration, sensors, stages, tasks, grid)


def write_case(case: Case, folder: str, title: str) -> str:
    os.makedirs(folder, exist_ok=True)
    sched = f"policy: {case.policy}"
    if case.quantum is not None:
        sched += f', quantum: "{dec(case.quantum)} s"'
    if case.policy in ("preemptive", "time_slice"):
        sched += f', switch_cost: "{dec(case.switch_cost)} s"'
    # one core runs per_core operations a second: a kernel of d seconds is d * per_core operations (binary grid: a
    # power of two, so that the operations and the time they take are exact in binary too)
    per_core = 10**9 if case.grid == "decimal" else 2**30
    with open(os.path.join(folder, "hw.yaml"), "w", encoding="utf-8") as f:
        f.write(f"""name: reference-unit
memory:
  dram: {{kind: dram, capacity: "8 GiB", bandwidth: "1000 TB/s"}}
units:
  a:
    kind: cpu
    cores: {case.cores}
    peak: {{fp32: "{case.cores * per_core} FLOP/s"}}
    memory: [dram]
    scheduler: {{{sched}}}
""")
    networks = {}

    def work(name: str, ks: list, networked: bool) -> str:
        if not networked:
            return f'work: {{time: "{dec(ks[0])} s"}}'
        layers = "".join(f"  - {{name: k{i}, op: custom, ops: {dec(k * per_core)}}}\n" for i, k in enumerate(ks))
        with open(os.path.join(folder, f"net_{name}.yaml"), "w", encoding="utf-8") as f:
            f.write(f"name: net-{name}\nfusion: none\ninputs:\n  x: [1, 1]\nlayers:\n{layers}")
        networks[f"n_{name}"] = f"net_{name}.yaml"
        return f"network: n_{name}"

    # a one-kernel job is written as work: {time} or as a network at random (both must give the same schedule)
    def networked(name: str, ks: list) -> bool:  # per job, so that dropping one (reduce.py) keeps the others'
        return len(ks) > 1 or random.Random(f"{title}/{name}").random() < 0.5

    lines_stages, lines_tasks = [], []
    for s in case.stages:
        w = work(s.name, s.kernels, networked(s.name, s.kernels))
        lines_stages.append(f"  {s.name}: {{unit: a, cores: 1, inputs: [{s.source}], priority: {s.priority}, "
                            f"{w}, queue: {{depth: 1000000}}}}\n")
    for t in case.tasks:
        w = work(t.name, t.kernels, networked(t.name, t.kernels))
        lines_tasks.append(f'  {t.name}: {{rate: "{rate(t.period)} Hz", phase: "{dec(t.phase)} s", unit: a, '
                           f"cores: 1, priority: {t.priority}, {w}}}\n")
    sensors = "".join(f'  {s.name}: {{rate: "{rate(s.period)} Hz", phase: "{dec(s.phase)} s"}}\n'
                      for s in case.sensors)
    if not case.stages:  # sensors and stages are required: one that never captures within the run
        sensors += f'  never: {{rate: "0.5 Hz", phase: "{dec(NEVER_PHASE)} s"}}\n'
        lines_stages.append('  idle: {unit: a, cores: 1, inputs: [never], work: {time: "1 ms"}}\n')
    nets = "".join(f"  {k}: {v}\n" for k, v in networks.items())
    scenario = os.path.join(folder, "scenario.yaml")
    with open(scenario, "w", encoding="utf-8") as f:
        f.write(f'name: {title}\nhardware: hw.yaml\nduration: "{dec(case.duration)} s"\ndeadline: "1 s"\n'
                + (f"networks:\n{nets}" if nets else "") + f"sensors:\n{sensors}stages:\n"
                + "".join(lines_stages) + ("tasks:\n" + "".join(lines_tasks) if lines_tasks else ""))
    with open(os.path.join(folder, "case.json"), "w", encoding="utf-8") as f:
        json.dump(dict(case.to_json(), title=title), f, indent=1)
    return scenario


def read_rows(path: str) -> list:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def num(text: str):
    """A time framesim wrote, or None when it is not a finite number (an unfinished job's end)."""
    try:
        x = float(text)
    except ValueError:
        return None
    return x if x == x and abs(x) != float("inf") else None


def framesim_jobs(out: str, case: Case) -> dict:
    """framesim's jobs keyed as simulate() keys them: tasks by job index, a stage's by its input's order."""
    jobs, unfinished = {}, []
    for row in read_rows(os.path.join(out, "tasks.csv")):
        key = ("task", row["task"], int(row["job"]))
        if row.get("finished", "1") != "1":
            unfinished.append(key)
        jobs[key] = (num(row["release_s"]), num(row["start_s"]), num(row["end_s"]))
        if None in jobs[key]:
            unfinished.append(key)
    by_stage = {}
    for row in read_rows(os.path.join(out, "stages.csv")):
        by_stage.setdefault(row["stage"], []).append(row)
    for stage, rows in by_stage.items():
        rows.sort(key=lambda r: float(r["capture_s"]))
        for k, row in enumerate(rows):
            if row.get("finished", "1") != "1":
                unfinished.append(("stage", stage, k))
            jobs[("stage", stage, k)] = (num(row["enqueue_s"]), num(row["start_s"]), num(row["end_s"]))
            if None in jobs[("stage", stage, k)]:
                unfinished.append(("stage", stage, k))
    return jobs, unfinished


# The fluid path is held to 1 ps; --exact to 10 ps: SimGrid ends each timer and activity to its surf/precision
# (1e-12 s, which framesim sets), and over a run those ends add up to a few ps (measured: 1.6 ps on 1.4 ms).
FLOOR_S = {"fluid": Fraction(1, 10**12), "exact": Fraction(1, 10**11)}


def close(a: float, b: Fraction, scale: Fraction, floor: Fraction = FLOOR_S["fluid"]) -> bool:
    return abs(Fraction(a) - b) <= max(floor, abs(scale) / 10**9)


def differences(ref: dict, got: dict, unfinished: list, floor: Fraction = FLOOR_S["fluid"]) -> list:
    """Every job that differs, in reference release order: (key, what, reference, framesim)."""
    out = []
    for key in sorted(ref, key=lambda k: (ref[k][0], k)):
        r = ref[key]
        if key not in got:
            out.append((key, "missing", r, None))
            continue
        g = got[key]
        if key in unfinished:
            out.append((key, "unfinished", r, g))
            continue
        response_ok = close(g[2] - g[0], r[2] - r[0], r[2] - r[0], floor)
        fields_ok = all(close(g[i], r[i], r[i], floor) for i in range(3))
        if not (response_ok and fields_ok):
            out.append((key, "differs", r, g))
    for key in sorted(set(got) - set(ref)):
        out.append((key, "extra", None, got[key]))
    return out


def largest_error(ref: dict, got: dict) -> float:
    """The largest difference (s) between a time framesim wrote and the reference's, over the jobs both have."""
    return max((abs(float(Fraction(got[k][i]) - ref[k][i])) for k in ref if k in got for i in range(3)
                if got[k][i] is not None), default=0.0)


def describe(d) -> str:
    key, what, r, g = d
    def fmt(v):
        if v is None:
            return "-"
        if None in v:
            return "release %s start %s end %s" % v
        return "release %.9g start %.9g end %.9g (response %.9g)" % (
            float(v[0]), float(v[1]), float(v[2]), float(v[2]) - float(v[0]))
    return f"{key[0]} {key[1]} job {key[2]} {what}: reference {fmt(r)}; framesim {fmt(g)}"


def run_framesim(framesim: str, argv: list) -> subprocess.CompletedProcess:
    """framesim with argv; while it is being rebuilt (the binary missing or not executable, its engine module
    half-written) wait and retry, up to 2 minutes."""
    p = None
    for _ in range(40):
        try:
            if os.access(framesim, os.X_OK):
                p = subprocess.run([framesim] + argv, capture_output=True, text=True)
                if "cannot load the simulation engine" not in p.stderr:
                    return p
        except OSError:
            pass
        time.sleep(3)
    return p or subprocess.run([framesim] + argv, capture_output=True, text=True)


def run_case(args, index: int, root: str):
    case = generate(index, args.seed, args.grid, not args.chain_order)
    title = f"reference-{args.seed}-{index:03d}"
    folder = os.path.join(root, f"case_{index:03d}")
    scenario = write_case(case, folder, title)
    stats = {}
    ref = simulate(case, stats)
    result = {"index": index, "folder": folder, "case": case, "jobs": len(ref), "diffs": {}, "error": None,
              "stats": stats}
    for mode, extra in (("fluid", []), ("exact", ["--exact"])):
        out = os.path.join(folder, f"out_{mode}")
        p = run_framesim(args.framesim, ["run", scenario, "-o", out, "-q"] + extra)
        if p.returncode != 0:
            result["error"] = f"framesim run {mode} exited {p.returncode}: {p.stderr.strip()[:400]}"
            return result
        got, unfinished = framesim_jobs(out, case)
        result["diffs"][mode] = differences(ref, got, unfinished, FLOOR_S["exact" if "exact" in mode else "fluid"])
        result.setdefault("largest", {})[mode] = largest_error(ref, got)
    return result


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framesim", required=True)
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--first", type=int, default=0, help="index of the first case (to rerun one)")
    ap.add_argument("--keep", help="write the cases here (kept); by default a temporary folder keeps only failures")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--grid", choices=sorted(GRIDS), default="decimal", help="the time grid (see GRIDS)")
    ap.add_argument("--chain-order", action="store_true", help="declare each chain's stages in chain order")
    args = ap.parse_args(argv)
    failures = self_test()  # the oracle first, on cases worked by hand
    if failures:
        print("the reference itself fails:\n" + "\n".join(failures))
        return 1
    root = args.keep or tempfile.mkdtemp(prefix="framesim-reference-")
    os.makedirs(root, exist_ok=True)
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(lambda i: run_case(args, i, root), range(args.first, args.first + args.cases)))
    jobs = sum(r["jobs"] for r in results)
    mismatched = {m: sum(len(r["diffs"].get(m, [])) for r in results) for m in ("fluid", "exact")}
    errors = [r for r in results if r["error"]]
    for r in results:
        c = r["case"]
        head = f"{r['folder']}/scenario.yaml ({c.policy}, {c.cores} core{'s' if c.cores > 1 else ''})"
        if r["error"]:
            print(f"{head}: {r['error']}")
        for mode, diffs in r["diffs"].items():
            if diffs:
                print(f"{head} [{mode}]: {len(diffs)} of {r['jobs']} jobs differ; first: {describe(diffs[0])}")
        if not r["error"] and not any(r["diffs"].values()) and not args.keep:
            shutil.rmtree(r["folder"], ignore_errors=True)
    total = mismatched["fluid"] + mismatched["exact"]
    print(f"reference: {len(results)} cases, {jobs} jobs, {total} mismatches "
          f"(fluid {mismatched['fluid']}, --exact {mismatched['exact']}), {len(errors)} failed runs")
    exercised = {}
    for r in results:
        for k, v in r["stats"].items():
            exercised[k] = exercised.get(k, 0) + v
    print("exercised: " + ", ".join(f"{v} {k}" for k, v in exercised.items()))
    largest = {m: max((r.get("largest", {}).get(m, 0.0) for r in results if not any(r["diffs"].values())),
                      default=0.0) for m in ("fluid", "exact")}
    print(f"largest time difference in the cases that agree: fluid {largest['fluid']:.3g} s, "
          f"--exact {largest['exact']:.3g} s")
    if not args.keep and not total and not errors:
        shutil.rmtree(root, ignore_errors=True)
    return 2 if errors else (1 if total else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
