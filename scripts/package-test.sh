#!/usr/bin/env bash
# The packages as an operator gets them (CI runs this; root): builds them
# (scripts/package.sh), installs both with apt-get, which pulls what they
# need, checks the systemd units (systemd-analyze verify, where it
# exists), plays a short 2x2 wall over loopback with the installed programs
# only (PATH without the build tree: /usr/bin's tilestream-* programs, the
# config from /usr/share/doc), removes them with --purge and checks that
# nothing they installed is left. Exits non-zero, saying why, on any
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "package-test: needs root (apt-get install)" >&2; exit 1; }
fail() { echo "package-test: $*" >&2; exit 1; }

scripts/package.sh >/dev/null
for p in tilestream-server tilestream-display; do
  if dpkg -s "$p" >/dev/null 2>&1; then fail "$p is installed already: remove it first"; fi
done
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q ./build/packages/tilestream-server_*.deb \
  ./build/packages/tilestream-display_*.deb >/dev/null
files=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$files" "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT
dpkg -L tilestream-server tilestream-display | sort -u >"$files"
echo "package-test: installed $(grep -c . "$files") paths"

if command -v systemd-analyze >/dev/null; then
  for unit in tilestream-streamer.service tilestream-receiver@.service; do
    out=$(systemd-analyze verify "/usr/lib/systemd/system/$unit" 2>&1) || fail "$unit: $out"
  done
  echo "package-test: systemd-analyze verify: both units clean"
fi

# The installed programs only.
export PATH=/usr/bin:/bin
config=$work/wall.toml
sed 's/^port_base = .*/port_base = 51700/' /usr/share/doc/tilestream-server/examples/test-2x2.toml >"$config"
tilestream-wallcut --help >/dev/null
tilestream-wallcut --config "$config" --synthetic --frames 12 --out "$work/library/A" -q \
  || fail "tilestream-wallcut could not cut a movie"
for node in left right; do
  tilestream-receiver --config "$config" --node "$node" --headless -q --json "$work/$node.json" \
    --duration 30 >"$work/$node.out" 2>&1 &
done
for node in left right; do
  for _ in $(seq 100); do grep -q " <- " "$work/$node.out" 2>/dev/null && break; sleep 0.1; done
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 120 tilestream-launch --config "$config" --library "$work/library" --movie A \
  --ticks 50 -q --json "$work/streamer.json" >"$work/streamer.out" 2>&1 \
  || fail "tilestream-launch: $(tail -5 "$work/streamer.out")"
kill -TERM $(jobs -p) 2>/dev/null || true
wait || true
frames=$(python3 -c "import json,sys; print(sum(t['frames_complete'] for n in sys.argv[1:] for t in json.load(open(n))['tiles']))" "$work/left.json" "$work/right.json")
[ "$frames" -ge 160 ] || fail "the display nodes completed $frames tile frames of the 200 sent"
echo "package-test: a 2x2 wall of the installed programs: $frames of 200 tile frames shown"

apt-get remove --purge -y -q tilestream-server tilestream-display >/dev/null
left=0
while read -r path; do
  case "$path" in /|/.|/etc|/usr|/usr/bin|/usr/share|/usr/share/doc|/usr/lib|/usr/lib/systemd|/usr/lib/systemd/system|/lib|/lib/systemd|/lib/systemd/system) continue ;; esac
  if [ -e "$path" ]; then echo "package-test: left behind: $path" >&2; left=1; fi
done <"$files"
[ "$left" -eq 0 ] || fail "files left after apt-get remove --purge"
dpkg -L tilestream-server >/dev/null 2>&1 && fail "dpkg still lists tilestream-server"
echo "package-test: removed with --purge, nothing left behind"
