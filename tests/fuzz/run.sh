#!/usr/bin/env bash
# Runs the libFuzzer targets of a fuzzing build (docs/testing.md).
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]
#
# Each target runs for SECONDS (default 60) from its seeds, read in place
# in one sorted order, with a corpus folder in a temporary directory, so
# the repository is never written to. A target that
# finds a crash, a leak or a broken invariant fails; its input is kept in
# BUILD_DIR/fuzz-artifacts/ and the command that reproduces it is printed.
# The results go to BUILD_DIR/meson-logs/fuzzlog.json, one JSON object per
# target in the form of meson's testlog.json, for tests/run-all.sh to count.
# The mutation seed is TALLY_FUZZ_SEED (default 1).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR [SECONDS] [TARGET...]}" && pwd)
seconds=${2:-60}
# A fixed seed by default, so that CI tries the same inputs each run and a
# red run means a change, not luck; TALLY_FUZZ_SEED=0 lets libFuzzer pick.
seed=${TALLY_FUZZ_SEED:-1}
# And a fixed number of inputs (SECONDS is then a cap for a slow machine):
# a faster machine must not reach further into the sequence than the runs
# that were checked.
runs=${TALLY_FUZZ_RUNS:-20000}
shift $(( $# >= 2 ? 2 : 1 ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(sse-decoder message-stream message-stream-diff markdown questions gate store)
fi

# Seeds beyond tests/fuzz/corpus/<target>/: the project's own fixtures.
extra_seeds() {
  case $1 in
    sse-decoder|message-stream|message-stream-diff) ls "$top"/tests/fixtures/sse/*.sse ;;
    markdown) ls "$top"/tests/golden/markdown/*.md ;;
  esac
}

# The ASan options of the test stages ask for slow, full stack unwinding on
# every malloc; a fuzzer wants fast ones. Later options win.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=1:malloc_context_size=10:strict_string_checks=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:halt_on_error=1:print_stacktrace=1"
export G_DEBUG=gc-friendly
export GSETTINGS_BACKEND=memory

work=$(mktemp -d "${TMPDIR:-/tmp}/tally-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts" "$build/meson-logs"
log_json=$build/meson-logs/fuzzlog.json
: > "$log_json"

status=0
for target in "${targets[@]}"; do
  exe=$build/tests/fuzz/fuzz-$target
  corpus=$work/corpus-$target
  mkdir -p "$corpus"
  # The seeds go in as one sorted list (-seed_inputs), not as files in the
  # corpus folder: libFuzzer takes a folder in the order the file system
  # lists it, so the same seed ran different inputs on another machine.
  seeds=$work/seeds-$target
  { ls -d "$top"/tests/fuzz/corpus/"$target"/* 2>/dev/null; extra_seeds "$target"; } \
    | LC_ALL=C sort | paste -sd, - > "$seeds"
  dict=()
  # The differential target reads the same streams as message-stream.
  dict_name=${target%-diff}
  [ -f "$top/tests/fuzz/dict/$dict_name.dict" ] && dict=(-dict="$top/tests/fuzz/dict/$dict_name.dict")

  echo "== fuzz-$target: ${seconds}s on $(tr , '\n' < "$seeds" | grep -c .) seeds"
  start=$(date +%s)
  if [ ! -x "$exe" ]; then
    echo "fuzz-$target was not built"
    result=FAIL
  elif (cd "$work" && "$exe" "$corpus" "${dict[@]}" \
          -seed_inputs=@"$seeds" -reload=0 -seed="$seed" -runs="$runs" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=25 \
          -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
          > "$work/$target.log" 2>&1); then
    result=OK
  else
    result=FAIL
  fi
  duration=$(( $(date +%s) - start ))

  grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|^stat::peak_rss_mb' "$work/$target.log" | sed 's/^/   /'
  if [ "$result" = FAIL ]; then
    status=1
    tail -n 60 "$work/$target.log"
    cp "$work/$target.log" "$artifacts/$target.log"
    for crash in "$artifacts/$target-"*; do
      case $crash in *.log) continue ;; esac
      [ -e "$crash" ] && echo "   reproduce: $exe $crash"
    done
  fi
  echo "   $result in ${duration}s"
  printf '{"name": "fuzz-%s", "result": "%s", "duration": %s}\n' "$target" "$result" "$duration" >> "$log_json"
done

exit $status
