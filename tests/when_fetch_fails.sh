#!/usr/bin/env bash
# Called by `make deps` when something it fetches from the npm registry could not be fetched:
#   tests/when_fetch_fails.sh WHAT TESTS
# If the registry answers (`npm ping`), the fetch failed for a reason a skipped test would hide (a package gone,
# a cache that cannot be written): say so and exit 1, so `make deps` (and CI) fails. If the registry cannot be
# reached (an offline machine), say that TESTS will be skipped and exit 0: the skip is listed again at the end
# of `make test` (tests/list_skipped.py).
set -uo pipefail
what="$1" tests="$2"
if timeout 30 npm ping > /dev/null 2>&1; then
  echo "framesim: the npm registry answers, yet $what could not be fetched: failing rather than skipping $tests" >&2
  exit 1
fi
echo "framesim: the npm registry cannot be reached: $what not fetched; $tests will be SKIPPED (listed at the end of make test)"
