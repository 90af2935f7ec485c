"""Config's sections: what each component is handed, so its signature shows which settings it uses.

Config stays one flat set of settings as loaded (file keys, TASKMEM_* names and flags unchanged, checked
in Config.__post_init__, their meanings documented on its fields). A section names, for each of its
fields, the Config setting it is read from; server.py hands each component `Section.of(config)`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from taskmem.config import ApiKey, Config, parse_model_budgets
from taskmem.core.reconcile import ReconcileThresholds
from taskmem.core.retention import Retention

S = TypeVar("S", bound="Section")


def setting(name: str, convert: Callable[[Any], Any] | None = None) -> Any:
    """A section field read from Config.<name> (through `convert` when given)."""
    return dataclasses.field(metadata={"setting": name, "convert": convert})


class Section:
    @classmethod
    def of(cls: type[S], config: Config) -> S:
        values = {}
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            value = getattr(config, field.metadata["setting"])
            convert = field.metadata["convert"]
            values[field.name] = convert(value) if convert is not None else value
        return cls(**values)


@dataclasses.dataclass(frozen=True)
class AuthSettings(Section):
    """Who may call: the interceptor's and the web view's check (api/scope.resolve_scope)."""

    api_keys: tuple[ApiKey, ...] = setting("api_keys")
    admin_keys: tuple[str, ...] = setting("admin_keys")
    # Defaulted, so a section built by hand from api_keys alone (tests, tools) needs none.
    keys_file: str = dataclasses.field(default="", metadata={"setting": "keys_file", "convert": None})

    @property
    def open_namespace(self) -> bool:
        """True when no keys are configured: every caller acts in the default namespace."""
        return not self.api_keys and not self.keys_file


@dataclasses.dataclass(frozen=True)
class WaitSettings(Section):
    """WaitService's checks of new waits."""

    http_allowed_hosts: tuple[str, ...] = setting("wait_http_allowed_hosts")
    file_roots: tuple[str, ...] = setting("wait_file_roots")
    min_poll_interval_seconds: float = setting("wait_min_poll_interval_seconds")
    default_poll_interval_seconds: float = setting("wait_default_poll_interval_seconds")
    # ResolveWait may force a wait that resolves by itself only when admin keys exist.
    admin_keys_configured: bool = setting("admin_keys", bool)


@dataclasses.dataclass(frozen=True)
class MaintenanceSettings(Section):
    """The maintenance loop's interval and thresholds (0 turns each off)."""

    interval_seconds: float = setting("maintenance_interval_seconds")
    stuck_after_seconds: float = setting("stuck_after_seconds")
    stuck_alert_cooldown_seconds: float = setting("stuck_alert_cooldown_seconds")
    auto_pause_after_seconds: float = setting("auto_pause_after_seconds")
    auto_archive_after_seconds: float = setting("auto_archive_after_seconds")
    episode_retention_seconds: float = setting("episode_retention_seconds")
    episode_retention_delete: bool = setting("episode_retention_delete")
    webhook_delivered_retention_seconds: float = setting("webhook_delivered_retention_seconds")
    webhook_dead_letter_retention_seconds: float = setting("webhook_dead_letter_retention_seconds")
    # The TTLs (also stamped on each entry the memory archive writes) and the page of expired items deleted per write.
    retention: Retention = setting("retention", Retention.from_seconds)
    retention_delete_page: int = setting("retention_delete_page")


@dataclasses.dataclass(frozen=True)
class EmbeddingSettings(Section):
    """The embedding backend (providers/embeddings.py); its requests time out and retry as model requests do."""

    backend: str = setting("embedding_backend")
    model: str = setting("embedding_model")
    url: str = setting("embedding_url")
    dimension: int = setting("embedding_dimension")
    api_key: str = setting("embedding_api_key")
    batch_size: int = setting("embedding_batch_size")
    timeout_seconds: float = setting("llm_timeout_seconds")
    retries: int = setting("llm_retries")


@dataclasses.dataclass(frozen=True)
class LlmSettings(Section):
    """The utility model and the optional second model (providers/chat.py, providers/model_router.py)."""

    base_url: str = setting("llm_base_url")
    model: str = setting("llm_model")
    api_key: str = setting("llm_api_key")
    timeout_seconds: float = setting("llm_timeout_seconds")
    retries: int = setting("llm_retries")
    second_base_url: str = setting("llm_second_base_url")
    second_model: str = setting("llm_second_model")
    second_api_key: str = setting("llm_second_api_key")


@dataclasses.dataclass(frozen=True)
class UsageSettings(Section):
    """Cost accounting of model calls (usage/meter.py): each namespace's token budget, if it has one."""

    budgets: dict[str, int] = setting("model_token_budgets", parse_model_budgets)


@dataclasses.dataclass(frozen=True)
class StateSettings(Section):
    """The state engine and what follows it: extraction, reconciliation, views, working memory, the YAML
    mirror and running summaries."""

    extraction_max_messages: int = setting("state_extraction_max_messages")
    extraction_timeout_seconds: float = setting("state_extraction_timeout_seconds")
    max_candidates: int = setting("state_max_candidates")
    max_active_items: int = setting("state_max_active_items")
    reconciliation: tuple[tuple[str, ReconcileThresholds], ...] = setting("reconciliation")
    # "off" or "uncertain": whether the utility model adjudicates the uncertain band, and its time limit.
    adjudication: str = setting("reconcile_adjudication")
    adjudication_timeout_seconds: float = setting("reconcile_adjudication_timeout_seconds")
    working_memory_max_bytes: int = setting("working_memory_max_bytes")
    working_memory_max_agents: int = setting("working_memory_max_agents")
    yaml_mirror_dir: str = setting("state_yaml_mirror_dir")
    running_summary_every_messages: int = setting("running_summary_every_messages")
    # How long one model request (QueryTask, a running summary) may take.
    model_timeout_seconds: float = setting("llm_timeout_seconds")


@dataclasses.dataclass(frozen=True)
class WebhookSettings(Section):
    """The webhook sender: allowed hosts, back-off, attempt timeout and concurrency."""

    allowed_hosts: tuple[str, ...] = setting("webhook_allowed_hosts")
    backoff_initial_seconds: float = setting("webhook_backoff_initial_seconds")
    backoff_max_seconds: float = setting("webhook_backoff_max_seconds")
    retry_period_seconds: float = setting("webhook_retry_period_seconds")
    attempt_timeout_seconds: float = setting("webhook_attempt_timeout_seconds")
    concurrency: int = setting("webhook_concurrency")


SECTIONS: tuple[type[Section], ...] = (AuthSettings, WaitSettings, MaintenanceSettings, EmbeddingSettings,
                                       LlmSettings, StateSettings, WebhookSettings)
