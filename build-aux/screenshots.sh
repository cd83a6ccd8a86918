#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Takes the AppStream screenshots in data/screenshots/ (main.png, the answer;
# thinking.png, the model's thinking opened; dark.png, the dark style;
# chart.png, an answer with a chart, from a second session) of
# a real session: tally-cli asks the Beanline question
# against the mock Messages API (tests/scenarios/beanline-march-stores.json),
# which stores the session; then the window opens it with --session under
# Xvfb, and ImageMagick captures the window.
#
# Usage: build-aux/screenshots.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, data/screenshots)
#
# Needs: xvfb-run, xdotool, ImageMagick (import, convert), dbus-run-session;
# pngquant and optipng shrink the files when they are installed. Not run
# in CI: screenshots are taken by hand before a release and committed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
out="${2:-$here/data/screenshots}"
width=1200
height=760

if [[ -z "${TALLY_SCREENSHOT_INNER:-}" ]]; then
  for tool in xvfb-run xdotool import convert dbus-run-session; do
    command -v "$tool" > /dev/null || { echo "screenshots.sh: $tool is missing" >&2; exit 1; }
  done
  mkdir -p "$out"
  # One X server and one session bus for the whole run.
  exec env TALLY_SCREENSHOT_INNER=1 xvfb-run -a -s "-screen 0 1280x800x24" \
    dbus-run-session -- "$0" "$build" "$out"
fi

work="$(mktemp -d)"
mock_pid=
app_pid=
cleanup () {
  [[ -n "$app_pid" ]] && kill "$app_pid" 2> /dev/null || true
  [[ -n "$mock_pid" ]] && kill "$mock_pid" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

export ANTHROPIC_API_KEY=sk-screenshot-key
export GSETTINGS_BACKEND=memory
export GSETTINGS_SCHEMA_DIR="$build/data"
export GDK_BACKEND=x11
export NO_AT_BRIDGE=1
export LANG=C.UTF-8 LC_ALL=C.UTF-8
# GNOME's interface font, as a GNOME session would set it (Xvfb has no
# settings daemon); also keeps the user's own GTK settings out of the shots.
export XDG_CONFIG_HOME="$work/config"
mkdir -p "$XDG_CONFIG_HOME/gtk-4.0"
printf '[Settings]\ngtk-font-name=Cantarell 11\ngtk-hint-font-metrics=1\n' > "$XDG_CONFIG_HOME/gtk-4.0/settings.ini"

# The mock prints its port on stdout once it listens.
"$build/tests/mock-api/tally-mock-api" \
  --scenario "$here/tests/scenarios/beanline-march-stores.json" > "$work/port" 2> "$work/mock.log" &
mock_pid=$!
for _ in $(seq 50); do [[ -s "$work/port" ]] && break; sleep 0.1; done
port="$(head -n1 "$work/port")"
base="http://127.0.0.1:$port"

"$build/src/cli/tally-cli" --store "$work/shot.db" --base-url "$base" --thinking=8000 \
  "Which store sold the most in March?" > "$work/cli.log"
session="$("$build/src/cli/tally-cli" --store "$work/shot.db" --list | awk -F '\t' 'NR == 1 { print $1 }')"
[[ -n "$session" ]] || { echo "screenshots.sh: no session was stored" >&2; exit 1; }

# shoot NAME WHAT [ENV=VALUE...]: opens a fresh window on the stored
# session (WHAT = session) or on a new one (WHAT = new), sizes it, waits for
# it to settle and captures it. $click, when set to "X Y", clicks there
# first (window coordinates); $wheel, when set to "X Y N", turns the mouse
# wheel up N steps there (scrolls the transcript back).
click=
wheel=
shoot () {
  local name="$1" what="$2"; shift 2
  local wid=
  local args=(--store "$work/shot.db" --base-url "$base")
  [[ "$what" == session ]] && args+=(--session "$session")
  env "$@" "$build/src/ui/tally" "${args[@]}" > "$work/$name.log" 2>&1 &
  app_pid=$!
  for _ in $(seq 100); do
    wid="$(xdotool search --onlyvisible --pid "$app_pid" 2> /dev/null | head -n1 || true)"
    [[ -n "$wid" ]] && break
    sleep 0.1
  done
  [[ -n "$wid" ]] || { echo "screenshots.sh: the window did not appear" >&2; cat "$work/$name.log" >&2; exit 1; }
  xdotool windowsize "$wid" "$width" "$height"
  xdotool windowmove "$wid" 0 0
  sleep 3   # let the transcript lay out and the model list arrive
  if [[ -n "$wheel" ]]; then
    read -r wx wy wn <<< "$wheel"
    xdotool mousemove --window "$wid" "$wx" "$wy" click --repeat "$wn" --delay 80 4 mousemove 1279 799
    sleep 1
  fi
  if [[ -n "$click" ]]; then
    # shellcheck disable=SC2086
    xdotool mousemove --window "$wid" $click click 1 mousemove 1279 799
    sleep 1
  fi
  import -window "$wid" "$work/$name-raw.png"
  # Xvfb has no compositor, so the window comes out with square corners and
  # no shadow: round the corners (12 px, as Adwaita draws them) and add a
  # soft shadow on a transparent background, as in a GNOME session.
  convert "$work/$name-raw.png" \
    \( +clone -alpha extract \
       -draw "fill black polygon 0,0 0,12 12,0 fill white circle 12,12 12,0" \
       \( +clone -flip \) -compose Multiply -composite \
       \( +clone -flop \) -compose Multiply -composite \) \
    -alpha off -compose CopyOpacity -composite \
    \( +clone -background black -shadow 35x14+0+6 \) +swap \
    -background none -compose Over -layers merge +repage -strip "$out/$name.png"
  if command -v pngquant > /dev/null; then
    pngquant --force --skip-if-larger --quality 80-95 --output "$out/$name.png" "$out/$name.png" || true
  fi
  if command -v optipng > /dev/null; then
    optipng -quiet -o2 "$out/$name.png"
  fi
  kill "$app_pid"
  wait "$app_pid" 2> /dev/null || true
  app_pid=
  echo "$out/$name.png: $(identify -format '%wx%h' "$out/$name.png"), $(( $(stat -c %s "$out/$name.png") / 1024 )) KiB"
}

shoot main session
click="460 150" shoot thinking session   # the thinking drawer, opened
shoot dark session ADW_DEBUG_COLOR_SCHEME=prefer-dark

# A chart: a second session from the Q2 report scenario (query_database,
# create_chart, Write report.md) in auto mode, so that its tools run.
kill "$mock_pid"
wait "$mock_pid" 2> /dev/null || true
"$build/tests/mock-api/tally-mock-api" \
  --scenario "$here/tests/scenarios/report-q2-store.json" > "$work/port2" 2>> "$work/mock.log" &
mock_pid=$!
for _ in $(seq 50); do [[ -s "$work/port2" ]] && break; sleep 0.1; done
base="http://127.0.0.1:$(head -n1 "$work/port2")"
mkdir -p "$work/workspace"
"$build/src/cli/tally-cli" --store "$work/shot.db" --base-url "$base" --workspace "$work/workspace" --mode auto \
  "Which store earned the most in Q2? Chart it and write a one-page report" > "$work/cli2.log"
# awk reads the whole list: head would leave tally-cli writing into a
# closed pipe, and pipefail then ended the script with status 141.
session="$("$build/src/cli/tally-cli" --store "$work/shot.db" --list | awk -F '\t' 'NR == 1 { print $1 }')"
wheel="780 400 3" shoot chart session   # the whole chart in sight
