"""A flood of requests at the exporter, from a process of its own (bench and listener tests).

`python -m chargeback_demo.flood PORT TOTAL AT_ONCE AUTH` sends TOTAL requests for `/metrics`
with the Authorization header AUTH, AT_ONCE at a time (in its own process, so the flood never
competes for the caller's interpreter), and prints `{"statuses": {status: count}}`, 0 standing
for a connection that failed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading


def flood(port: int, total: int, at_once: int, header: str) -> dict[int, int]:
    """Send `total` requests, `at_once` at a time; the count of each status."""
    left, statuses, lock = [total], dict[int, int](), threading.Lock()

    def client() -> None:
        while True:
            with lock:
                if not left[0]:
                    return
                left[0] -= 1
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                conn.request("GET", "/metrics", headers={"Authorization": header})
                status = conn.getresponse().status
            except OSError:
                status = 0
            finally:
                conn.close()
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=client) for _ in range(at_once)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def main(argv: list[str] | None = None) -> None:
    """Flood, then print the statuses as JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m chargeback_demo.flood",
        description="Requests for /metrics at the exporter, many at a time; prints each "
        "status's count as JSON.",
    )
    parser.add_argument("port", type=int, help="the exporter's port on 127.0.0.1")
    parser.add_argument("total", type=int, help="how many requests")
    parser.add_argument("at_once", type=int, help="how many at a time")
    parser.add_argument("auth", help="the Authorization header each request carries")
    args = parser.parse_args(argv)
    statuses = flood(args.port, args.total, args.at_once, args.auth)
    print(json.dumps({"statuses": statuses}))


if __name__ == "__main__":
    main()
