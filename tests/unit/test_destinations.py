import ipaddress

import pytest

from taskmem.core.destinations import (
    AllowedHost, address_refusal, host_allowed, parse_allowed_host, parse_allowed_hosts, port_refusal,
)

ALLOWED = parse_allowed_hosts(("127.0.0.1:8080", "localhost", "::1", "*.example.com", "hooks.example.org:8443"))


@pytest.mark.parametrize("entry, parsed", [
    ("Hooks.Example.com.", AllowedHost("hooks.example.com", None)),
    ("hooks.example.com:8443", AllowedHost("hooks.example.com", 8443)),
    ("127.0.0.1:8080", AllowedHost("127.0.0.1", 8080)),
    ("::1", AllowedHost("::1", None)),
    ("[::1]:8080", AllowedHost("::1", 8080)),
    ("[0:0:0:0:0:0:0:1]", AllowedHost("::1", None)),
    ("*.example.com", AllowedHost("*.example.com", None)),
])
def test_entries_are_names_addresses_or_wildcards_with_an_optional_port(entry: str, parsed: AllowedHost) -> None:
    assert parse_allowed_host(entry) == parsed


@pytest.mark.parametrize("entry", ["", "host:", "host:http", "host:70000", "[::1]x", "a:b:c"])
def test_malformed_entries_are_refused(entry: str) -> None:
    with pytest.raises(ValueError):
        parse_allowed_host(entry)


@pytest.mark.parametrize("host, allowed", [
    ("127.0.0.1", True), ("LOCALHOST", True), ("[::1]", True), ("ci.example.com", True), ("example.com", False),
    ("evil-example.com", False), ("10.0.0.1", False), ("hooks.example.org", True),
])
def test_hosts_are_allowed_by_exact_name_or_subdomain_wildcard(host: str, allowed: bool) -> None:
    assert host_allowed(host, ALLOWED) is allowed


@pytest.mark.parametrize("host, port, allowed", [
    ("ci.example.com", 443, True), ("ci.example.com", 80, True), ("ci.example.com", 8080, False),
    ("127.0.0.1", 8080, True), ("127.0.0.1", 80, False), ("127.0.0.1", 22, False),
    ("hooks.example.org", 8443, True), ("hooks.example.org", 443, False), ("[::1]", 443, True),
])
def test_ports_are_80_and_443_or_the_one_listed_with_the_host(host: str, port: int, allowed: bool) -> None:
    assert (port_refusal(host, port, ALLOWED) == "") is allowed


def test_a_refused_port_says_how_to_allow_it() -> None:
    assert port_refusal("127.0.0.1", 22, ALLOWED) == (
        "port 22 is not allowed for 127.0.0.1: only 80 and 443, or a port listed with the host (as 127.0.0.1:22)")


@pytest.mark.parametrize("address, allowed", [
    ("93.184.215.14", True), ("2606:4700::1111", True),
    ("127.0.0.2", False), ("169.254.169.254", False), ("10.1.2.3", False), ("192.168.0.1", False),
    ("0.0.0.0", False), ("224.0.0.1", False), ("fe80::1", False), ("::ffff:127.0.0.2", False),
    ("100.64.0.1", False), ("fd00::1", False),
    ("127.0.0.1", True), ("::1", True),  # listed literally
])
def test_only_public_addresses_or_listed_literal_ones_are_reached(address: str, allowed: bool) -> None:
    assert (address_refusal(ipaddress.ip_address(address), ALLOWED) == "") is allowed


def test_an_address_refusal_names_its_kind() -> None:
    assert "link-local" in address_refusal(ipaddress.ip_address("169.254.169.254"), ALLOWED)
    assert "loopback" in address_refusal(ipaddress.ip_address("127.0.0.2"), ALLOWED)
