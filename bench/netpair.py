"""netpair.py: the load on a network of its own, for bench_server.py --veth.

On loopback a sender's core does the receiver's work too: a datagram or
TCP segment sent on 127.0.0.1 is received (IP, UDP or TCP, the socket's
queue, the reader's wake-up, a TCP acknowledgement sent back and taken
in) in the sender's softirq, on the sender's core. A server pinned to
core 0 that sends to bots on core 1 so pays for the bots' receiving, and
for TCP that is most of a message's cost: loopback measures the server's
core doing both ends' kernel work.

NetPair puts the bots in a network namespace of their own, joined to the
server's by a veth pair, and steers each side's receiving to its own core
with RPS (receive packet steering: /sys/class/net/DEV/queues/rx-0/
rps_cpus): what the server sends is received on core 1 (the bots'), what
the bots send on core 0 (the server's), as a NIC's interrupts on each
machine would. Needs root (ip netns, sysfs); every name it makes carries
the bench's process id and is removed on close.
"""
import os
import subprocess

SERVER_ADDR = "10.213.0.1"
BOTS_ADDR = "10.213.0.2"


def _run(*cmd):
    subprocess.run(list(cmd), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


class NetPair:
    """A veth pair: SERVER_ADDR in this namespace, BOTS_ADDR in a new one
    (`prefix()` runs a command there); receiving steered to server_cpu
    and bots_cpu. A context manager: the namespace and the pair go on
    exit."""

    def __init__(self, server_cpu=0, bots_cpu=1):
        tag = os.getpid() % 100000
        self.ns = "gkbench%d" % tag
        self.dev = "gkbs%d" % tag    # the server's end (this namespace)
        self.peer = "gkbb%d" % tag   # the bots' end (self.ns)
        self.server_cpu, self.bots_cpu = server_cpu, bots_cpu
        self.up = False

    def __enter__(self):
        _run("ip", "netns", "add", self.ns)
        self.up = True
        try:
            _run("ip", "link", "add", self.dev, "type", "veth", "peer",
                 "name", self.peer, "netns", self.ns)
            _run("ip", "addr", "add", SERVER_ADDR + "/30", "dev", self.dev)
            _run("ip", "link", "set", self.dev, "up")
            inside = ["ip", "netns", "exec", self.ns]
            _run(*inside, "ip", "addr", "add", BOTS_ADDR + "/30", "dev",
                 self.peer)
            _run(*inside, "ip", "link", "set", self.peer, "up")
            _run(*inside, "ip", "link", "set", "lo", "up")
            with open(self._rps(self.dev), "w") as f:
                f.write("%x\n" % (1 << self.server_cpu))
            _run(*inside, "sh", "-c", "echo %x > %s" % (
                1 << self.bots_cpu, self._rps(self.peer)))
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    @staticmethod
    def _rps(dev):
        return "/sys/class/net/%s/queues/rx-0/rps_cpus" % dev

    def prefix(self):
        """What runs a command among the bots."""
        return ["ip", "netns", "exec", self.ns]

    def close(self):
        if self.up:
            subprocess.run(["ip", "link", "del", self.dev],
                           stderr=subprocess.DEVNULL)
            subprocess.run(["ip", "netns", "del", self.ns],
                           stderr=subprocess.DEVNULL)
            self.up = False
