from taskmem.mcp.host_check import allowed_hosts, transport_security


def test_a_loopback_bind_accepts_its_own_address_in_every_spelling_and_the_loopback_names() -> None:
    assert allowed_hosts("127.0.0.2", 5000) == sorted(
        {"127.0.0.2:5000", "127.0.0.1:5000", "localhost:5000", "[::1]:5000", "[0:0:0:0:0:0:0:1]:5000",
         "[0000:0000:0000:0000:0000:0000:0000:0001]:5000"})


def test_a_specific_non_loopback_bind_accepts_only_its_address() -> None:
    assert allowed_hosts("192.0.2.7", 8000) == ["192.0.2.7:8000"]


def test_port_80_is_also_accepted_without_the_port() -> None:
    assert "127.0.0.1" in allowed_hosts("127.0.0.1", 80) and "localhost" in allowed_hosts("127.0.0.1", 80)


def test_protection_is_always_on_and_extra_hosts_allow_https_origins() -> None:
    settings = transport_security("0.0.0.0", 9000, ("MCP.example.com",))
    assert settings.enable_dns_rebinding_protection
    assert "mcp.example.com" in settings.allowed_hosts and "https://mcp.example.com" in settings.allowed_origins
    assert "http://127.0.0.1:9000" in settings.allowed_origins and "0.0.0.0:9000" not in settings.allowed_hosts
