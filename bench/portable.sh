#!/usr/bin/env bash
# Packs the built wall (streamer, receiver, wallcut, wallctl, pathline, udpceil) with
# Open MPI and every shared library they load into one folder that runs on
# another x86-64 Linux machine without this project's packages: a server to
# benchmark before anything is installed on it. Its glibc must be as new as
# the build machine's (Debian 12: 2.36).
#
#   bench/portable.sh DIR        # then, on the other machine, from a checkout:
#   source DIR/env.sh            # build/ points into DIR; mpirun is DIR's
#   bench/receiver_bench.sh wall
#
# The programs, Open MPI's launcher and its components find their libraries
# through an RPATH into DIR/lib (patchelf), not LD_LIBRARY_PATH, so the
# machine's own tools (ps, pgrep, python3) keep their own libraries. glibc
# stays the machine's. Open MPI's transports for InfiniBand, OFI and UCX
# are left out (the Debian defaults already turn them off); TCP and shared
# memory remain. Needs patchelf.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
command -v patchelf >/dev/null || { echo "$0: needs patchelf" >&2; exit 2; }
cd "$(dirname "$0")/.."
dir=$(mkdir -p "$1" && cd "$1" && pwd)
rm -rf "${dir:?}"/{bin,lib,usr,etc,env.sh}
mkdir -p "$dir/bin" "$dir/lib"
gcc -O2 -pthread -o build/bench/udpceil ../shared/bench/udpceil.c -lm
programs=(build/streamer/streamer build/receiver/receiver build/tools/wallcut build/tools/wallctl build/testbed/pathline
  build/bench/udpceil build/sim/wallsim
  build/bench/ring_read build/bench/packet_rate build/bench/udp_sink)
for p in "${programs[@]}"; do strip -o "$dir/bin/$(basename "$p")" "$p"; done
ompi=/usr/lib/x86_64-linux-gnu/openmpi
mkdir -p "$dir/usr/bin" "$dir/usr/share" "$dir$ompi/lib" "$dir/etc"
cp -L /usr/bin/orterun /usr/bin/orted "$dir/usr/bin/"
ln -sf orterun "$dir/usr/bin/mpirun"
cp -r /usr/share/openmpi "$dir/usr/share/"
cp -r /etc/openmpi "$dir/etc/"
# Open MPI's PMIx, with its own plugins: another machine's PMIx plugins do not load into it.
pmix=/usr/lib/x86_64-linux-gnu/pmix2
mkdir -p "$dir$pmix/lib"
cp -r "$pmix/lib/pmix" "$dir$pmix/lib/"
cp -r "$pmix/share" "$dir$pmix/"
for c in "$ompi"/lib/openmpi3/mca_*.so; do
  case $(basename "$c") in *ofi* | *ucx* | *uct* | *openib* | *psm* | *verbs* | *cuda*) continue ;; esac
  mkdir -p "$dir$ompi/lib/openmpi3"
  cp "$c" "$dir$ompi/lib/openmpi3/"
done
# The tools the benchmarks' faults need (nft for losses and refusals; ip, tc
# and iptables for the testbed's delay line), for a machine that has none:
# env.sh puts them last on PATH, so a machine's own come first.
mkdir -p "$dir/sbin" "$dir/xtables"
for t in nft ip tc; do cp -L "$(command -v $t)" "$dir/sbin/"; done
cp -L /usr/sbin/xtables-nft-multi "$dir/sbin/"
for t in iptables iptables-save iptables-restore; do ln -sf xtables-nft-multi "$dir/sbin/$t"; done
cp /usr/lib/x86_64-linux-gnu/xtables/*.so "$dir/xtables/"
# Every library those load, but glibc's own.
objects=("$dir"/bin/* "$dir"/sbin/nft "$dir"/sbin/ip "$dir"/sbin/tc "$dir"/sbin/xtables-nft-multi "$dir"/xtables/*.so "$dir"/usr/bin/orterun "$dir"/usr/bin/orted "$dir$ompi"/lib/openmpi3/*.so "$dir$pmix"/lib/pmix/*.so)
ldd "${objects[@]}" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64)\.so' |
  while read -r lib; do cp -L "$lib" "$dir/lib/"; done
# Open MPI's library folder holds the same libraries by the names it opens.
for lib in "$dir"/lib/lib{mpi,open-pal,open-rte}*.so*; do ln -sf "../../../../../lib/$(basename "$lib")" "$dir$ompi/lib/"; done
for f in "$dir"/bin/* "$dir"/sbin/* "$dir"/xtables/*.so "$dir"/usr/bin/orterun "$dir"/usr/bin/orted "$dir"/lib/*.so* "$dir$ompi"/lib/openmpi3/*.so "$dir$pmix"/lib/pmix/*.so; do
  [ -L "$f" ] && continue
  rel=$(realpath --relative-to="$(dirname "$f")" "$dir/lib")
  patchelf --force-rpath --set-rpath "\$ORIGIN/$rel" "$f"
done
cat >"$dir/env.sh" <<'EOF'
# Sourced from the repository root on the other machine.
portable=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OPAL_PREFIX=$portable/usr PATH=$portable/usr/bin:$PATH
export OMPI_MCA_mca_base_param_files=$portable/etc/openmpi/openmpi-mca-params.conf
export PATH=$PATH:$portable/sbin
command -v iptables | grep -q "^$portable/" && export XTABLES_LIBDIR=$portable/xtables
# Open MPI's PMIx opens its plugins by the path it was built with; where the
# machine has another PMIx's plugins there, put these in their place.
pmix=/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
if [ -d "$pmix" ] && ! cmp -s "$portable$pmix/pmix_mca_prm_default.so" "$pmix/pmix_mca_prm_default.so"; then
  echo "portable: replacing the plugins in $pmix with Open MPI's PMIx's own" >&2
  cp "$portable$pmix"/*.so "$pmix/"
fi
mkdir -p build/streamer build/receiver build/tools build/testbed build/bench
for p in streamer receiver; do ln -sf "$portable/bin/$p" "build/$p/$p"; done
for p in wallcut wallctl; do ln -sf "$portable/bin/$p" "build/tools/$p"; done
ln -sf "$portable/bin/pathline" build/testbed/pathline
mkdir -p build/sim && ln -sf "$portable/bin/wallsim" build/sim/wallsim
for p in udpceil ring_read packet_rate udp_sink; do ln -sf "$portable/bin/$p" "build/bench/$p"; done
export UDPCEIL=$PWD/build/bench/udpceil
EOF
du -sh "$dir"
