# SPDX-License-Identifier: GPL-2.0-or-later
# router_lib.sh - a host C behind B, for tests of B's forward hook
# (sourced after lib.sh). router_setup makes A and B (ns_setup), then C,
# a veth B (vout: 198.51.100.1, 2001:db8:c::1) - C (vin: 198.51.100.2,
# 2001:db8:c::2) with fixed neighbours, and B forwarding IPv4 and IPv6
# without reverse-path filtering; router_queue sends B's forwarded
# packets, IPv4 and IPv6, to queue 0. A test sets "trap router_cleanup EXIT",
# which removes C and then does lib.sh's cleanup.

NS_C="nfqd-$$-c"

in_c() { ip netns exec "$NS_C" "$@"; }

router_cleanup() {
	local rc=$?
	ip netns del "$NS_C" 2>/dev/null
	(exit $rc)
	cleanup
}

router_setup() {
	ns_setup
	ip netns add "$NS_C" || fail "netns add $NS_C"
	ip link add vout netns "$NS_B" type veth peer name vin netns "$NS_C" ||
		fail "veth B-C"
	in_b ip addr add 198.51.100.1/24 dev vout
	in_b ip addr add 2001:db8:c::1/64 dev vout nodad
	in_c ip addr add 198.51.100.2/24 dev vin
	in_c ip addr add 2001:db8:c::2/64 dev vin nodad
	in_c ip link set lo up
	in_b ip link set vout up
	in_c ip link set vin up
	mac_c=$(in_c cat /sys/class/net/vin/address)
	in_b ip neigh replace 198.51.100.2 lladdr "$mac_c" dev vout nud permanent
	in_b ip -6 neigh replace 2001:db8:c::2 lladdr "$mac_c" dev vout \
		nud permanent
	for k in net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.vb.rp_filter=0; do
		in_b sysctl -qw "$k"
	done
}

router_queue() {
	for ipt in iptables ip6tables; do
		in_b $ipt -A FORWARD -j NFQUEUE --queue-num 0 ||
			fail "$ipt NFQUEUE"
	done
}
