#!/usr/bin/python3
"""tests/net/ws_client.py: a real WebSocket client (python3-websockets,
Debian's, so run it with /usr/bin/python3) for tests/net/test_ws.c.

  ws_client.py echo PORT COUNT   sends COUNT binary messages, one at a
                                 time, each answered by the test's echo;
                                 prints "echo N P50_US P90_US MIN_US PROTO"
  ws_client.py hold PORT MS      stays connected MS ms (pings are answered
                                 by the library); prints "hold N_MSGS"
  ws_client.py bare PORT         offers no subprotocol; prints "status S"
Every wait is bounded; any failure prints "error ..." and exits 1."""
import asyncio
import sys
import time

import websockets


async def echo(uri, count):
    async with websockets.connect(uri, subprotocols=["gamekit.1"],
                                  compression=None, ping_interval=None,
                                  open_timeout=5, close_timeout=2) as ws:
        rtts = []
        for i in range(count):
            msg = bytes([2, 1]) + i.to_bytes(4, "little") + bytes(10)
            t0 = time.perf_counter_ns()
            await ws.send(msg)
            back = await asyncio.wait_for(ws.recv(), 5)
            rtts.append((time.perf_counter_ns() - t0) // 1000)
            if back != msg:
                print("error echo mismatch at", i)
                return 1
        rtts.sort()
        print("echo", count, rtts[len(rtts) // 2], rtts[len(rtts) * 9 // 10],
              rtts[0], ws.subprotocol)
    return 0


async def hold(uri, ms):
    n = 0
    async with websockets.connect(uri, subprotocols=["gamekit.1"],
                                  compression=None, ping_interval=None,
                                  open_timeout=5, close_timeout=2) as ws:
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            try:
                await asyncio.wait_for(ws.recv(), end - time.monotonic())
                n += 1
            except asyncio.TimeoutError:
                break
    print("hold", n)
    return 0


async def bare(uri):
    try:
        async with websockets.connect(uri, compression=None, open_timeout=5):
            print("status 101")
    except websockets.exceptions.InvalidStatusCode as e:
        print("status", e.status_code)
    return 0


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    uri = "ws://127.0.0.1:%d/play" % port
    try:
        if mode == "echo":
            rc = asyncio.run(echo(uri, int(sys.argv[3])))
        elif mode == "hold":
            rc = asyncio.run(hold(uri, int(sys.argv[3])))
        else:
            rc = asyncio.run(bare(uri))
    except Exception as e:  # any failure is one line for the test
        print("error", type(e).__name__, e)
        rc = 1
    sys.stdout.flush()
    sys.exit(rc)


if __name__ == "__main__":
    main()
