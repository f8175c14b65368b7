#!/usr/bin/env bash
# End-to-end: start the real app under Xvfb with Mesa's software Vulkan, drag the cloth with
# xdotool, take a screenshot, and check that something rendered and that the drag moved the
# cloth (the app prints a JSON summary on exit with --summary). The drag pulls 400 px down
# from near the pinned edge, beyond what the cloth can reach; without flags (the app's
# default configuration) every step must also end within the tolerance.
# usage: [E2E_AT=X,Y] [E2E_CUT=1] [E2E_TEAR=1] .ci/e2e.sh [BINARY [APP FLAGS...]]  (E2E_AT:
# where the drag starts, screen pixels; 700,330 by default, near the hanging cloth's pinned
# edge; E2E_CUT=1: the drag is made with shift held, a cut stroke, which must cut the cloth
# and grab nothing; E2E_TEAR=1: no drag — the scene's own scripted drag must tear the cloth,
# which must end within its tolerance)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/impulse-cloth}
shift || true
flags=("$@")
default=$([ ${#flags[@]} -eq 0 ] && echo 1 || echo 0)
need=()
command -v Xvfb >/dev/null || need+=(xvfb)
command -v xdotool >/dev/null || need+=(xdotool)
command -v convert >/dev/null || need+=(imagemagick)
[ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || need+=(mesa-vulkan-drivers libvulkan1)
if [ ${#need[@]} -gt 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null
fi
out=$(mktemp -d)
disp=""
for n in $(seq 90 140); do [ -e /tmp/.X11-unix/X$n ] || { disp=:$n; break; }; done
Xvfb "$disp" -screen 0 1280x800x24 >/dev/null 2>&1 & xpid=$!
trap 'kill $xpid 2>/dev/null || true' EXIT
sleep 1
DISPLAY=$disp "$bin" ${flags[@]+"${flags[@]}"} --summary --exit-after 90 >"$out/summary.json" 2>"$out/app.log" & apid=$!
# Wait for the window, then let the cloth settle a little.
for _ in $(seq 1 60); do
  DISPLAY=$disp xdotool search --name impulse-cloth >/dev/null 2>&1 && break
  sleep 1
done
# The cloth is released flat and swings down under its pins; under software Vulkan a frame
# takes 100–500 ms and simulated time runs slower than wall time (the overlay says why), so
# give it time to hang before grabbing it.
sleep 20
IFS=, read -r x0 y0 <<<"${E2E_AT:-700,330}"
cut=${E2E_CUT:-0}
tear=${E2E_TEAR:-0}
if [ "$cut" = 1 ]; then
  wid=$(DISPLAY=$disp xdotool search --name impulse-cloth | head -1)
  DISPLAY=$disp xdotool windowfocus "$wid"; sleep 0.5
  DISPLAY=$disp xdotool keydown Shift_L
fi
if [ "$tear" = 1 ]; then
  sleep 30
  DISPLAY=$disp import -window root "$out/shot.png"
else
  DISPLAY=$disp xdotool mousemove "$x0" "$y0" mousedown 1
  # A cut is made of the pointer's positions the frames see: under software Vulkan a frame
  # may take 500 ms, and a fast stroke left its start unseen (9 edges cut instead of 27).
  # The cut stroke waits at its start and moves slower.
  pace=0.1
  if [ "$cut" = 1 ]; then sleep 1; pace=0.25; fi
  for i in $(seq 1 25); do
    DISPLAY=$disp xdotool mousemove $((x0 + 4 * i)) $((y0 + 16 * i)); sleep "$pace"
  done
  sleep 2
  DISPLAY=$disp import -window root "$out/shot.png"
  DISPLAY=$disp xdotool mouseup 1
fi
[ "$cut" = 1 ] && DISPLAY=$disp xdotool keyup Shift_L
wait $apid || { echo "app failed:"; tail -20 "$out/app.log"; exit 1; }
cat "$out/summary.json"
[ -n "${E2E_SHOT:-}" ] && cp "$out/shot.png" "$E2E_SHOT"
sd=$(convert "$out/shot.png" -colorspace Gray -format "%[fx:standard_deviation]" info:)
echo "screenshot grey-level standard deviation: $sd"
python3 - "$out/summary.json" "$sd" "$default" "$cut" "$tear" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip().startswith("{")]
assert lines, "no JSON summary printed"
s = json.loads(lines[-1])
assert s["steps"] > 10, f"the simulation did not run: {s}"
if sys.argv[4] == "1":
    assert not s["grabbed"], f"the cut stroke grabbed the cloth: {s}"
    assert s["cut_edges"] > 10, f"the cut stroke cut nothing: {s}"
    # A step right after a cut may end over the tolerance (measured: one step at 1.7e-2
    # in a 90 s session); the cloth must come back.
    assert s["steps_over_tolerance"] <= 5, f"the cut cloth stayed stretched: {s}"
    assert s["max_strain"] <= s["tolerance"] * (1 + 1e-9), f"the cut cloth ends stretched: {s}"
elif sys.argv[5] == "1":
    assert s["torn_edges"] > 10, f"the scene did not tear: {s}"
    assert s["max_strain"] <= s["tolerance"] * (1 + 1e-9), f"the torn cloth ends stretched: {s}"
else:
    assert s["grabbed"], f"the drag did not grab the cloth: {s}"
    assert s["grab_travel"] > 0.05, f"the drag did not move the grabbed particle: {s}"
assert float(sys.argv[2]) > 0.02, "the screenshot is blank"
if sys.argv[3] == "1":
    assert s["steps_over_tolerance"] == 0, f"the default left steps over its tolerance: {s}"
    assert s["worst_strain"] <= s["tolerance"] * (1 + 1e-9), f"strain over tolerance: {s}"
print("e2e ok")
PY
