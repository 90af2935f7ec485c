"""The call scope says who calls: namespace, correlation id, and whether the bearer key is an admin key."""

from __future__ import annotations

import pytest

from taskmem.api.scope import AuthError, resolve_scope
from taskmem.config import ApiKey, Config
from taskmem.settings import AuthSettings

KEYED = AuthSettings.of(Config(api_keys=(ApiKey("agent-key", ("alpha",)), ApiKey("admin-key", ("alpha",))),
                               admin_keys=("admin-key",)))
OPEN = AuthSettings.of(Config(admin_keys=("admin-key",)))


def _bearer(key: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {key}")]


def test_an_admin_key_makes_an_admin_scope_with_or_without_api_keys() -> None:
    assert resolve_scope(KEYED, _bearer("admin-key")).admin
    assert resolve_scope(OPEN, _bearer("admin-key")).admin
    assert resolve_scope(OPEN, [("authorization", "bearer admin-key")]).admin


def test_other_keys_and_no_key_make_a_plain_scope() -> None:
    assert not resolve_scope(KEYED, _bearer("agent-key")).admin
    assert not resolve_scope(OPEN, _bearer("agent-key")).admin
    assert not resolve_scope(OPEN, []).admin
    assert not resolve_scope(OPEN, [("authorization", "Basic admin-key")]).admin
    assert not resolve_scope(AuthSettings.of(Config()), _bearer("admin-key")).admin


def test_with_api_keys_a_missing_bearer_is_unauthenticated() -> None:
    with pytest.raises(AuthError) as raised:
        resolve_scope(KEYED, [("authorization", "Basic admin-key")])
    assert raised.value.reason == "ERROR_REASON_UNAUTHENTICATED"


def test_the_callers_correlation_id_is_kept_and_one_is_minted_once_when_none_is_sent() -> None:
    assert resolve_scope(OPEN, [("x-correlation-id", "run-7")]).correlation_id == "run-7"
    scope = resolve_scope(OPEN, [("user-agent", "grpc-go/1.56.3")])
    minted = scope.correlation_id
    assert minted.startswith("cor_")
    assert scope.correlation_id == minted  # every write of one call shares it
    assert resolve_scope(OPEN, []).correlation_id != minted
