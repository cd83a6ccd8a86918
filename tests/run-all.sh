#!/usr/bin/env bash
# Builds Tally with warnings as errors and runs the whole test suite, then
# builds it again with AddressSanitizer and UndefinedBehaviorSanitizer and
# runs the tests once more, then runs each libFuzzer target for a minute.
# Used by the README and by CI (.ci/run).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

jobs=$(nproc 2>/dev/null || echo 2)

# run_suite DIR TIMEOUT_MULTIPLIER [MESON TEST OPTIONS…]: builds DIR (set up
# beforehand) and runs its tests under a virtual X server (the UI tests need
# a display). Each run writes its own meson-logs/testlog*.json.
run_suite() {
  local dir=$1 multiplier=$2; shift 2
  meson compile -C "$dir" &&
  xvfb-run -a -s "-screen 0 1400x1000x24" \
    meson test -C "$dir" --print-errorlogs --num-processes "$jobs" \
      --timeout-multiplier "$multiplier" "$@"
}

status=0
rm -f build-tests/meson-logs/testlog*.json build-asan/meson-logs/testlog*.json
[ -f build-tests/build.ninja ] || meson setup build-tests -Dwerror=true
run_suite build-tests 1 || status=1

[ -f build-asan/build.ninja ] ||
  meson setup build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
# handle_abort and handle_sigtrap: an abort() or a fatal GLib message
# (G_BREAKPOINT) prints the stack too, so a crash seen once in CI says where.
asan_common=detect_leaks=1:abort_on_error=1:strict_string_checks=1:malloc_context_size=30:handle_abort=1:handle_sigtrap=1
export LSAN_OPTIONS=suppressions=$top/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The core's tests record full allocation stacks (DWARF unwinding, also
# through GLib, which is built without frame pointers), so that a leak
# report shows where it came from; that makes every malloc several times
# slower, so the sanitized runs get four times the timeouts. The UI tests,
# where GTK allocates most, and the chart drawing tests (suite 'render',
# where Cairo and Pango do) keep the fast frame-pointer unwinder.
# Each test runs through tests/lsan-retry.sh: once more when LeakSanitizer
# itself failed at exit (not when it found a leak).
lsan_retry=$top/tests/lsan-retry.sh
ASAN_OPTIONS=$asan_common:fast_unwind_on_malloc=0 \
  run_suite build-asan 4 --wrapper "$lsan_retry" --no-suite ui --no-suite render --logbase testlog-core || status=1
# The UI and render tests add tests/lsan-ui.supp (why: see that file).
# They also preload Mesa's software driver when it is installed: GDK loads
# it for every display (also to pick a visual under the cairo renderer) and
# unloads it when the display closes, and LeakSanitizer then reports what
# the driver's globals still held as leaks of an "<unknown module>", which
# no suppression can name (seen with Mesa 22.3.6-1+deb12u2). A preloaded
# library is never unloaded. ASan must then allow a library before its own.
cat "$top/tests/lsan.supp" "$top/tests/lsan-ui.supp" > build-asan/lsan-ui.supp
ui_preload=$(ls /usr/lib/*/dri/swrast_dri.so 2>/dev/null | head -n 1 || true)
LD_PRELOAD=$ui_preload ASAN_OPTIONS=$asan_common:verify_asan_link_order=0 \
LSAN_OPTIONS=suppressions=$top/build-asan/lsan-ui.supp:print_suppressions=0 \
  run_suite build-asan 4 --wrapper "$lsan_retry" --suite ui --suite render --logbase testlog-ui || status=1

# Third stage: the libFuzzer targets (docs/testing.md), built by clang with
# ASan and UBSan, without the UI; each runs for 60 s on a copy of its seeds
# and counts as one test below.
run_fuzz() {
  local dir=build-fuzz
  rm -f "$dir/meson-logs/fuzzlog.json"
  if [ ! -f "$dir/build.ninja" ]; then
    CC=clang meson setup "$dir" -Dfuzzing=true -Dui=disabled \
      -Db_sanitize=address,undefined -Db_lundef=false || return 1
  fi
  meson compile -C "$dir" fuzz || return 1
  tests/fuzz/run.sh "$dir" "${TALLY_FUZZ_SECONDS:-60}"
}
run_fuzz || status=1

# One closing line in the plain form: N passed, N failed.
# meson test names a log after --logbase and the wrapper's file name.
python3 - build-tests/meson-logs/testlog.json \
  build-asan/meson-logs/testlog-core-lsan-retry.sh.json \
  build-asan/meson-logs/testlog-ui-lsan-retry.sh.json build-fuzz/meson-logs/fuzzlog.json <<'PY'
import json, sys
passed = failed = skipped = 0
failures = []
for log in sys.argv[1:]:
    try:
        with open(log) as f:
            for line in f:
                entry = json.loads(line)
                r = entry.get("result")
                if r in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif r == "SKIP":
                    skipped += 1
                else:
                    failed += 1
                    failures.append((log, entry))
    except FileNotFoundError:
        failed += 1
        failures.append((log, None))
# The failures again, short, just above the closing line: a CI log that
# keeps only its head and tail still says which test failed and how.
for log, entry in failures:
    if entry is None:
        print(f"FAILED: {log} is missing (its stage did not run)")
        continue
    print(f"FAILED: {entry.get('name')} ({log}, {entry.get('result')}, "
          f"return code {entry.get('returncode')})")
    lines = ((entry.get("stdout") or "") + (entry.get("stderr") or "")).strip().splitlines()
    # What went wrong (GLib's fatal messages, a sanitizer's report and the
    # first frames of its stack), then the last lines.
    cause = [l for l in lines if any(k in l for k in ("ERROR", "CRITICAL", "Sanitizer", "Timed out"))][:4]
    frames = [l for l in lines if l.lstrip().startswith("#") and " in " in l][:14]
    for line in cause + frames + lines[-4:]:
        print(f"    {line.strip()[:300]}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY

exit $status
