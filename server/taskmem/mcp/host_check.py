"""The Host and Origin values `taskmem mcp --http` accepts, passed to the MCP SDK for every bind.

The SDK checks Host and Origin (against DNS rebinding: a web page whose name is re-pointed at
127.0.0.1 can otherwise drive every tool from a browser) only when it is given settings, or
when the bind address is exactly "127.0.0.1", "localhost" or "::1". Any other loopback bind
(127.0.0.2, 0:0:0:0:0:0:0:1) or a non-loopback one ran unchecked, so the settings are derived
here from the address and port actually bound, always.
"""

from __future__ import annotations

import ipaddress

from mcp.server.transport_security import TransportSecuritySettings

from taskmem.config import is_loopback_host

# Names a local client may use for a loopback (or all-interfaces) bind.
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARDS = ("0.0.0.0", "::", "")


def _spellings(host: str) -> set[str]:
    """The ways a Host header may write `host`: as given, and for an IP address its usual forms
    (IPv6 bracketed: compressed, exploded, and exploded without leading zeros)."""
    bare = host.strip("[]").lower()
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        return {bare}
    if address.version == 4:
        return {str(address)}
    exploded = address.exploded
    short = ":".join(group.lstrip("0") or "0" for group in exploded.split(":"))
    return {f"[{form}]" for form in (address.compressed, exploded, short, bare)}


def allowed_hosts(bind_host: str, port: int) -> list[str]:
    """Host header values for a server bound at bind_host:port: the bound address in every spelling,
    and for a loopback or all-interfaces bind also localhost, 127.0.0.1 and ::1."""
    host = bind_host.strip("[]")
    names = set() if host in _WILDCARDS else _spellings(host)
    if host in _WILDCARDS or is_loopback_host(host):
        for name in _LOOPBACK_NAMES:
            names |= _spellings(name)
    values = {f"{name}:{port}" for name in names}
    if port == 80:  # a browser leaves out the default port
        values |= names
    return sorted(values)


def transport_security(bind_host: str, port: int, extra_hosts: tuple[str, ...] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection on, for the hosts above plus `extra_hosts` (Host values taken as written,
    e.g. the public name a TLS proxy forwards). An Origin must be http:// one of them, or https:// an
    extra one."""
    extras = sorted({host.lower() for host in extra_hosts})
    hosts = allowed_hosts(bind_host, port) + extras
    origins = [f"http://{host}" for host in hosts] + [f"https://{host}" for host in extras]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)
