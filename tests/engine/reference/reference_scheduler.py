#!/usr/bin/env python3
"""An independent reference of framesim's unit scheduler, the oracle of tests/engine/reference/compare.py.

It shares no code with the engine and was written from the rules in sim/engine/README.md ("One instant, one
decision") and docs/schema.md only, in exact arithmetic (fractions.Fraction): one compute unit of N cores, every job
on one core (no pinning), periodic tasks and pipelines (a sensor feeding a chain of stages on that unit, queues
deep enough that nothing drops), under fifo, priority, preemptive and time_slice, with a switch cost. Each job is a
list of kernel durations (a stage or task running a network of unfused custom layers, or `work: {time}`: one
kernel); no dispatch overhead, no side work, no throttling, memory too fast to matter.

The rules as read here (an instant is processed in three steps; see the README for the text):
  1. kernel ends: a job whose last kernel ended is done; a stage then hands its item to the next stage's queue
     and either stage, when free with an item queued, releases its job at once;
  2. timers: switch ends, quantum expiries, sensor captures, task releases;
  3. one decision: the candidates are the waiting jobs and the contested holders (priority, fifo: a holder at a
     kernel boundary; preemptive: every holder; time_slice: a holder whose quantum just expired). In rank order,
     a contested holder keeps its core unless someone ranked above took it; a waiting job takes a free core,
     else the core of the lowest-ranked contested holder not yet confirmed, else waits. Then every holder
     between phases goes on.

Readings of the README where it leaves room (told to the lead; compare.py reports every disagreement):
  R1 Rank of a stage's job: its input's enqueue time (the capture for the first stage, the upstream end for a
     chained one), also under time_slice: a backlogged stage's job joins the round where a job released at its
     enqueue time would be, not at the back when the stage frees. Ties after that: declaration order (stages in
     file order, then tasks), then job index.
  R2 time_slice round: the key (time joined, 0 for a release / 1 for an expired quantum, declaration order); a
     holder whose expired quantum nobody took keeps its core with the new key and a new quantum from t (no switch).
  R3 Forced switches exist only under preemptive and time_slice: the job taking a contested holder's core owes a
     switch, and so does the holder it evicted; a job owes at most one; it pays it (the core held, idle) whenever
     it next starts on a core, including a free core; a job evicted during its switch owes the whole switch again.
     A waiting job that takes a free core, or a job that takes a core freed by an end, is not a forced switch.
  R4 Under time_slice the quantum runs from the end of the switch paid (or from the acquisition) and goes on
     across kernel boundaries; a job ending its last kernel at its quantum's expiry simply ends.
  R5 Releases and captures happen at phase + k * period for every k with that time strictly before the duration
     (compare.py keeps every release off the duration); every job released is run to its end (no drain limit).
  R6 A job's start is the first instant it holds a core with no switch owed: when its first kernel's work begins
     (the README: "a job's start is when it holds cores and has paid the switch it owes").
  R7 A kernel boundary under priority/fifo is the instant a kernel ends with more to run; under fifo too a waiting
     job ranked above the holder (released earlier, e.g. a backlogged stage ranked by its input) takes the core there.
  R8 Times are exact: two releases at one instant have equal times, so "earlier release" ties and declaration
     order decides, whatever rounding framesim's doubles carry (the README: an instant is t and every event within
     1 ps after it). Declaration order is the order of the stages in the file, not the order of the DAG.

Usage as a program: reference_scheduler.py CASE.json prints every job (kind, name, index, release, start, end) in
seconds, and with FROM_S TO_S the events of that window (releases, cores taken, switches, kernel ends, quanta,
evictions); compare.py writes each case's JSON beside its YAML so a mismatch can be reproduced by hand.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from fractions import Fraction

POLICIES = ("fifo", "priority", "preemptive", "time_slice")


@dataclass
class Periodic:
    """A task (kernels given) or a sensor (kernels empty): releases at phase + k * period."""

    name: str
    period: Fraction
    phase: Fraction
    priority: int = 0
    kernels: list = field(default_factory=list)


@dataclass
class StageSpec:
    name: str
    source: str  # a sensor or an earlier stage's name
    priority: int
    kernels: list


@dataclass
class Case:
    cores: int
    policy: str
    quantum: Fraction | None
    switch_cost: Fraction
    duration: Fraction
    sensors: list  # of Periodic
    stages: list  # of StageSpec, in file order (declaration order)
    tasks: list  # of Periodic
    grid: str = "decimal"  # how compare.py writes the case (the reference does not read it)

    def to_json(self) -> dict:
        s = str
        return {
            "cores": self.cores, "policy": self.policy, "grid": self.grid,
            "quantum": None if self.quantum is None else s(self.quantum),
            "switch_cost": s(self.switch_cost), "duration": s(self.duration),
            "sensors": [{"name": x.name, "period": s(x.period), "phase": s(x.phase)} for x in self.sensors],
            "stages": [{"name": x.name, "source": x.source, "priority": x.priority,
                        "kernels": [s(k) for k in x.kernels]} for x in self.stages],
            "tasks": [{"name": x.name, "period": s(x.period), "phase": s(x.phase), "priority": x.priority,
                       "kernels": [s(k) for k in x.kernels]} for x in self.tasks],
        }

    @staticmethod
    def from_json(d: dict) -> "Case":
        f = Fraction
        return Case(
            cores=d["cores"], policy=d["policy"], quantum=None if d["quantum"] is None else f(d["quantum"]),
            switch_cost=f(d["switch_cost"]), duration=f(d["duration"]),
            sensors=[Periodic(x["name"], f(x["period"]), f(x["phase"])) for x in d["sensors"]],
            stages=[StageSpec(x["name"], x["source"], x["priority"], [f(k) for k in x["kernels"]])
                    for x in d["stages"]],
            tasks=[Periodic(x["name"], f(x["period"]), f(x["phase"]), x["priority"], [f(k) for k in x["kernels"]])
                   for x in d["tasks"]],
            grid=d.get("grid", "decimal"),
        )


class Job:
    def __init__(self, kind, name, index, decl, priority, rank_time, kernels, release):
        self.kind, self.name, self.index, self.decl, self.priority = kind, name, index, decl, priority
        self.rank_time = rank_time  # R1: a task's release, a stage's input enqueue
        self.release = release  # when the job came to exist (a stage: free and input ready)
        self.kernels = list(kernels)  # remaining; kernels[0] is the current one's remaining work
        self.round_key = (rank_time, 0, decl, index)  # R2 (time_slice only)
        self.holding = False
        self.phase = None  # holding: "new" (just acquired), "switch", "run", "between"
        self.kernel_end = None
        self.switch_end = None
        self.quantum_end = None
        self.owes_switch = False
        self.needs_quantum = False  # time_slice: its quantum starts when it next runs (R4)
        self.boundary = False  # ended a kernel at this instant with more to run
        self.expired = False  # its quantum expired at this instant
        self.start = None
        self.end = None


class Reference:
    def __init__(self, case: Case, trace: bool = False):
        self.trace = [] if trace else None
        # what a run exercised (compare.py sums it, to show what the comparison covered)
        self.stats = dict.fromkeys(["release ties", "release at a kernel end", "boundary hand-overs",
                                    "preemptions", "quantum hand-overs", "switches paid",
                                    "backlogged stage jobs", "task overruns"], 0)
        if case.policy not in POLICIES:
            raise ValueError(f"unknown policy {case.policy}")
        if case.policy == "time_slice" and not case.quantum:
            raise ValueError("time_slice needs a quantum")
        self.c = case
        self.t = Fraction(0)
        self.waiting: list[Job] = []
        self.holders: list[Job] = []
        self.done: list[Job] = []
        names = [s.name for s in case.stages]
        self.stage_decl = {s.name: i for i, s in enumerate(case.stages)}
        self.consumer = {}  # producer (sensor or stage) -> the stage reading it
        for s in case.stages:
            if s.source in self.consumer:
                raise ValueError(f"{s.source} feeds two stages; the reference runs chains only")
            self.consumer[s.source] = s
        self.queue = {n: [] for n in names}  # (frame, enqueue time, capture time)
        self.busy = {n: False for n in names}
        self.stage_spec = {s.name: s for s in case.stages}
        self.captures = {s.name: 0 for s in case.sensors}
        self.next_task_job = {t.name: 0 for t in case.tasks}
        self.capture_time = {}  # (sensor, frame) -> time
        self.frame_of_stage = {}  # job -> (sensor, frame)
        self.sensor_of = {}
        for s in case.sensors:
            n = s.name
            while n in self.consumer:
                n = self.consumer[n].name
                self.sensor_of[n] = s.name

    def note(self, j: Job, what: str):
        if self.trace is not None:
            self.trace.append((self.t, f"{j.name}#{j.index}", what))

    # ---- ranks ----
    def rank(self, j: Job):
        p = self.c.policy
        if p in ("priority", "preemptive"):
            return (-j.priority, j.rank_time, j.decl, j.index)
        if p == "fifo":
            return (j.rank_time, j.decl, j.index)
        return j.round_key

    # ---- releases ----
    def release_stage_if_ready(self, name: str):
        if self.busy[name] or not self.queue[name]:
            return
        frame, enq, cap = self.queue[name].pop(0)
        spec = self.stage_spec[name]
        j = Job("stage", name, frame, self.stage_decl[name], spec.priority, enq, spec.kernels, self.t)
        j.capture = cap
        j.enqueue = enq
        self.busy[name] = True
        if enq < self.t:
            self.stats["backlogged stage jobs"] += 1
        self.waiting.append(j)
        self.note(j, "released")

    def enqueue(self, producer: str, frame: int, capture: Fraction):
        if producer in self.consumer:
            name = self.consumer[producer].name
            self.queue[name].append((frame, self.t, capture))
            self.release_stage_if_ready(name)

    def finish(self, j: Job):
        self.note(j, "ends")
        j.end = self.t
        j.holding = False
        self.holders.remove(j)
        self.done.append(j)
        if j.kind == "stage":
            self.busy[j.name] = False
            self.enqueue(j.name, j.index, j.capture)
            self.release_stage_if_ready(j.name)

    # ---- the three steps of an instant ----
    def kernel_ends(self) -> bool:
        news = False
        self.ended_kernel_now = False
        for j in sorted(self.holders, key=lambda x: x.decl):
            if j.phase == "run" and j.kernel_end == self.t:
                news = self.ended_kernel_now = True
                j.kernels.pop(0)
                self.note(j, f"kernel end, {len(j.kernels)} left")
                if j.kernels:
                    j.phase, j.boundary, j.kernel_end = "between", True, None
                else:
                    self.finish(j)
        return news

    def timers(self) -> bool:
        news = False
        t, c = self.t, self.c
        released = len(self.waiting) + len(self.holders)
        for j in self.holders:
            if j.phase == "switch" and j.switch_end == t:
                j.phase, j.switch_end, j.owes_switch = "between", None, False
                news = True
        if c.policy == "time_slice":
            for j in self.holders:
                if j.quantum_end == t:
                    j.expired, j.quantum_end = True, None
                    self.note(j, "quantum expires")
                    j.round_key = (t, 1, j.decl, j.index)
                    news = True
        for s in c.sensors:
            k = self.captures[s.name]
            if s.phase + k * s.period == t and t < c.duration:
                self.captures[s.name] = k + 1
                self.enqueue(s.name, k, t)
                news = True
        for task in c.tasks:
            k = self.next_task_job[task.name]
            if task.phase + k * task.period == t and t < c.duration:
                self.next_task_job[task.name] = k + 1
                decl = len(c.stages) + c.tasks.index(task)
                self.waiting.append(Job("task", task.name, k, decl, task.priority, t, task.kernels, t))
                self.note(self.waiting[-1], "released")
                if any(x.kind == "task" and x.name == task.name and x.end is None for x in self.waiting[:-1]
                       + self.holders):
                    self.stats["task overruns"] += 1
                news = True
        if len(self.waiting) + len(self.holders) > released and self.ended_kernel_now:
            self.stats["release at a kernel end"] += 1
        new = [j for j in self.waiting if j.release == t and j.start is None]
        if len(new) > 1:
            self.stats["release ties"] += 1
        return news

    def contested(self, j: Job) -> bool:
        p = self.c.policy
        if p in ("priority", "fifo"):
            return j.boundary
        if p == "preemptive":
            return True
        return j.expired

    def evict(self, v: Job):
        self.note(v, "evicted")
        if v.phase == "run":
            v.kernels[0] = v.kernel_end - self.t
        # R3: evicted during its switch, it owes the whole switch again (owes_switch is still set)
        v.holding, v.phase, v.kernel_end, v.switch_end, v.quantum_end = False, None, None, None, None
        v.boundary = v.expired = False
        self.holders.remove(v)
        self.waiting.append(v)

    def decide(self):
        c = self.c
        forced_policy = c.policy in ("preemptive", "time_slice")
        contested = [j for j in self.holders if self.contested(j)]
        free = c.cores - len(self.holders)
        candidates = sorted(self.waiting + contested, key=self.rank)
        confirmed, evicted = set(), set()
        for j in candidates:
            if j.holding:
                if id(j) not in evicted:
                    confirmed.add(id(j))
                continue
            if free > 0:
                free -= 1
                self.acquire(j)
                continue
            open_holders = [h for h in contested if id(h) not in confirmed and id(h) not in evicted]
            if not open_holders:
                continue  # waits; with one-core jobs nobody ranked below can get a core either
            victim = max(open_holders, key=self.rank)
            evicted.add(id(victim))
            self.stats[{"preemptive": "preemptions", "time_slice": "quantum hand-overs"}.get(
                c.policy, "boundary hand-overs")] += 1
            self.evict(victim)
            if forced_policy:
                victim.owes_switch = True
                j.owes_switch = True
            self.acquire(j)
        for j in self.holders:
            if j.expired:  # R2: kept its core: its new place (set at expiry) and a new quantum
                j.quantum_end = self.t + c.quantum
            j.boundary = j.expired = False

    def acquire(self, j: Job):
        self.waiting.remove(j)
        self.holders.append(j)
        j.holding, j.phase, j.needs_quantum = True, "new", True
        self.note(j, "takes a core")

    def start_run(self, j: Job):
        if j.start is None:  # R6
            j.start = self.t
        j.phase = "run"
        j.kernel_end = self.t + j.kernels[0]
        self.note(j, f"runs {float(j.kernels[0])!r} s to {float(j.kernel_end)!r}")

    def go_on(self):
        c, t = self.c, self.t
        for j in self.holders:
            if j.phase == "new":
                if j.owes_switch and c.switch_cost > 0:
                    j.phase, j.switch_end = "switch", t + c.switch_cost
                    self.stats["switches paid"] += 1
                    self.note(j, "switches")
                else:
                    j.owes_switch = False
                    self.start_run(j)
            elif j.phase == "between":
                self.start_run(j)
            if j.phase == "run" and j.needs_quantum:
                j.needs_quantum = False
                if c.policy == "time_slice":  # R4: from the acquisition, or after the switch paid
                    j.quantum_end = t + c.quantum

    def next_time(self):
        c = self.c
        times = []
        for j in self.holders:
            for x in (j.kernel_end, j.switch_end, j.quantum_end):
                if x is not None:
                    times.append(x)
        for s in c.sensors:
            x = s.phase + self.captures[s.name] * s.period
            if x < c.duration:
                times.append(x)
        for task in c.tasks:
            x = task.phase + self.next_task_job[task.name] * task.period
            if x < c.duration:
                times.append(x)
        return min(times) if times else None

    def run(self):
        while True:
            t = self.next_time()
            if t is None:
                break
            assert t >= self.t, "time went back"
            self.t = t
            news = self.kernel_ends()
            news = self.timers() or news
            while news:
                self.decide()
                self.go_on()
                news = self.kernel_ends()  # a kernel of no work ends at once and may release others
        assert not self.waiting and not self.holders, "jobs left at the end"
        return self.done


def simulate(case: Case, stats: dict | None = None) -> dict:
    """Every job: {("task", name, k) or ("stage", name, frame): (release, start, end)}, exact. A stage's release is
    its input's enqueue time (what framesim writes as enqueue_s); a task's its nominal release. With stats, adds
    what the run exercised to it."""
    out = {}
    ref = Reference(case)
    done = ref.run()
    if stats is not None:
        for k, v in ref.stats.items():
            stats[k] = stats.get(k, 0) + v
    for j in done:
        if j.kind == "task":
            out[("task", j.name, j.index)] = (j.rank_time, j.start, j.end)
        else:
            out[("stage", j.name, j.index)] = (j.enqueue, j.start, j.end)
    return out


def self_test() -> list:
    """The reference on cases worked by hand (issue 20's and a few more); returns what disagrees (nothing)."""
    ms = Fraction(1, 1000)
    sc = Fraction(1, 10) * ms

    def task(name, period_ms, priority, *kernels_ms, phase_ms=0):
        return Periodic(name, period_ms * ms, phase_ms * ms, priority, [k * ms for k in kernels_ms])

    pair = [task("lo", 10, 0, 5), task("hi", 10, 9, 1)]
    cases = [
        # priority, synchronous release: hi first although lo is declared first; the same every period
        ("priority tie", Case(1, "priority", None, Fraction(0), 15 * ms, [], [], pair),
         {("task", "hi", 0): (0, 0, 1), ("task", "lo", 0): (0, 1, 6), ("task", "hi", 1): (10, 10, 11),
          ("task", "lo", 1): (10, 11, 16)}),
        # a hand-off: s1 exists at s0's end (2 ms) and outranks t (released at 1 ms): s1 [2, 4], t [4, 7]
        ("hand-off", Case(1, "priority", None, Fraction(0), 5 * ms, [Periodic("camera", 20 * ms, Fraction(0))],
                          [StageSpec("s0", "camera", 1, [2 * ms]), StageSpec("s1", "s0", 9, [2 * ms])],
                          [task("t", 20, -5, 3, phase_ms=1)]),
         {("stage", "s0", 0): (0, 0, 2), ("stage", "s1", 0): (2, 2, 4), ("task", "t", 0): (1, 4, 7)}),
        # non-preemptive priority: hi, released at 0.5 ms, takes the core at lo's first kernel boundary (1 ms)
        ("kernel boundary", Case(1, "priority", None, Fraction(0), 5 * ms, [], [],
                                 [task("lo", 10, 0, 1, 1, 1), task("hi", 10, 9, 1, phase_ms=Fraction(1, 2))]),
         {("task", "lo", 0): (0, 0, 4), ("task", "hi", 0): (Fraction(1, 2), 1, 2)}),
        # preemptive, synchronous release: no preemption at 0, so no switch
        ("no spurious preemption", Case(1, "preemptive", None, sc, 5 * ms, [], [], pair),
         {("task", "hi", 0): (0, 0, 1), ("task", "lo", 0): (0, 1, 6)}),
        # hi preempts lo at 2 ms: hi switches 2-2.1 and runs to 3.1; lo switches 3.1-3.2, its 3 ms left end at 6.2
        ("preemption", Case(1, "preemptive", None, sc, 5 * ms, [], [],
                            [task("lo", 10, 0, 5), task("hi", 10, 9, 1, phase_ms=2)]),
         {("task", "lo", 0): (0, 0, Fraction(62, 10)), ("task", "hi", 0): (2, Fraction(21, 10), Fraction(31, 10))}),
        # time slice 2 ms, switch 0.1 ms: a 0-2; b switches, runs 2.1-4.1; a switches, 4.2-6.2; b switches,
        # 6.3-7.3 (its last 1 ms); a pays its owed switch on the free core, 7.4-8.4
        ("round robin", Case(1, "time_slice", 2 * ms, sc, 5 * ms, [], [], [task("a", 10, 0, 5), task("b", 10, 9, 3)]),
         {("task", "a", 0): (0, 0, Fraction(84, 10)), ("task", "b", 0): (0, Fraction(21, 10), Fraction(73, 10))}),
        # a's quantum expires at 2 ms, the instant b is released: a goes behind b
        ("expiry behind a release", Case(1, "time_slice", 2 * ms, Fraction(0), 5 * ms, [], [],
                                         [task("a", 10, 0, 4), task("b", 10, 0, 1, phase_ms=2)]),
         {("task", "a", 0): (0, 0, 5), ("task", "b", 0): (2, 2, 3)}),
        # two cores, priority: z and y at 0; x takes y's core when y ends
        ("two cores", Case(2, "priority", None, Fraction(0), 5 * ms, [], [],
                           [task("x", 10, 0, 2), task("y", 10, 1, 1), task("z", 10, 2, 3)]),
         {("task", "x", 0): (0, 1, 3), ("task", "y", 0): (0, 0, 1), ("task", "z", 0): (0, 0, 3)}),
        # fifo, a backlogged stage: its jobs rank by their captures (0, 1, 2 ms), not by when s frees; t, released
        # at 2 ms like frame 2, comes after it by declaration order: s 0-3, 3-6, 6-9, then t 9-10
        ("fifo backlog", Case(1, "fifo", None, Fraction(0), Fraction(5, 2) * ms, [Periodic("cam", ms, Fraction(0))],
                              [StageSpec("s", "cam", 0, [3 * ms])], [task("t", 10, 0, 1, phase_ms=2)]),
         {("stage", "s", 0): (0, 0, 3), ("stage", "s", 1): (1, 3, 6), ("stage", "s", 2): (2, 6, 9),
          ("task", "t", 0): (2, 9, 10)}),
    ]
    failures = []
    for name, case, expected in cases:
        got = simulate(case)
        want = {k: tuple(Fraction(x) * ms for x in v) for k, v in expected.items()}
        if got != want:
            failures.append(f"{name}: expected {want}, got {got}")
    return failures


def main(argv):
    if argv[1:] == ["--self-test"]:
        failures = self_test()
        print("\n".join(failures) or "reference self-test: every hand-worked case holds")
        return 1 if failures else 0
    if len(argv) not in (2, 4):
        print("usage: reference_scheduler.py --self-test | CASE.json [FROM_S TO_S]  (with a window: its events)",
              file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        case = Case.from_json(json.load(f))
    if len(argv) == 4:
        ref = Reference(case, trace=True)
        ref.run()
        lo, hi = Fraction(argv[2]), Fraction(argv[3])
        for t, who, what in ref.trace:
            if lo <= t <= hi:
                print(f"{float(t)!r:>22} {who:>12} {what}")
        return 0
    jobs = simulate(case)
    print("kind,name,index,release_s,start_s,end_s")
    for key in sorted(jobs, key=lambda k: (jobs[k][0], k)):
        r, s, e = jobs[key]
        print(f"{key[0]},{key[1]},{key[2]},{float(r)!r},{float(s)!r},{float(e)!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
