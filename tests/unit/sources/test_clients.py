"""Clients made per upstream, and the lanes that give each concurrent caller its own pool."""

from __future__ import annotations

from datetime import timedelta

import httpx

from exporter.sources.clients import lanes, make_client
from exporter.sources.http import get_text


def test_lanes_are_clients_like_the_one_given_each_closed_on_leaving() -> None:
    mock = httpx.MockTransport(lambda request: httpx.Response(200, text="ok"))
    with make_client("http://upstream", timedelta(seconds=3), transport=mock) as client:
        with lanes(client, 3) as free:
            made = [free.get() for _ in range(3)]
            assert len({id(lane) for lane in made}) == 3 and client not in made
            assert all(lane.timeout == client.timeout for lane in made)
            assert get_text(made[0], "dcgm", "/metrics") == "ok"
        assert all(lane.is_closed for lane in made)
    outside = httpx.Client(transport=mock)  # not made by make_client: shared as it is
    with lanes(outside, 2) as free:
        assert free.get() is outside and free.get() is outside
    outside.close()
