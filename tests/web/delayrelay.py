"""delayrelay.py: a TCP relay on 127.0.0.1 that delays every byte.

    with DelayRelay(upstream_port, each_way_ms=50) as r:
        r.port    # connect here instead of upstream_port

What `tc netem` would do to a WebSocket, in the test's own process (netem
needs privileges the test machines do not have): every connection
accepted on r.port is relayed to 127.0.0.1:upstream_port, and each chunk
read from either side is written to the other `each_way_ms` after it was
read, in order (a round trip of 2 * each_way_ms). Pages loaded through
it (HTTP and the WebSocket to the same host) see that round trip on
every byte. Runs an asyncio loop on a daemon thread; close() stops it
and closes every connection.
"""
import asyncio
import threading
import time


class DelayRelay:
    def __init__(self, upstream_port, each_way_ms=50, start_timeout=5.0):
        self.upstream_port = upstream_port
        self.delay = each_way_ms / 1000.0
        self.port = None
        self.connections = 0
        self._loop = asyncio.new_event_loop()
        self._server = None
        self._tasks = set()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="delayrelay", daemon=True)
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        self.port = fut.result(start_timeout)

    async def _listen(self):
        self._server = await asyncio.start_server(self._accept, "127.0.0.1",
                                                  0)
        return self._server.sockets[0].getsockname()[1]

    async def _accept(self, down_r, down_w):
        self.connections += 1
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1",
                                                       self.upstream_port)
        except OSError:
            down_w.close()
            return
        for r, w in ((down_r, up_w), (up_r, down_w)):
            t = self._loop.create_task(self._pipe(r, w))
            self._tasks.add(t)
            t.add_done_callback(self._tasks.discard)

    async def _pipe(self, reader, writer):
        """Reads chunks as they come and hands each to a writer task that
        sends it `delay` after it was read (order kept: one queue)."""
        q = asyncio.Queue()
        sender = self._loop.create_task(self._send(q, writer))
        try:
            while True:
                data = await reader.read(65536)
                q.put_nowait((time.monotonic() + self.delay, data))
                if not data:
                    break
        except (OSError, asyncio.CancelledError):
            q.put_nowait((time.monotonic(), b""))
        await sender

    async def _send(self, q, writer):
        try:
            while True:
                due, data = await q.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    def close(self):
        if self._server is None:
            return

        async def stop():
            self._server.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.sleep(0)

        try:
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(5.0)
        finally:
            self._server = None
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5.0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
