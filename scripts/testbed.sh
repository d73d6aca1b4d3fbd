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
#   Open MPI reaches ts-srv2 through scripts/testbed-rsh, an rsh agent that
#   enters the server's namespaces instead of logging in with ssh.
#
# All media links MTU 9000; addresses only inside these namespaces.
#
#   scripts/testbed.sh up | up-two-servers | down | status
#   scripts/testbed.sh exec NAME COMMAND...   (e.g. exec server ip -br addr,
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
  down
  switch_and_nodes
  server ts-server eth2=10.10.1.1 eth3=10.10.2.1 eth4=10.10.3.1 eth5=10.10.4.1
  echo "testbed: up (ts-server with eth2..eth5; ts-tile01..08; token in $dir/token)"
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
  up) need_root; up ;;
  up-two-servers) need_root; up_two_servers ;;
  down) need_root; down; echo "testbed: down" ;;
  status) status ;;
  exec) need_root; shift; run_in "$@" ;;
  *) echo "usage: $0 up|up-two-servers|down|status|exec NAME COMMAND..." >&2; exit 2 ;;
esac
