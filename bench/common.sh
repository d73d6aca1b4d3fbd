# Shared by the benchmark scripts (sourced): run from the repository root,
# build what is missing, build udpceil from ../shared/bench, helpers.
# Sets: what (first argument, default all), secs ($SECS, default 5),
# out ($OUT, default build/bench-results), udpceil.
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
what=${1:-all}
secs=${SECS:-5}
out=${OUT:-build/bench-results}
mkdir -p "$out"
# Every figure also goes to $RESULTS as "key<TAB>value" (bench/run reads it).
export RESULTS=${RESULTS:-$out/results.tsv}
record() { printf '%s\t%s\n' "$1" "$2" >> "$RESULTS"; }
[ -x build/streamer/streamer ] || scripts/build.sh >/dev/null
# $UDPCEIL: one built already (bench/portable.sh, on a machine without ../shared).
udpceil=${UDPCEIL:-build/bench/udpceil}
[ -n "${UDPCEIL:-}" ] || gcc -O2 -pthread -o "$udpceil" ../shared/bench/udpceil.c -lm
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# In the Python parts: rec(key, value) appends to $RESULTS too.
export PYREC='import os
def rec(k, v): open(os.environ["RESULTS"], "a").write("%s\t%s\n" % (k, v))'
json() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }
field() { sed -n "s|.*$2=\([0-9.]*\).*|\1|p" <<<"$1" | head -1; }

wall_config() {  # COLUMNS ROWS FILE
  cat > "$3" <<EOF
[wall]
columns = $1
rows = $2
tile_width = 2560
tile_height = 1600
fps = 22
[stream]
mtu = 9000
port_base = 50000
EOF
}

# The reference wall (configs/sara-5x3.toml: 5x3 of 2560x1600, its 8
# display nodes) at FPS with every node on loopback; EXTRA (TOML) appended.
reference_wall_config() {  # FPS FILE [EXTRA]
  {
    printf '[wall]\ncolumns = 5\nrows = 3\ntile_width = 2560\ntile_height = 1600\nbezel_x = 144\nbezel_y = 144\nfps = %s\n' "$1"
    printf '%s\n' "${3:-[stream]
mtu = 9000
port_base = 50000}"
    local nodes=("r0c0 r0c1" "r0c2 r0c3" "r0c4 r1c0" "r1c1 r1c2" "r1c3 r1c4" "r2c0 r2c1" "r2c2 r2c3" "r2c4") i=1
    for n in "${nodes[@]}"; do
      printf '[[node]]\nname = "tile%02d"\naddress = "127.0.0.1"\ntiles = [%s]\n' "$i" \
        "$(sed 's/\([a-z0-9]*\)/"\1"/g; s/ /, /g' <<<"$n")"
      i=$((i + 1))
    done
  } >"$2"
}
