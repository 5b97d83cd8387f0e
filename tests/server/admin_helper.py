#!/usr/bin/env python3
"""admin_helper.py: the Python side of tests/server/test_admin.c.

  admin_helper.py metrics FILE
      Parses FILE (a /metrics answer) with prometheus_client's text parser
      (Debian's python3-prometheus-client) and prints one JSON object,
      {"name{label=value,...}": value, ...}, one key per sample. Exit 1
      with the parser's message if the text does not parse.

  admin_helper.py agones PORTFILE RECORDFILE
      A stand-in for the Agones SDK server's REST gateway (the real one runs
      as a sidecar in a Kubernetes pod and cannot run here). Listens on
      127.0.0.1 (a free port, written to PORTFILE), records every request as
      a JSON line {"method", "path", "body"} in RECORDFILE, and answers as
      the documented API does: 200 with "{}" for /ready, /health and
      /shutdown, and the counter (name, count, capacity as strings) for
      PATCH /v1beta1/counters/NAME. Exits after /shutdown, or after 120 s.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def metrics(path):
    from prometheus_client.parser import text_string_to_metric_families
    text = open(path, encoding="utf-8").read()
    out = {}
    try:
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                labels = ",".join("%s=%s" % kv for kv in sorted(s.labels.items()))
                out["%s{%s}" % (s.name, labels) if labels else s.name] = s.value
    except Exception as e:  # the parser raises ValueError and others
        print("parse error: %s" % e, file=sys.stderr)
        return 1
    json.dump(out, sys.stdout, sort_keys=True)
    return 0


def agones(portfile, recordfile):
    record = open(recordfile, "a", buffering=1)
    done = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

        def answer(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(min(n, 65536)).decode("utf-8", "replace")
            record.write(json.dumps({"method": self.command, "path": self.path,
                                     "body": body}) + "\n")
            reply = {}
            if self.path.startswith("/v1beta1/counters/"):
                try:
                    req = json.loads(body or "{}")
                except ValueError:
                    self.send_error(400)
                    return
                reply = {"name": self.path.rsplit("/", 1)[1],
                         "count": str(req.get("count", "0")),
                         "capacity": str(req.get("capacity", "0"))}
            elif self.path not in ("/ready", "/health", "/shutdown"):
                self.send_error(404)
                return
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            if self.path == "/shutdown":
                done.set()

        do_POST = answer
        do_PATCH = answer
        do_PUT = answer
        do_GET = answer

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(portfile + ".tmp", portfile)
    done.wait(120)
    time.sleep(0.2)
    srv.shutdown()
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "metrics":
        return metrics(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "agones":
        return agones(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
