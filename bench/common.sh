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
