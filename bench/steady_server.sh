#!/bin/sh
# steady_server.sh BINDIR ROOMS [TRANSPORT [WAIT_S]]: gk-server's CPU in
# the steady part of a match, away from the connects and the shutdown that
# bench_server.py's whole-run figures include (and that move them by 10%
# between runs here).
#
# Runs bench_server.py with BINDIR's gk-server, gk-bot and bench_udp
# (ROOMS two-player rooms, 3,000 steps: 50 s of match), waits WAIT_S
# seconds (28: the players are in and playing), then reads 5 s of the
# server with `perf stat -p` (task-clock and the socket system calls) and
# the kernel's UDP datagram count (/proc/net/snmp: on loopback every
# datagram the server sends or reads, once), and prints CPU per room-step
# (5 s at 60 steps/s), CPU per datagram and core 0's busy share (the
# server's core, softirq included). A benchmark, by hand: needs perf
# (Debian linux-perf) and root or perf_event_paranoid <= 0.
#   sh bench/steady_server.sh build-bench 500
# where BINDIR holds gk-server, gk-bot and bench_udp (copy them there).
set -eu
b=$1
rooms=$2
transport=${3:-enet}
wait_s=${4:-28}
here=$(dirname "$0")
log=$(mktemp)
stat=$(mktemp)
python3 "$here/bench_server.py" --server "$b/gk-server" --bot "$b/gk-bot" \
  --udp "$b/bench_udp" --rooms "$rooms" --steps 3000 --search-s 0 \
  --drift-steps 0 --transports "$transport" >"$log" 2>&1 &
bench=$!
sleep "$wait_s"
pid=$(pgrep -n -x gk-server)
udp_out() { awk '/^Udp:/ { n++ } /^Udp:/ && n == 2 { print $5 }' /proc/net/snmp; }
cpu0() { awk '/^cpu0 / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
o1=$(udp_out)
c1=$(cpu0)
perf stat -x, -e task-clock,syscalls:sys_enter_sendmmsg,syscalls:sys_enter_sendmsg,syscalls:sys_enter_recvmsg,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_recvfrom,syscalls:sys_enter_epoll_wait \
  -p "$pid" -- sleep 5 2>"$stat"
o2=$(udp_out)
c2=$(cpu0)
wait "$bench" || true
awk -F, -v rooms="$rooms" -v dg=$((o2 - o1)) -v c="$c1 $c2" '
  /task-clock/ { ms = $1 }
  !/task-clock/ { calls = calls sprintf(" %s=%s", $3, $1) }
  END {
    split(c, v, " ")
    busy = v[3] - v[1]; idle = v[4] - v[2]
    printf "rooms %d: %.2f us per room-step, %.0f ns per datagram (%d datagrams), core 0 busy %.3f\n",
      rooms, ms * 1000 / (rooms * 60 * 5), ms * 1e6 / (dg > 0 ? dg : 1), dg,
      busy / (busy + idle)
    print "system calls in 5 s:" calls
  }' "$stat"
grep '^{' "$log" | tail -1 | cut -c1-400
rm -f "$log" "$stat"
