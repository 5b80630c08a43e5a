"""Proxies from HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY, read as httpx reads them."""

from __future__ import annotations

import ipaddress
from urllib.request import getproxies

import httpx

__all__ = ["environment_proxies"]


def environment_proxies() -> dict[str, httpx.Proxy | None]:
    """URL pattern -> the proxy its requests go through, None for none (a NO_PROXY host).

    httpx reads these itself only for a client it builds the transports of; ours are built
    here, so the same rules are kept: curl's, where `.example.com` spares its subdomains only,
    `example.com` the domain too, and `*` every host.
    """
    found = getproxies()
    mounts: dict[str, httpx.Proxy | None] = {}
    for scheme in ("http", "https", "all"):
        url = found.get(scheme)
        if url:
            mounts[f"{scheme}://"] = httpx.Proxy(url if "://" in url else f"http://{url}")
    for host in (h.strip() for h in found.get("no", "").split(",")):
        if host == "*":
            return {}
        if not host:
            continue
        if "://" in host:
            mounts[host] = None
        elif _is_address(host, ipaddress.IPv4Address) or host.lower() == "localhost":
            mounts[f"all://{host}"] = None
        elif _is_address(host, ipaddress.IPv6Address):
            mounts[f"all://[{host}]"] = None
        else:
            mounts[f"all://*{host}"] = None
    return mounts


def _is_address(host: str, kind: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]) -> bool:
    try:
        kind(host.split("/")[0])  # a network (10.0.0.0/8) counts by its address
    except ValueError:
        return False
    return True
