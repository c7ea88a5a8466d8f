#!/usr/bin/env python3
"""Checks the checked-in JSON Schemas (docs/schema/*.schema.json) with a validator framesim does not contain:
python3-jsonschema. Every shipped input file (examples/ included) must validate against its kind's schema and
name it on its first line for yaml-language-server, and a few broken files
from the bad-input gallery must not (a misspelt key, a bandwidth without a unit or with a frequency's, a choice misspelt, a missing
required key, a negative integer), nor may any gallery case framesim refuses for an unknown key. Run from the
repository root; exit code 0 when all holds."""
import glob
import json
import os
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:
    sys.exit(f"json_schema_check: {e}: install python3-jsonschema and python3-yaml (`make test` installs them)")

SHIPPED = {
    "hardware": ["hardware/*.yaml"],
    "network": ["scenarios/networks/*.yaml"],
    "scenario": ["scenarios/*.yaml", "scenarios/bench/*.yaml", "scenarios/map/orin_two_networks.yaml"],
    "sweep": ["scenarios/sweeps/*.yaml"],
    "runtime": ["hardware/runtimes/*.yaml"],
    "map": ["scenarios/map/*.map.yaml"],
}

# Gallery files framesim refuses for a reason the schema alone can see (the key path the schema must flag).
BROKEN = {
    "hardware": [
        "tests/bad_input/cases/hw_unknown_key_typo.yaml",
        "tests/bad_input/cases/hw_bandwidth_missing_unit.yaml",
        "tests/bad_input/cases/hw_bandwidth_wrong_dimension.yaml",
        "tests/bad_input/cases/hw_latency_unknown_unit.yaml",
        "tests/bad_input/cases/hw_memory_kind_typo.yaml",
        "tests/bad_input/cases/hw_missing_bandwidth.yaml",
        "tests/bad_input/cases/hw_cores_zero.yaml",
        "tests/bad_input/cases/hw_peak_unknown_precision.yaml",
    ],
    "network": ["tests/bad_input/cases/net_unknown_op_typo.yaml", "tests/bad_input/cases/net_unknown_param_typo.yaml"],
    "scenario": ["tests/bad_input/cases/sc_unknown_key_typo.yaml"],
}


def kind_of(doc):
    """The kind of an examples/ file from its top-level keys, as `framesim validate` tells it."""
    if "units" in doc or "memory" in doc:
        return "hardware"
    if "layers" in doc:
        return "network"
    if "axes" in doc:
        return "sweep"
    if "objective" in doc:
        return "map"
    return "scenario"


def schema_line_problems(path, kind):
    """A shipped file's first line points yaml-language-server at its kind's schema, by a path relative to the
    file that exists: [] when it does, else the problem."""
    with open(path) as f:
        first = f.readline().rstrip("\n")
    prefix = "# yaml-language-server: $schema="
    if not first.startswith(prefix):
        return [f"{path}: the first line is not `{prefix}...` (the editor's schema)"]
    target = os.path.normpath(os.path.join(os.path.dirname(path), first[len(prefix):]))
    if target != os.path.normpath(f"docs/schema/{kind}.schema.json"):
        return [f"{path}: the schema line names {target}, not docs/schema/{kind}.schema.json"]
    return []


def validator(kind):
    with open(f"docs/schema/{kind}.schema.json") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def main():
    failures = []
    checked = 0
    for kind, patterns in SHIPPED.items():
        v = validator(kind)
        for pattern in patterns:
            for path in sorted(glob.glob(pattern)):
                with open(path) as f:
                    doc = yaml.safe_load(f)
                for error in v.iter_errors(doc):
                    failures.append(f"{path}: {'.'.join(map(str, error.path))}: {error.message[:200]}")
                checked += 1
                failures += schema_line_problems(path, kind)
    validators = {kind: validator(kind) for kind in SHIPPED}
    for path in sorted(glob.glob("examples/*/*.yaml")):
        with open(path) as f:
            doc = yaml.safe_load(f)
        for error in validators[kind_of(doc)].iter_errors(doc):
            failures.append(f"{path}: {'.'.join(map(str, error.path))}: {error.message[:200]}")
        failures += schema_line_problems(path, kind_of(doc))
        checked += 1
    if checked < 60:
        failures.append(f"only {checked} shipped files found")
    for kind, paths in BROKEN.items():
        v = validator(kind)
        for path in paths:
            with open(path) as f:
                doc = yaml.safe_load(f)
            if not list(v.iter_errors(doc)):
                failures.append(f"{path}: the {kind} schema accepts it, framesim refuses it")
    # Every gallery case framesim refuses for an unknown key in the file itself: the schema refuses it too.
    prefixes = {"hw_": "hardware", "net_": "network", "sc_": "scenario", "sweep_": "sweep"}
    unknown = 0
    for path in sorted(glob.glob("tests/bad_input/cases/*.yaml")):
        name = path.rsplit("/", 1)[1]
        kind = next((k for p, k in prefixes.items() if name.startswith(p)), None)
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        if kind is None or not any(l.startswith("# expect: {file}:") and ': unknown key "' in l for l in text.splitlines()):
            continue
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError:
            continue  # a syntax error is the case's point
        unknown += 1
        if not list(validators[kind].iter_errors(doc)):
            failures.append(f"{path}: framesim finds an unknown key, the {kind} schema accepts the file")
    if unknown < 5:
        failures.append(f"only {unknown} gallery cases with an unknown key found")
    for line in failures:
        print(line)
    print(f"json_schema_check: {checked} shipped files, {sum(map(len, BROKEN.values()))} broken files, "
          f"{unknown} gallery cases with an unknown key, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
