#!/usr/bin/env bash
# meson test --wrapper for the sanitizer stage (tests/run-all.sh): runs one
# test; if it failed only because LeakSanitizer itself could not run its
# leak check at exit ("LeakSanitizer has encountered a fatal error": its
# tracer could not stop the process's threads, which happens now and then
# on a loaded machine), it runs the test once more and says so on stderr.
# Any other failure, a leak report included, is passed on as it is. The
# first run's output is held back until its status is known, so that meson
# reads one TAP stream.
set -u

out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

"$@" >"$out" 2>"$err"
status=$?
if [ "$status" -ne 0 ] && grep -q "LeakSanitizer has encountered a fatal error" "$err"; then
  {
    echo "lsan-retry: LeakSanitizer could not check for leaks (exit $status); the test's output was:"
    tail -n 20 "$err"
    echo "lsan-retry: running the test again"
  } >&2
  "$@"
  exit $?
fi
cat "$out"
cat "$err" >&2
exit "$status"
