#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Records the sample session of the first-launch page
# (data/sample-session/README.md): tally-cli runs two turns against the
# mock Messages API (tests/scenarios/sample-session.json) on the Beanline
# sample in a throwaway store, answering the question card with stores 1
# and 2; the session's event log, its API conversation and the chart files
# it made are then written to data/sample-session/, this machine's paths
# taken out (the window puts
# its own in when it copies the session into a store).
#
# Usage: build-aux/record-sample-session.sh [BUILD_DIR]   (default: build)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
out="$here/data/sample-session"
work="$(mktemp -d)"
mock_pid=
cleanup () {
  [[ -n "$mock_pid" ]] && kill "$mock_pid" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$build/tests/mock-api/tally-mock-api" --scenario "$here/tests/scenarios/sample-session.json" \
  > "$work/port" 2> "$work/mock.log" &
mock_pid=$!
for _ in $(seq 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
port="$(head -n 1 "$work/port")"

cli=("$build/src/cli/tally-cli" --base-url "http://127.0.0.1:$port" --store "$work/store.db")
mkdir -p "$work/workspace"
export ANTHROPIC_API_KEY=sk-recording
echo "1,2" | "${cli[@]}" --workspace "$work/workspace" --mode plan --thinking \
  "I'd like to see how two of our stores compare month by month." > /dev/null 2>> "$work/cli.log"
id="$("${cli[@]}" --list | cut -f 1)"
"${cli[@]}" --resume "$id" --mode ask "Implement the plan." < /dev/null > /dev/null 2>> "$work/cli.log"
"${cli[@]}" --export "$id" --format jsonl > "$work/events.jsonl"
rm -rf "$out/charts"
cp -r "$work/workspace/charts" "$out/charts"

python3 - "$work/events.jsonl" "$work/store.db" "$out" "$id" <<'PY'
import json, sqlite3, sys

events_path, store_path, out, session_id = sys.argv[1:]
expected = "61c5623f-2b96-4609-9ba3-3876dff7971f"  # TALLY_SAMPLE_SESSION_ID
lines = []
for line in open(events_path, encoding="utf-8"):
    event = json.loads(line)
    event["session_id"] = expected
    if event["type"] == "session_created":
        event["title"] = "Sample: Two Beanline Stores by Month"
        event["workspace"] = None
        event["database"] = None
    lines.append(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
with open(f"{out}/beanline-sample.jsonl", "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")

messages = {}
db = sqlite3.connect(store_path)
for index, role, block in db.execute(
        "SELECT msg_index, role, block FROM messages WHERE session_id = ? "
        "ORDER BY msg_index, block_index", (session_id,)):
    messages.setdefault(index, {"role": role, "blocks": []})["blocks"].append(block)
with open(f"{out}/beanline-sample-messages.jsonl", "w", encoding="utf-8") as f:
    for index in sorted(messages):
        f.write(json.dumps(messages[index], ensure_ascii=False, separators=(",", ":")) + "\n")
PY
echo "Recorded session $id into $out"
