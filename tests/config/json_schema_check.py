#!/usr/bin/env python3
"""Checks the checked-in JSON Schemas (docs/schema/*.schema.json) with a validator framesim does not contain:
python3-jsonschema. Every shipped input file must validate against its kind's schema, and a few broken files
from the bad-input gallery must not (a misspelt key, a bandwidth without a unit or with a frequency's, a choice misspelt, a missing
required key, a negative integer). Run from the repository root; exit code 0 when all holds."""
import glob
import json
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:
    sys.exit(f"json_schema_check: {e}: install python3-jsonschema and python3-yaml (`make test` installs them)")

SHIPPED = {
    "hardware": ["hardware/*.yaml"],
    "network": ["scenarios/networks/*.yaml"],
    "scenario": ["scenarios/*.yaml", "scenarios/bench/*.yaml"],
    "sweep": ["scenarios/sweeps/*.yaml"],
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
    return "scenario"


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
    validators = {kind: validator(kind) for kind in SHIPPED}
    for path in sorted(glob.glob("examples/*/*.yaml")):
        with open(path) as f:
            doc = yaml.safe_load(f)
        for error in validators[kind_of(doc)].iter_errors(doc):
            failures.append(f"{path}: {'.'.join(map(str, error.path))}: {error.message[:200]}")
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
    for line in failures:
        print(line)
    print(f"json_schema_check: {checked} shipped files, {sum(map(len, BROKEN.values()))} broken files, "
          f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
