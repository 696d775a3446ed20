#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what nfqd needs to build, run its tests, its demo and its benchmark
# (make bench) on Debian (bookworm or later), as root. Installs only what is
# missing. git: the docs test reads which files a checkout tracks.
set -eu

PKGS="build-essential autoconf automake libtool pkg-config flex bison
libmnl-dev libnetfilter-queue-dev liburcu-dev libev-dev libjansson-dev
libsystemd-dev libcap-ng-dev libncurses-dev libcmocka-dev
iproute2 iptables nftables iputils-ping socat python3 python3-scapy util-linux
procps strace git
systemd
tmux prometheus bash-completion
clang libclang-rt-dev
debootstrap debian-archive-keyring systemd-container xz-utils
iperf3 gnuplot-nox linux-perf
libssl-dev openssl curl knot-dnsutils chromium fail2ban tcpdump valgrind
openssh-client python3-cryptography"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
		|| missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: everything is installed"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing:$missing; run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
