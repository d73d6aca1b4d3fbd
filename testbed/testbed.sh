#!/usr/bin/env bash
# The reference topology on one machine, in network namespaces (root only).
#
# `up`: one streaming server (configs/testbed-5x3.toml, testbed-2x2.toml)
#   ts-server   the streaming server: eth2..eth5 (10.10.1.1 .. 10.10.4.1)
#   ts-switch   a bridge joining everything (no addresses)
#   ts-tile01..ts-tile08   the display nodes: eth0 (10.10.0.11 .. 10.10.0.18)
#
# `up-two-servers`: two streaming servers (configs/testbed-two-servers.toml)
#   ts-srv1     host name ts-srv1 (a UTS namespace of its own): eth2, eth3
#               (10.10.1.1, 10.10.2.1) into the switch, mgmt0 10.99.0.1/24
#   ts-srv2     host name ts-srv2: eth2, eth3 (10.10.3.1, 10.10.4.1),
#               mgmt0 10.99.0.2/24, a direct link to ts-srv1's: the
#               management network that MPI's traffic keeps to
#   ts-switch, ts-tile01..08 as above.
#   Open MPI reaches ts-srv2 through testbed/testbed-rsh, an rsh agent that
#   enters the server's namespaces instead of logging in with ssh.
#
# `up --path SPEC`: the same, with a long path between the server and its
#   switch: every packet ts-server sends or receives over its NICs (media, NACKs,
#   retransmissions, the swap sync, control) crosses a delay line in user
#   space (testbed/pathline run: iptables' NFQUEUE target queues them to it), e.g.
#   --path rtt=20ms,jitter=2ms,loss=0.5% (SPEC: testbed/path_model.h). It
#   stops by itself after an hour; `path-report` stops it (the path is then
#   direct) and prints what it did and how accurately (JSON). The binary: $TILESTREAM_PATHLINE,
#   else build/testbed/pathline.
#
# All media links MTU 9000; addresses only inside these namespaces.
#
#   testbed/testbed.sh up [--path SPEC] | up-two-servers | down | status | path-report
#   testbed/testbed.sh exec NAME COMMAND...   (e.g. exec server ip -br addr,
#                                              exec srv2 hostname)
#
# `down` removes everything either `up` made, and is safe to run any time
# (also after a failed run: each `up` starts with it).
set -euo pipefail
nodes=(01 02 03 04 05 06 07 08)
dir=/tmp/tilestream-testbed
uts=$dir/uts  # the servers' UTS namespaces, bind-mounted here

need_root() {
  if [ "$(id -u)" -ne 0 ]; then echo "testbed: needs root (network namespaces)" >&2; exit 77; fi
  if ! ip netns list >/dev/null 2>&1; then echo "testbed: no network namespaces here" >&2; exit 77; fi
}

down() {
  stop_path
  for ns in ts-server ts-srv1 ts-srv2 ts-switch $(printf 'ts-tile%s ' "${nodes[@]}"); do
    ip netns del "$ns" 2>/dev/null || true  # its veth ends and their peers go with it
  done
  for f in "$uts"/*; do [ -e "$f" ] && umount "$f" 2>/dev/null; done
  rm -rf "$dir"
}

# veth NAME in NS1 <-> PEER in the switch, attached to its bridge.
link() {  # NS IFNAME PEER
  ip link add "$2" netns "$1" mtu 9000 type veth peer name "$3" netns ts-switch mtu 9000
  ip -n ts-switch link set "$3" master br0 up
  ip -n "$1" link set "$2" up
}

# The switch and the display nodes, with the token file.
switch_and_nodes() {
  mkdir -p "$dir"
  head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/token"
  echo >> "$dir/token"
  ip netns add ts-switch
  ip -n ts-switch link add br0 type bridge
  ip -n ts-switch link set br0 mtu 9000 up
  for n in "${nodes[@]}"; do
    ip netns add "ts-tile$n"
    ip -n "ts-tile$n" link set lo up
    link "ts-tile$n" eth0 "node-$n"
    ip -n "ts-tile$n" addr add "10.10.0.$((10#$n + 10))/16" dev eth0
  done
}

# A streaming server NS with NICs (name=address ...) into the switch.
server() {  # NS NIC=ADDRESS...
  local ns=$1
  shift
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  # One L2 segment, several source addresses: answer ARP only on the
  # interface that owns the address, so replies come back through the right NIC.
  ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
  for nic in "$@"; do
    link "$ns" "${nic%=*}" "${ns#ts-}-${nic%=*}"
    ip -n "$ns" addr add "${nic#*=}/16" dev "${nic%=*}"
  done
}

up() {
  local spec=""
  if [ "${1:-}" = "--path" ]; then spec=${2:?"--path needs a SPEC"}; fi
  down
  switch_and_nodes
  server ts-server eth2=10.10.1.1 eth3=10.10.2.1 eth4=10.10.3.1 eth5=10.10.4.1
  if [ -n "$spec" ]; then start_path "$spec"; fi
  echo "testbed: up (ts-server with eth2..eth5; ts-tile01..08; token in $dir/token)"
}

# The delay line in ts-switch, then the rules that send it every packet
# but loopback's (no listener on a queue: the kernel drops, so the rules go
# in only once it serves).
start_path() {  # SPEC
  local bin=${TILESTREAM_PATHLINE:-$(dirname "$0")/../build/testbed/pathline}
  if [ ! -x "$bin" ]; then echo "testbed: no delay line at $bin (build it first)" >&2; exit 1; fi
  ip netns exec ts-switch "$bin" run --path "$1" --seconds 3600 --ready "$dir/path.ready" \
    --stats "$dir/path.json" > "$dir/path.log" 2>&1 &
  echo $! > "$dir/path.pid"
  for _ in $(seq 100); do
    [ -s "$dir/path.ready" ] && break
    if ! kill -0 "$(cat "$dir/path.pid")" 2>/dev/null; then cat "$dir/path.log" >&2; exit 1; fi
    sleep 0.05
  done
  [ -s "$dir/path.ready" ] || { echo "testbed: the delay line did not start" >&2; exit 1; }
  # iptables' NFQUEUE target (this kernel has no nft_queue, nftables' own)
  # on the bridge's forwarding path (br_netfilter): a packet held there has
  # left the server's namespace, so, as on a real path, it no longer counts
  # against the socket that sent it (held in ts-server, a socket's send
  # buffer capped it at buffer / delay: 0.17 Gbit/s at 10 ms).
  ip netns exec ts-switch sysctl -qw net.bridge.bridge-nf-call-iptables=1
  ip netns exec ts-switch iptables -A FORWARD -m physdev --physdev-in "server-eth+" \
    -j NFQUEUE --queue-num 0
  ip netns exec ts-switch iptables -A FORWARD -m physdev --physdev-out "server-eth+" \
    --physdev-is-bridged -j NFQUEUE --queue-num 1
  echo "testbed: path: $(cat "$dir/path.ready")"
}

# Stops the delay line (it writes path.json) and waits for it, 5 s at most.
stop_path() {
  [ -s "$dir/path.pid" ] || return 0
  local pid
  pid=$(cat "$dir/path.pid")
  ip netns exec ts-switch iptables -F FORWARD 2>/dev/null || true
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  rm -f "$dir/path.pid"
}

up_two_servers() {
  down
  switch_and_nodes
  server ts-srv1 eth2=10.10.1.1 eth3=10.10.2.1
  server ts-srv2 eth2=10.10.3.1 eth3=10.10.4.1
  mkdir -p "$uts"
  for i in 1 2; do
    mkdir -p "$dir/ts-srv$i"  # its "disk": the store of configs/testbed-two-servers.toml
    touch "$uts/ts-srv$i"
    unshare --uts="$uts/ts-srv$i" hostname "ts-srv$i"
  done
  ip link add mgmt0 netns ts-srv1 type veth peer name mgmt0 netns ts-srv2
  for i in 1 2; do
    ip -n "ts-srv$i" addr add "10.99.0.$i/24" dev mgmt0
    ip -n "ts-srv$i" link set mgmt0 up
  done
  echo "testbed: up (ts-srv1 with eth2, eth3; ts-srv2 with eth2, eth3; management" \
    "10.99.0.0/24; ts-tile01..08; token in $dir/token)"
}

status() {
  ip netns list | grep '^ts-' || { echo "testbed: down"; return; }
  for ns in ts-server ts-srv1 ts-srv2; do ip -n "$ns" -br addr 2>/dev/null || true; done
}

# A command in namespace ts-NAME: a server with a host name of its own
# runs it under that name too.
run_in() {  # NAME COMMAND...
  local ns=ts-$1
  shift
  if [ -e "$uts/$ns" ]; then exec nsenter --uts="$uts/$ns" ip netns exec "$ns" "$@"; fi
  exec ip netns exec "$ns" "$@"
}

case "${1:-}" in
  up) need_root; shift; up "$@" ;;
  up-two-servers) need_root; up_two_servers ;;
  down) need_root; down; echo "testbed: down" ;;
  path-report) need_root; stop_path; cat "$dir/path.json" ;;
  status) status ;;
  exec) need_root; shift; run_in "$@" ;;
  *) echo "usage: $0 up [--path SPEC]|up-two-servers|down|status|path-report|exec NAME COMMAND..." >&2; exit 2 ;;
esac
