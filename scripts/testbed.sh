#!/usr/bin/env bash
# The reference topology on one machine, in network namespaces (root only):
#
#   ts-server   the streaming server: eth2..eth5 (10.10.1.1 .. 10.10.4.1)
#   ts-switch   a bridge joining everything (no addresses)
#   ts-tile01..ts-tile08   the display nodes: eth0 (10.10.0.11 .. 10.10.0.18)
#
# All veth pairs MTU 9000; addresses only inside these namespaces. Matches
# configs/testbed-5x3.toml.
#
#   scripts/testbed.sh up | down | status
#   scripts/testbed.sh exec NAMESPACE COMMAND...   (e.g. exec server ip -br addr)
#
# `down` removes everything `up` made, and is safe to run any time (also
# after a failed run: `up` starts with it).
set -euo pipefail
nodes=(01 02 03 04 05 06 07 08)
nics=(eth2 eth3 eth4 eth5)
dir=/tmp/tilestream-testbed

need_root() {
  if [ "$(id -u)" -ne 0 ]; then echo "testbed: needs root (network namespaces)" >&2; exit 77; fi
  if ! ip netns list >/dev/null 2>&1; then echo "testbed: no network namespaces here" >&2; exit 77; fi
}

down() {
  for ns in ts-server ts-switch $(printf 'ts-tile%s ' "${nodes[@]}"); do
    ip netns del "$ns" 2>/dev/null || true  # its veth ends and their peers go with it
  done
  rm -rf "$dir"
}

# veth NAME in NS1 <-> PEER in the switch, attached to its bridge.
link() {  # NS IFNAME PEER
  ip link add "$2" netns "$1" mtu 9000 type veth peer name "$3" netns ts-switch mtu 9000
  ip -n ts-switch link set "$3" master br0 up
  ip -n "$1" link set "$2" up
}

up() {
  down
  mkdir -p "$dir"
  head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/token"
  echo >> "$dir/token"
  ip netns add ts-switch
  ip -n ts-switch link add br0 type bridge
  ip -n ts-switch link set br0 mtu 9000 up
  ip netns add ts-server
  ip -n ts-server link set lo up
  # One L2 segment, four source addresses: answer ARP only on the interface
  # that owns the address, so replies come back through the right NIC.
  ip netns exec ts-server sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
  local i=1
  for nic in "${nics[@]}"; do
    link ts-server "$nic" "srv-$nic"
    ip -n ts-server addr add "10.10.$i.1/16" dev "$nic"
    i=$((i + 1))
  done
  for n in "${nodes[@]}"; do
    ip netns add "ts-tile$n"
    ip -n "ts-tile$n" link set lo up
    link "ts-tile$n" eth0 "node-$n"
    ip -n "ts-tile$n" addr add "10.10.0.$((10#$n + 10))/16" dev eth0
  done
  echo "testbed: up (ts-server with ${nics[*]}; ts-tile01..08; token in $dir/token)"
}

status() {
  ip netns list | grep '^ts-' || { echo "testbed: down"; return; }
  ip -n ts-server -br addr 2>/dev/null || true
}

case "${1:-}" in
  up) need_root; up ;;
  down) need_root; down; echo "testbed: down" ;;
  status) status ;;
  exec) need_root; ns=$2; shift 2; exec ip netns exec "ts-$ns" "$@" ;;
  *) echo "usage: $0 up|down|status|exec NAMESPACE COMMAND..." >&2; exit 2 ;;
esac
