"""Which outbound HTTP destinations an allow-list (wait_http_allowed_hosts, webhook_allowed_hosts) permits.

An entry is a name ("hooks.example.com"), a domain's subdomains ("*.example.com") or an address
("10.0.0.5", "::1" or "[::1]"), optionally with a port ("hooks.example.com:8443",
"127.0.0.1:8080", "[::1]:8080"). Three checks, all needed:

- the URL's host matches an entry (by name: what the caller wrote);
- its port is 80 or 443 with an entry without a port, or the port an entry names: otherwise
  any listed host could be port-scanned, an attempt's error telling open from closed;
- every address the name resolves to is public, unless that literal address is listed: a
  listed name (or a name under a "*." entry) can be pointed at 127.0.0.1, 169.254.169.254 or a
  private network by whoever controls its DNS.

Pure: resolving and connecting are the caller's (webhooks/waits use taskmem.outbound_http).
"""

from __future__ import annotations

import dataclasses
import ipaddress

DEFAULT_PORTS = (80, 443)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclasses.dataclass(frozen=True)
class AllowedHost:
    host: str  # lower case, no brackets or trailing dot; "*.example.com" for its subdomains
    port: int | None  # None: the default ports (80, 443)

    def names(self, host: str) -> bool:
        if self.host.startswith("*."):
            return host.endswith(self.host[1:]) and len(host) > len(self.host) - 1
        return host == self.host

    def admits(self, host: str, port: int) -> bool:
        return self.names(host) and (port == self.port if self.port is not None else port in DEFAULT_PORTS)


def _normal_host(host: str) -> str:
    host = host.lower().strip().strip("[]").rstrip(".")
    address = literal_address(host)
    return str(address) if address is not None else host


def literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def parse_allowed_host(entry: str) -> AllowedHost:
    """One allow-list entry; ValueError naming what is wrong."""
    text = entry.strip()
    port_text = ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise ValueError(f"{entry!r} is not HOST or HOST:PORT")
        port_text = rest[1:]
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:
        host = text  # a name, an IPv4 address, or a bare IPv6 address (its colons are not a port)
    if not host or (":" in host and literal_address(host) is None):
        raise ValueError(f"{entry!r} is not HOST or HOST:PORT")
    port = None
    if port_text or text.endswith(":") and literal_address(host) is None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"{entry!r}: the port must be 1..65535")
        port = int(port_text)
    return AllowedHost(_normal_host(host), port)


def parse_allowed_hosts(entries: tuple[str, ...]) -> tuple[AllowedHost, ...]:
    return tuple(parse_allowed_host(entry) for entry in entries)


def host_allowed(host: str, allowed: tuple[AllowedHost, ...]) -> bool:
    """Some entry names this host (on whatever port)."""
    host = _normal_host(host)
    return any(entry.names(host) for entry in allowed)


def port_refusal(host: str, port: int, allowed: tuple[AllowedHost, ...]) -> str:
    """Why host:port may not be contacted ("" when it may); the host is assumed to be named by an entry."""
    host = _normal_host(host)
    if any(entry.admits(host, port) for entry in allowed):
        return ""
    shown = f"[{host}]" if ":" in host else host
    return (f"port {port} is not allowed for {shown}: only 80 and 443, or a port listed with the host"
            f" (as {shown}:{port})")


def address_refusal(address: IPAddress, allowed: tuple[AllowedHost, ...]) -> str:
    """Why a resolved address may not be contacted ("" when it may): loopback, private, link-local,
    unspecified, multicast or otherwise not public, and not itself listed."""
    checked = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped else address
    if checked.is_global and not checked.is_multicast:
        return ""
    if any(entry.host in (str(address), str(checked)) for entry in allowed):
        return ""
    return f"{address} is {_kind(checked)}, which is reached only when that address itself is listed"


def _kind(address: IPAddress) -> str:
    for attribute, kind in (("is_loopback", "a loopback address"), ("is_link_local", "a link-local address"),
                            ("is_unspecified", "the unspecified address"), ("is_multicast", "a multicast address"),
                            ("is_private", "a private address")):
        if getattr(address, attribute):
            return kind
    return "not a public address"
