"""Each component gets its section of Config: the same values, under the names the section gives them."""

from __future__ import annotations

import dataclasses

import pytest

from taskmem.config import ApiKey, Config
from taskmem.core.reconcile import SEED_THRESHOLDS
from taskmem.core.retention import EVERY_NAMESPACE, Kind, Retention
from taskmem.settings import (
    SECTIONS, AuthSettings, EmbeddingSettings, LlmSettings, MaintenanceSettings, StateSettings, WaitSettings,
    WebhookSettings,
)

# Every setting a section takes, at a value unlike its default, so a section reading the wrong field shows.
CONFIG = Config(
    api_keys=(ApiKey("k", ("alpha",)),), admin_keys=("k",),
    wait_http_allowed_hosts=("hooks.example.com",), wait_file_roots=("/srv",), wait_min_poll_interval_seconds=2.5,
    wait_default_poll_interval_seconds=7.5,
    maintenance_interval_seconds=11.0, stuck_after_seconds=12.0, stuck_alert_cooldown_seconds=13.0,
    auto_pause_after_seconds=14.0, auto_archive_after_seconds=15.0, episode_retention_seconds=16.0,
    episode_retention_delete=True, webhook_delivered_retention_seconds=17.0, webhook_dead_letter_retention_seconds=18.0,
    retention=(("*", "memory_entries", 19.0),), retention_delete_page=46,
    embedding_backend="openai", embedding_model="e5", embedding_url="http://127.0.0.1:1/v1", embedding_dimension=384,
    embedding_api_key="ek", embedding_batch_size=8, llm_timeout_seconds=21.0, llm_retries=4,
    llm_base_url="http://127.0.0.1:2/v1", llm_model="small", llm_api_key="lk", llm_second_base_url="http://127.0.0.1:3/v1",
    llm_second_model="big", llm_second_api_key="sk",
    state_extraction_max_messages=31, state_extraction_timeout_seconds=32.0, state_max_candidates=33,
    state_max_active_items=34, reconciliation=(("e5", SEED_THRESHOLDS),), reconcile_adjudication="off",
    reconcile_adjudication_timeout_seconds=38.0, working_memory_max_bytes=35,
    working_memory_max_agents=36, state_yaml_mirror_dir="/tmp/mirror", running_summary_every_messages=37,
    webhook_allowed_hosts=("*.example.com",), webhook_backoff_initial_seconds=41.0, webhook_backoff_max_seconds=42.0,
    webhook_retry_period_seconds=43.0, webhook_attempt_timeout_seconds=44.0, webhook_concurrency=45,
)


def test_each_section_carries_the_configured_values() -> None:
    assert AuthSettings.of(CONFIG) == AuthSettings(api_keys=CONFIG.api_keys, admin_keys=("k",))
    assert not AuthSettings.of(CONFIG).open_namespace and AuthSettings.of(Config()).open_namespace
    assert WaitSettings.of(CONFIG) == WaitSettings(
        http_allowed_hosts=("hooks.example.com",), file_roots=("/srv",), min_poll_interval_seconds=2.5,
        default_poll_interval_seconds=7.5, admin_keys_configured=True)
    assert MaintenanceSettings.of(CONFIG) == MaintenanceSettings(
        interval_seconds=11.0, stuck_after_seconds=12.0, stuck_alert_cooldown_seconds=13.0,
        auto_pause_after_seconds=14.0, auto_archive_after_seconds=15.0, episode_retention_seconds=16.0,
        episode_retention_delete=True, webhook_delivered_retention_seconds=17.0,
        webhook_dead_letter_retention_seconds=18.0,
        retention=Retention(((EVERY_NAMESPACE, Kind.MEMORY_ENTRIES, 19_000_000),)), retention_delete_page=46)
    assert EmbeddingSettings.of(CONFIG) == EmbeddingSettings(
        backend="openai", model="e5", url="http://127.0.0.1:1/v1", dimension=384, api_key="ek", batch_size=8,
        timeout_seconds=21.0, retries=4)
    assert LlmSettings.of(CONFIG) == LlmSettings(
        base_url="http://127.0.0.1:2/v1", model="small", api_key="lk", timeout_seconds=21.0, retries=4,
        second_base_url="http://127.0.0.1:3/v1", second_model="big", second_api_key="sk")
    assert StateSettings.of(CONFIG) == StateSettings(
        extraction_max_messages=31, extraction_timeout_seconds=32.0, max_candidates=33, max_active_items=34,
        reconciliation=(("e5", SEED_THRESHOLDS),), working_memory_max_bytes=35, working_memory_max_agents=36,
        yaml_mirror_dir="/tmp/mirror", running_summary_every_messages=37, model_timeout_seconds=21.0,
        adjudication="off", adjudication_timeout_seconds=38.0)
    assert WebhookSettings.of(CONFIG) == WebhookSettings(
        allowed_hosts=("*.example.com",), backoff_initial_seconds=41.0, backoff_max_seconds=42.0,
        retry_period_seconds=43.0, attempt_timeout_seconds=44.0, concurrency=45)


def test_sections_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        WaitSettings.of(CONFIG).file_roots = ()  # type: ignore[misc]


def test_every_section_field_names_a_config_setting() -> None:
    settings = {f.name for f in dataclasses.fields(Config)}
    for section in SECTIONS:
        for field in dataclasses.fields(section):  # type: ignore[arg-type]
            assert field.metadata["setting"] in settings, f"{section.__name__}.{field.name}"
