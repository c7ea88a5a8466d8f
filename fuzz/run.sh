#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS from a corpus seeded with the shipped files, JOBS targets at a time.
#   fuzz/run.sh BUILD_DIR [SECONDS=20] [JOBS=2] [TARGET...]
# The corpus grows in BUILD_DIR/fuzz/corpus/<target> (kept between runs), read together with the corpus kept in
# the repository (fuzz/corpus/<target>, read only); FUZZ_KEEP=1 merges what a run found into fuzz/corpus/<target>
# afterwards (libFuzzer -merge=1: only inputs that add coverage). A crash, an abort, a leak, a timeout
# (10 s for one input) or running out of memory (2 GiB) leaves its input in BUILD_DIR/fuzz/artifacts/<target>/ and
# fails the script. Each line of the summary is a target, its executions and its outcome.
set -uo pipefail
build=$(cd "${1:?usage: fuzz/run.sh BUILD_DIR [SECONDS] [JOBS] [TARGET...]}" && pwd)
seconds=${2:-20}
jobs=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
root=$(cd "$(dirname "$0")/.." && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(units hardware network scenario sweep measured onnx tflite nsys tensorrt onnxruntime tables)
models="${FRAMESIM_MODEL_CACHE:-$HOME/.cache/framesim/models}"
# The targets that read a file by its path (the importers) write each input to a temporary file first: in memory
# when /dev/shm is there. On a disk-backed /tmp, rewriting that file for every input waited on the disk, and
# fuzz_tflite ran at a fifth of a core (143 CPU s in 1,450 s), at a whole core in memory.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_stack_use_after_return=0:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# seed TARGET: copies the shipped files a target reads into its corpus (files already there stay).
seed() {
  local dir="$build/fuzz/corpus/$1"
  mkdir -p "$dir"
  case $1 in
    units) local i=0
      for q in "50 GB/s" "2 TFLOP/s" "4 TOPS" "2 MiB" "100 ns" "12 ms" "30 Hz" "160 pJ" "4.5 W" "85 C" "8 C/W" \
               "5 J/C" "1.1 GHz" "0.8 V" "70 %" "1e308 GB/s" "-300 C" "1 m/s"; do
        printf '%s' "$q" > "$dir/seed-$((i++))"; done ;;
    hardware) cp -n "$root"/hardware/*.yaml "$root"/tests/bad_input/cases/hw_*.yaml "$dir"/ ;;
    network) cp -n "$root"/scenarios/networks/*.yaml "$root"/tests/trace/fixtures/*.yaml "$root"/tests/bad_input/cases/net_*.yaml "$dir"/ ;;
    scenario) cp -n "$root"/scenarios/*.yaml "$dir"/ ;;
    sweep) cp -n "$root"/scenarios/sweeps/*.yaml "$root"/tests/bad_input/cases/sweep_*.yaml "$dir"/ ;;
    measured) cp -n "$root"/tests/trace/fixtures/*.csv "$root"/tests/trace/fixtures/*.json "$root"/tests/bad_input/cases/csv_* \
                  "$root"/tests/bad_input/cases/json_* "$root"/tests/bad_input/cases/tflite_* "$dir"/ ;;
    onnx) find "$models" -name '*.onnx' -size -2M -exec cp -n {} "$dir"/ \; 2>/dev/null
      local i=0
      for m in /usr/share/libonnx-testdata/data/node/test_{conv,relu,add,matmul,gemm,maxpool,concat,reshape,softmax}*/model.onnx; do
        [ -f "$m" ] && cp -n "$m" "$dir/testdata-$((i++)).onnx"; done ;;
    tflite) find "$models" -name '*.tflite' -size -2M -exec cp -n {} "$dir"/ \; 2>/dev/null ;;
    nsys) cp -n "$root"/tests/trace/fixtures/edge/*.sqlite "$root"/tests/trace/fixtures/edge/*nsys*.csv \
              "$root"/tests/bad_input/cases/nsys_* "$dir"/ ;;
    tensorrt) cp -n "$root"/tests/trace/fixtures/edge/*trt* "$root"/tests/bad_input/cases/trt_* "$dir"/ ;;
    onnxruntime) cp -n "$root"/tests/trace/fixtures/edge/*ort* "$root"/tests/bad_input/cases/ort_* "$dir"/ ;;
    tables) cp -n "$root"/tests/validation/contention/*.csv "$root"/tests/bad_input/cases/csv_corun_* \
              "$root"/tests/bad_input/cases/csv_totals_* "$dir"/ ;;
  esac
}

# one TARGET: seeds and runs it; prints "TARGET: N executions in S s, ok" (or the failure) on one line.
one() {
  local t=$1 bin="$build/fuzz/fuzz_$1" log="$build/fuzz/logs/$1.log" art="$build/fuzz/artifacts/$1/"
  [ -x "$bin" ] || { echo "$t: $bin missing (configure with the asan preset)"; return 1; }
  seed "$t"
  mkdir -p "$art" "$(dirname "$log")"
  local kept="$root/fuzz/corpus/$t"
  local dirs=("$build/fuzz/corpus/$t")
  [ -d "$kept" ] && dirs+=("$kept")
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$art" "${dirs[@]}" > "$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ] && [ "${FUZZ_KEEP:-0}" = 1 ]; then
    mkdir -p "$kept"
    "$bin" -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 "$kept" "$build/fuzz/corpus/$t" >> "$log" 2>&1
  fi
  local runs; runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  if [ $rc -eq 0 ]; then echo "$t: ${runs:-?} executions in ${seconds} s, ok"
  else echo "$t: FAILED (exit $rc) after ${runs:-?} executions: see $log and $art"; return 1; fi
}
export -f one seed
export build seconds root models

printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'one {}'
