"""The server's one typed configuration: defaults < YAML file < TASKMEM_* environment < flags.

Any setting may also be read from a file named by TASKMEM_<NAME>_FILE (a list setting one entry a line),
and api_keys and admin_keys from --api-keys-file and --admin-keys-file, so secrets need not sit on a
command line, where `ps` shows them. Nothing else in the server reads the environment or the config file.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from taskmem.core.reconcile import SEED_THRESHOLDS, ReconcileThresholds
from taskmem.core.retention import Cap as RetentionCap
from taskmem.core.retention import Kind as RetentionKind
from taskmem.core.destinations import parse_allowed_hosts

DEFAULT_NAMESPACE = "default"
# glibc's HEAP_MAX_SIZE / 2 on 64-bit: mallopt refuses a larger M_MMAP_THRESHOLD.
MALLOC_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024
RECONCILE_ADJUDICATION_MODES = ("off", "uncertain")  # state/adjudication.py
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class ConfigError(ValueError):
    """A setting has a bad value; the message names the setting."""


@dataclasses.dataclass(frozen=True)
class ApiKey:
    """A bearer token and the namespaces it may act in (the first is its default)."""

    key: str
    namespaces: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Config:
    listen: str = "127.0.0.1:50051"
    database: str = "data/taskmem.db"
    # Allow a non-loopback listen address with no API keys configured.
    insecure: bool = False
    api_keys: tuple[ApiKey, ...] = ()
    # A YAML file of API keys with ids, roles and task scopes (taskmem/keyring.py, docs/access.md), read again
    # whenever it changes: keys are added and removed without a restart. api_keys still count (as admins).
    keys_file: str = ""
    # gRPC server reflection (grpcurl's discovery of the documented contract) answers without a key, like
    # the health service (load balancers' probes); false turns reflection off. Health always answers.
    reflection: bool = True
    tls_cert_file: str = ""
    tls_key_file: str = ""
    # How long shutdown waits for in-flight calls before cancelling them.
    shutdown_grace_seconds: float = 5.0
    # Events a subscriber may fall behind before its stream is ended (it resumes by cursor).
    subscriber_queue_size: int = 10_000
    # Most writes one group-commit transaction takes.
    writer_batch_size: int = 512
    # Overload (api/admission.py): a unary call is refused at once with UNAVAILABLE and a retry hint of
    # overload_retry_after_ms, rather than queued until gRPC cancels it, when max_in_flight_calls run
    # already or the event loop (which serves every call) was last seen more than max_loop_lag_ms late.
    max_in_flight_calls: int = 64
    max_loop_lag_ms: float = 25.0
    overload_retry_after_ms: int = 250
    # Clients may ping this often without data (grpc.http2.min_ping_interval_without_data_ms);
    # 1 s lets grpc-js and C-core clients with a few seconds' keepalive hold quiet streams open.
    min_ping_interval_ms: int = 1_000
    # taskmem's own loggers log at this level; other libraries' (httpx, sse_starlette, grpc, …) stay at
    # WARNING, since their debug lines carry other namespaces' data (URLs with tokens, streamed events) ...
    log_level: str = "INFO"
    # ... unless named here: these loggers (and their children) log at DEBUG too.
    debug_loggers: tuple[str, ...] = ()
    # Bearer keys that may force any wait's outcome with ResolveWait. With api_keys
    # configured, each must also be one of them (it authenticates as that key).
    admin_keys: tuple[str, ...] = ()
    # Hosts an http wait may poll: exact names or addresses, or "*.example.com" for a
    # domain's subdomains, on ports 80 and 443; "host:port" (or "[::1]:port") allows that port too.
    # A name is resolved once per look and refused if any address it gives is loopback, private,
    # link-local, unspecified or multicast, unless that literal address is listed; the look then
    # connects to the address checked. Empty (the default) refuses http waits.
    wait_http_allowed_hosts: tuple[str, ...] = ()
    # The shortest poll interval an http or file wait may ask for, and the interval when it asks none.
    wait_min_poll_interval_seconds: float = 1.0
    wait_default_poll_interval_seconds: float = 5.0
    # Maintenance runs this often (0 turns it off). Each threshold below of 0 turns its action off.
    maintenance_interval_seconds: float = 60.0
    # A working task with no update for this long (and no open wait) gets a stuck alert ...
    stuck_after_seconds: float = 30 * 60.0
    # ... and another one no sooner than this after the last (metadata last_stuck_alert_at).
    stuck_alert_cooldown_seconds: float = 60 * 60.0
    # A working task with no update for this long (and no open wait) is paused.
    auto_pause_after_seconds: float = 24 * 3600.0
    # A task that finished (COMPLETED, FAILED, CANCELLED) this long ago is archived (still readable).
    auto_archive_after_seconds: float = 7 * 24 * 3600.0
    # An episode older than this is archived: left out of ListEpisodes unless include_archived
    # is asked, never lost. Only with episode_retention_delete set is it deleted instead.
    episode_retention_seconds: float = 30 * 24 * 3600.0
    episode_retention_delete: bool = False
    # MemoryService. Embeddings of memory summaries (semantic search): builtin (all-MiniLM-L6-v2 int8,
    # offline), openai (an OpenAI-compatible /v1/embeddings endpoint at embedding_url), or none (full text only).
    embedding_backend: str = "builtin"
    # openai backend: the model name, the endpoint's base URL (e.g. http://127.0.0.1:11434/v1),
    # the vector dimension it returns, and a bearer key if it needs one.
    embedding_model: str = ""
    embedding_url: str = ""
    embedding_dimension: int = 0
    embedding_api_key: str = ""
    # Texts per embedding call.
    embedding_batch_size: int = 64
    # Memory entries are embedded after they are acknowledged, by a background pass that takes up to
    # this many queued summaries per round (across calls), in model calls of embedding_batch_size.
    embedding_backlog_batch: int = 256
    # The utility model (extraction, distillation): an OpenAI-compatible chat-completions endpoint
    # (base URL such as http://127.0.0.1:11434/v1) and a model name; both empty means no model.
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    # Each model request gives up after this long; a failed request is retried this many times.
    llm_timeout_seconds: float = 60.0
    llm_retries: int = 2
    # Token budgets for the server's own model calls (chat and embedding endpoints), per namespace:
    # "NAMESPACE=TOKENS" entries (YAML list, or "a=100000,b=5000" in the environment). Once a namespace's
    # calls have used its budget (tokens in plus out, as the endpoints' `usage` reported them), its model
    # work is refused: writes still succeed, the model step is skipped and says so (GetTaskUsage shows the
    # budget). A namespace not listed has no budget.
    model_token_budgets: tuple[str, ...] = ()
    # StateService. Where tiktoken's o200k_base file is unpacked ("" : a taskmem folder in the temp dir).
    tiktoken_cache_dir: str = ""
    # A directory to mirror each task's state YAML into (<task id>.yaml, rewritten atomically on every
    # change of the task); "" turns the mirror off.
    state_yaml_mirror_dir: str = ""
    # ExtractState reads at most this many new messages per run, gives the model this long (the whole
    # model call, retries included), and reconciles at most this many candidates.
    state_extraction_max_messages: int = 20
    state_extraction_timeout_seconds: float = 15.0
    state_max_candidates: int = 25
    # RenderState and BuildContext show at most this many current items.
    state_max_active_items: int = 40
    # With a chat model configured, a thread's running summary is regenerated after this many new
    # messages (in the background; 0 turns it off).
    running_summary_every_messages: int = 5
    # Structured-state reconciliation thresholds per embedding model name, overriding or adding to
    # RECONCILIATION_DEFAULTS; in YAML a mapping {model name: {merge: 0.66, conflict: 0.4, ...}} with
    # the fields of core.reconcile.ReconcileThresholds. Read them with reconciliation_thresholds().
    reconciliation: tuple[tuple[str, ReconcileThresholds], ...] = ()
    # With a utility model configured, "uncertain" lets it adjudicate the builtin reconciliation decisions
    # that core/reconcile marks uncertain: one call per run, its answer recorded as evidence, the
    # builtin outcome kept if it fails or answers nonsense. "off": the builtin outcomes only.
    reconcile_adjudication: str = "uncertain"
    # The adjudication call gives up after this long (retries included); the builtin outcomes stand.
    reconcile_adjudication_timeout_seconds: float = 10.0
    # Webhooks (a task's callback_url). Hosts they may be sent to, checked like wait_http_allowed_hosts
    # (ports, resolved addresses);
    # empty (the default) sends nothing: a task's events wait, unsent, until its host is allowed.
    webhook_allowed_hosts: tuple[str, ...] = ()
    # A failed attempt is retried after initial × 2^(n-1) seconds (at most max) until retry_period after
    # the first attempt; then the event is dead-lettered (ListWebhookDeliveries shows it).
    webhook_backoff_initial_seconds: float = 1.0
    webhook_backoff_max_seconds: float = 600.0
    webhook_retry_period_seconds: float = 24 * 3600.0
    # Each attempt (connect, send, answer) must finish within this.
    webhook_attempt_timeout_seconds: float = 10.0
    # Attempts in flight at once, over all tasks (a task's own events go one at a time).
    webhook_concurrency: int = 16
    # Finished delivery rows (ListWebhookDeliveries) are deleted by maintenance this long after their
    # last attempt (0 keeps them forever); the events themselves stay in the log.
    webhook_delivered_retention_seconds: float = 3 * 24 * 3600.0
    webhook_dead_letter_retention_seconds: float = 30 * 24 * 3600.0
    # Time to live per namespace and kind of memory (docs/retention.md): in YAML a mapping
    # {namespace: {kind: seconds}}, "*" standing for every namespace not named; kinds: those of
    # core.retention.Kind (memory_entries). An item expires that long after it is written (unless pinned,
    # or given its own expire time); no read returns it from then on, and maintenance deletes it. Beside
    # them, core.retention.Cap keys (memory_entries_max: N) cap the namespace's live items of the kind: a
    # write past the cap expires the oldest at once (0: no cap).
    retention: tuple[tuple[str, str, float], ...] = ()
    # Expired items maintenance deletes per write (a page; the writer's other work waits at most that long).
    retention_delete_page: int = 500
    # Serve Prometheus metrics at http://HOST:PORT/metrics ("" : off). /metrics checks no key and has no TLS,
    # so off loopback it needs --insecure, whatever api_keys says.
    metrics_listen: str = ""
    # Log lines as text, or as one JSON object per line (level, message, method, namespace,
    # correlation_id, duration_ms).
    log_format: str = "text"
    # Trace RPCs with OpenTelemetry to this OTLP/gRPC endpoint, e.g. http://127.0.0.1:4317 ("" : off).
    otlp_endpoint: str = ""
    # The optional second model for analysis and planning questions (QueryTask): an OpenAI-compatible
    # endpoint like llm_base_url. Empty: every question goes to the utility model.
    llm_second_base_url: str = ""
    llm_second_model: str = ""
    llm_second_api_key: str = ""
    # The web view for people (tasks, plans, memory, live events): host:port to serve it on, "" for off.
    # Off loopback it needs API keys and TLS (tls_cert_file/tls_key_file), or --insecure.
    http_listen: str = ""
    # Hardening (issues 12, 27). Folders under which file waits may read, bound to namespaces: "NAME=PATH" is
    # namespace NAME's; a plain "PATH" gives each namespace PATH/<namespace> (waits/file_access.WaitFileRoots).
    # A wait's path must lie below one of its own namespace's. Empty (the default) refuses file waits. The
    # database and its folder are never readable.
    wait_file_roots: tuple[str, ...] = ()
    # Each look at an http target ends after this long in all (connect, headers and body together).
    wait_probe_timeout_seconds: float = 10.0
    # Looks of one kind run at most this many at a time, so one kind cannot starve the other.
    wait_http_probe_concurrency: int = 32
    wait_file_probe_concurrency: int = 4
    # A look that raises is retried with backoff; after this many errors in a row the wait ends FAILED.
    wait_probe_max_errors: int = 5
    # Working memory: the most bytes one agent's document may take (JSON), and the most agents a namespace
    # may keep one for. Beyond either, PutWorkingMemory answers RESOURCE_EXHAUSTED naming the limit.
    working_memory_max_bytes: int = 256 * 1024
    working_memory_max_agents: int = 1_000
    # glibc only (malloc_tuning.py): fix malloc's mmap and trim thresholds at this many bytes, so freed large
    # buffers go back to the system instead of staying in the heap as the adaptive threshold grows.
    # 0 (the default) leaves glibc's defaults (adaptive, 128 KiB rising to 32 MiB): 131072 kept 30-50 MiB less
    # resident over a 60k-request fuzz run but cost that run's server 15-50 % more CPU (large requests'
    # buffers mmapped afresh), so it is for memory-tight deployments to choose (bench/fuzz_rpcs.py).
    malloc_mmap_threshold_bytes: int = 0

    def __post_init__(self) -> None:
        if self.embedding_backend not in ("builtin", "openai", "none"):
            raise ConfigError(f"embedding_backend: {self.embedding_backend!r} is not one of builtin, openai, none")
        if self.llm_timeout_seconds <= 0 or self.embedding_batch_size < 1 or self.llm_retries < 0:
            raise ConfigError("llm_timeout_seconds must be more than 0, embedding_batch_size at least 1"
                              " and llm_retries not negative")
        if self.embedding_backlog_batch < 1:
            raise ConfigError("embedding_backlog_batch: must be at least 1")
        parse_model_budgets(self.model_token_budgets)
        known = {key.key for key in self.api_keys}
        # (A keys file's secrets are not known until it is read: an admin key may be one of them.)
        if self.api_keys and not self.keys_file and any(key not in known for key in self.admin_keys):
            raise ConfigError("admin_keys: with api_keys configured, every admin key must also be an api key")
        if self.wait_min_poll_interval_seconds <= 0:
            raise ConfigError("wait_min_poll_interval_seconds: must be more than 0")
        for name in ("maintenance_interval_seconds", "stuck_after_seconds", "stuck_alert_cooldown_seconds",
                     "auto_pause_after_seconds", "auto_archive_after_seconds", "running_summary_every_messages",
                     "episode_retention_seconds", "webhook_delivered_retention_seconds",
                     "webhook_dead_letter_retention_seconds"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name}: must not be negative (0 turns it off)")
        if self.retention_delete_page <= 0:
            raise ConfigError("retention_delete_page: must be more than 0")
        if self.reconcile_adjudication not in RECONCILE_ADJUDICATION_MODES:
            raise ConfigError(f"reconcile_adjudication: {self.reconcile_adjudication!r} is not one of "
                              f"{', '.join(RECONCILE_ADJUDICATION_MODES)}")
        if self.log_level.upper() not in LOG_LEVELS:
            raise ConfigError(f"log_level: {self.log_level!r} is not one of {', '.join(LOG_LEVELS)}")
        if self.log_format not in ("text", "json"):
            raise ConfigError(f"log_format: {self.log_format!r} is not one of text, json")
        for name in ("webhook_backoff_initial_seconds", "webhook_backoff_max_seconds", "webhook_retry_period_seconds",
                     "webhook_attempt_timeout_seconds", "webhook_concurrency"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name}: must be more than 0")
        for name in ("wait_http_allowed_hosts", "webhook_allowed_hosts"):
            try:
                parse_allowed_hosts(getattr(self, name))
            except ValueError as error:
                raise ConfigError(f"{name}: {error}") from None
        if self.metrics_listen and not self.metrics_listen.rpartition(":")[2].isdigit():
            raise ConfigError(f"metrics_listen: {self.metrics_listen!r} is not HOST:PORT")
        for name in ("wait_probe_timeout_seconds", "wait_http_probe_concurrency", "wait_file_probe_concurrency",
                     "wait_probe_max_errors", "working_memory_max_bytes", "working_memory_max_agents",
                     "state_extraction_max_messages", "state_extraction_timeout_seconds", "state_max_candidates",
                     "state_max_active_items", "reconcile_adjudication_timeout_seconds",
                     "max_in_flight_calls", "max_loop_lag_ms", "overload_retry_after_ms"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name}: must be more than 0")
        if not 0 <= self.malloc_mmap_threshold_bytes <= MALLOC_MMAP_THRESHOLD_MAX:
            raise ConfigError(f"malloc_mmap_threshold_bytes: {self.malloc_mmap_threshold_bytes} is not between 0"
                              f" (glibc's defaults) and {MALLOC_MMAP_THRESHOLD_MAX} (glibc's largest on 64-bit)")

    @property
    def open_namespace(self) -> bool:
        """True when no keys are configured: every caller acts in the default namespace."""
        return not self.api_keys and not self.keys_file


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_listen_allowed(config: Config, listen: str, *, tls: bool, setting: str = "listen",
                         authenticated: bool = True) -> None:
    """Refuse a front door beyond loopback that would be unsafe, unless --insecure says so: with no API keys
    (or on a door that checks none: authenticated=False) anyone could call it; with API keys but no TLS,
    bearer keys would cross the network in clear text. Every front door (gRPC, the web view, metrics) checks
    its own address with this."""
    host = listen.rpartition(":")[0]
    if config.insecure or is_loopback_host(host):
        return
    if not authenticated:
        raise ConfigError(f"{setting}: {listen} is not a loopback address and it answers anyone (it checks no"
                          " API key); bind it to loopback or pass --insecure")
    if config.open_namespace:
        raise ConfigError(f"{setting}: {listen} is not a loopback address and no api_keys are configured;"
                          " configure api_keys or pass --insecure")
    if not tls:
        raise ConfigError(f"{setting}: {listen} is not a loopback address and has no TLS, so API keys would cross"
                          " the network in clear text; set tls_cert_file and tls_key_file or pass --insecure")


_ENV_PREFIX = "TASKMEM_"
_FILE_SUFFIX = "_FILE"
_FIELDS = {f.name: f for f in dataclasses.fields(Config)}


# Calibrated with bench/calibrate_reconciliation.py on tests/data/state_pairs.yaml. A model not
# listed here or in Config.reconciliation gets the seed's numbers (tuned for another model).
RECONCILIATION_DEFAULTS: Mapping[str, ReconcileThresholds] = {
    "all-MiniLM-L6-v2-int8": ReconcileThresholds(merge=0.66, conflict=0.4, alignment=0.5, named_floor=0.3),
}


def reconciliation_thresholds(
    model_name: str, overrides: tuple[tuple[str, ReconcileThresholds], ...] = (),
) -> ReconcileThresholds:
    """The thresholds for an embedding model: Config.reconciliation, else RECONCILIATION_DEFAULTS,
    else the seed's (SEED_THRESHOLDS)."""
    for name, thresholds in overrides:
        if name == model_name:
            return thresholds
    return RECONCILIATION_DEFAULTS.get(model_name, SEED_THRESHOLDS)


def _reconciliation(value: Any) -> tuple[tuple[str, ReconcileThresholds], ...]:
    if isinstance(value, str):
        value = yaml.safe_load(value) or {}
    if not isinstance(value, Mapping):
        raise ConfigError("reconciliation: expected a mapping of embedding model name to thresholds")
    known = {f.name for f in dataclasses.fields(ReconcileThresholds)}
    models = []
    for model, fields in value.items():
        if not isinstance(fields, Mapping) or set(fields) - known:
            raise ConfigError(f"reconciliation.{model}: expected a mapping with keys among {sorted(known)}")
        base = RECONCILIATION_DEFAULTS.get(str(model), SEED_THRESHOLDS)
        try:
            models.append((str(model), dataclasses.replace(base, **{k: type(getattr(base, k))(v) for k, v in fields.items()})))
        except (TypeError, ValueError) as error:
            raise ConfigError(f"reconciliation.{model}: {error}") from None
    return tuple(models)


def parse_model_budgets(entries: tuple[str, ...]) -> dict[str, int]:
    """model_token_budgets as {namespace: tokens}; ConfigError naming the entry that is not NAMESPACE=TOKENS."""
    budgets = {}
    for entry in entries:
        namespace, _, tokens = entry.partition("=")
        if not namespace.strip() or not tokens.strip().isdigit():
            raise ConfigError(f"model_token_budgets: {entry!r} is not NAMESPACE=TOKENS (a whole number)")
        budgets[namespace.strip()] = int(tokens)
    return budgets


def _retention(value: Any) -> tuple[tuple[str, str, float], ...]:
    if isinstance(value, str):
        value = yaml.safe_load(value) or {}
    if not isinstance(value, Mapping):
        raise ConfigError("retention: expected a mapping of namespace (or \"*\") to {kind: seconds or count}")
    caps = {cap.value for cap in RetentionCap}
    kinds = [kind.value for kind in RetentionKind] + [cap.value for cap in RetentionCap]
    ttls = []
    for namespace, per_kind in value.items():
        if not isinstance(per_kind, Mapping) or set(per_kind) - set(kinds):
            raise ConfigError(f"retention.{namespace}: expected a mapping with keys among {kinds}")
        for kind, seconds in per_kind.items():
            try:
                ttl = float(seconds)
            except (TypeError, ValueError):
                raise ConfigError(f"retention.{namespace}.{kind}: cannot read {seconds!r} as seconds") from None
            if not ttl >= 0:  # 0: kept (overrides "*" for a namespace)
                raise ConfigError(f"retention.{namespace}.{kind}: must not be negative")
            if kind in caps and ttl != int(ttl):
                raise ConfigError(f"retention.{namespace}.{kind}: must be a whole number of items")
            ttls.append((str(namespace), str(kind), ttl))
    return tuple(ttls)


def parse_api_key(text: str) -> ApiKey:
    """Parse "KEY" or "KEY:ns1,ns2" (no namespaces means the default one)."""
    key, _, namespaces = text.partition(":")
    if not key:
        raise ConfigError(f"api_keys: empty key in {text!r}")
    names = tuple(n.strip() for n in namespaces.split(",") if n.strip()) or (DEFAULT_NAMESPACE,)
    return ApiKey(key=key, namespaces=names)


def _coerce(name: str, value: Any) -> Any:
    field = _FIELDS.get(name)
    if field is None:
        raise ConfigError(f"{name}: unknown setting (known: {', '.join(sorted(_FIELDS))})")
    default = field.default if field.default is not dataclasses.MISSING else ()
    if name == "reconciliation":
        return _reconciliation(value)
    if name == "retention":
        return _retention(value)
    if name == "api_keys":
        if isinstance(value, str):
            return tuple(parse_api_key(part) for part in value.split(";") if part.strip())
        keys = []
        for entry in value or ():
            if isinstance(entry, str):
                keys.append(parse_api_key(entry))
            elif isinstance(entry, Mapping) and entry.get("key"):
                keys.append(ApiKey(str(entry["key"]), tuple(entry.get("namespaces") or (DEFAULT_NAMESPACE,))))
            else:
                raise ConfigError(f"api_keys: each entry needs a key, got {entry!r}")
        return tuple(keys)
    if isinstance(default, tuple):  # a list of strings: a YAML list, or "a,b" in the environment
        parts = value.split(",") if isinstance(value, str) else list(value or ())
        return tuple(str(part).strip() for part in parts if str(part).strip())
    try:
        if isinstance(default, bool):
            if isinstance(value, str):
                if value.lower() not in ("1", "0", "true", "false", "yes", "no"):
                    raise ValueError(value)
                return value.lower() in ("1", "true", "yes")
            return bool(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        return str(value)
    except ValueError:
        raise ConfigError(f"{name}: cannot read {value!r} as {type(default).__name__}") from None


def _setting_file(name: str, path: str) -> Any:
    """A setting's value read from a file: a list setting's entries one a line (blank lines and # comments
    skipped), any other setting the file's text, stripped."""
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise ConfigError(f"{name}: cannot read {path}: {error.strerror}") from None
    if isinstance(_FIELDS[name].default, tuple):
        return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return text.strip()


def load_config(
    file: str | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
) -> Config:
    """Build the configuration from its four sources, later ones winning."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    file = file or environ.get(_ENV_PREFIX + "CONFIG")
    if file:
        loaded = yaml.safe_load(Path(file).read_text()) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{file}: expected a mapping of settings")
        values.update({str(k): _coerce(str(k), v) for k, v in loaded.items()})
    for env_name, raw in environ.items():
        if env_name.startswith(_ENV_PREFIX) and env_name != _ENV_PREFIX + "CONFIG":
            name = env_name[len(_ENV_PREFIX):].lower()
            if name in _FIELDS:
                values[name] = _coerce(name, raw)
            elif name.endswith(_FILE_SUFFIX.lower()) and name.removesuffix(_FILE_SUFFIX.lower()) in _FIELDS:
                name = name.removesuffix(_FILE_SUFFIX.lower())
                if _ENV_PREFIX + name.upper() in environ:
                    raise ConfigError(f"{name}: set either {_ENV_PREFIX}{name.upper()} or {env_name}, not both")
                values[name] = _coerce(name, _setting_file(name, raw))
    for name, value in (flags or {}).items():
        if value is not None:
            values[name] = _coerce(name, value)
    return Config(**values)


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `taskmem serve`; each overrides the file and environment."""
    parser.add_argument("--config", help="YAML file of settings (or TASKMEM_CONFIG)")
    parser.add_argument("--listen", help="host:port to bind (default 127.0.0.1:50051; port 0 picks one)")
    parser.add_argument("--database", help="SQLite file (default data/taskmem.db) or PostgreSQL URL; keep a"
                                           " password out of the URL (PGPASSWORD, ~/.pgpass) or set TASKMEM_DATABASE")
    parser.add_argument("--insecure", action="store_const", const=True,
                        help="allow a non-loopback address with no API keys, or with API keys but no TLS")
    parser.add_argument("--api-key", dest="api_keys", action="append",
                        help="KEY or KEY:ns1,ns2 (repeatable); replaces configured keys. Visible in ps: prefer"
                             " --api-keys-file, TASKMEM_API_KEYS, TASKMEM_API_KEYS_FILE or the --config file")
    parser.add_argument("--api-keys-file", metavar="PATH",
                        help="API keys from a file, one KEY or KEY:ns1,ns2 a line; replaces configured keys")
    parser.add_argument("--keys-file", dest="keys_file", metavar="PATH",
                        help="API keys with ids, roles and task scopes (YAML, docs/access.md), re-read when it changes")
    parser.add_argument("--admin-key", dest="admin_keys", action="append",
                        help="a key that may force any wait's outcome (repeatable); replaces configured ones."
                             " Visible in ps: prefer --admin-keys-file or TASKMEM_ADMIN_KEYS(_FILE)")
    parser.add_argument("--admin-keys-file", metavar="PATH", help="admin keys from a file, one a line")
    parser.add_argument("--tls-cert-file")
    parser.add_argument("--tls-key-file")
    parser.add_argument("--log-level", help="taskmem's own loggers' level (default INFO); other libraries'"
                                            " loggers stay at WARNING unless named with --debug-logger")
    parser.add_argument("--debug-logger", dest="debug_loggers", action="append", metavar="NAME",
                        help="also log this library logger (and its children) at DEBUG, e.g. httpx (repeatable);"
                             " its lines may carry any namespace's data")
    parser.add_argument("--embedding-backend", choices=("builtin", "openai", "none"),
                        help="embeddings for semantic memory search (default builtin)")
    parser.add_argument("--embedding-url", help="openai embedding backend: the endpoint's base URL")
    parser.add_argument("--embedding-model", help="openai embedding backend: the model name")
    parser.add_argument("--embedding-dimension", help="openai embedding backend: the vector dimension")
    parser.add_argument("--llm-base-url",
                        help="OpenAI-compatible chat-completions base URL, e.g. http://127.0.0.1:11434/v1")
    parser.add_argument("--llm-model", help="the utility model's name at --llm-base-url")
    parser.add_argument("--reconcile-adjudication", choices=RECONCILE_ADJUDICATION_MODES,
                        help="with a model configured, let it adjudicate uncertain reconciliation decisions"
                             " (default uncertain)")
    parser.add_argument("--llm-second-base-url",
                        help="an optional second OpenAI-compatible endpoint for analysis and planning questions")
    parser.add_argument("--llm-second-model", help="the second model's name at --llm-second-base-url")
    parser.add_argument("--webhook-allowed-host", dest="webhook_allowed_hosts", action="append",
                        help="a host webhooks may be sent to, e.g. hooks.example.com or *.example.com (repeatable);"
                             " none configured: no webhook is sent")
    parser.add_argument("--metrics-listen", help="serve Prometheus metrics at http://HOST:PORT/metrics (no key"
                                                 " is checked: off loopback only with --insecure)")
    parser.add_argument("--log-format", choices=("text", "json"), help="log lines as text (default) or JSON")
    parser.add_argument("--otlp-endpoint", help="trace RPCs with OpenTelemetry to this OTLP/gRPC endpoint"
                                                " (needs the tracing extra)")
    parser.add_argument("--http", dest="http_listen", metavar="HOST:PORT",
                        help="serve the web view here, e.g. 127.0.0.1:8080 (default off)")


SERVE_EPILOG = """Every setting can also come from the --config YAML file, from TASKMEM_<NAME> in the environment
(TASKMEM_API_KEYS="k1:ns1,ns2;k2"), or from a file named by TASKMEM_<NAME>_FILE (TASKMEM_API_KEYS_FILE,
TASKMEM_LLM_API_KEY_FILE, ...): secrets given there stay out of the command line, which ps shows."""


def config_from_serve_arguments(args: argparse.Namespace) -> Config:
    flags = {name: getattr(args, name, None) for name in _FIELDS}
    for name in ("api_keys", "admin_keys"):
        path = getattr(args, f"{name}_file", None)
        if path is not None:
            if flags[name] is not None:
                raise ConfigError(f"{name}: give either --{name[:-1].replace('_', '-')} or"
                                  f" --{name.replace('_', '-')}-file, not both")
            flags[name] = _setting_file(name, path)
    return load_config(file=args.config, flags=flags)
