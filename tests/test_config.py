"""Configuration: defaults < YAML file < TASKMEM_* environment < flags."""

from pathlib import Path

import pytest

from taskmem.config import ApiKey, ConfigError, load_config


def test_later_sources_win(tmp_path: Path) -> None:
    file = tmp_path / "taskmem.yaml"
    file.write_text("listen: 127.0.0.1:6000\ndatabase: from-file.db\nshutdown_grace_seconds: 2\n"
                    "api_keys:\n  - key: k1\n    namespaces: [team-a]\n")
    config = load_config(str(file), {"TASKMEM_DATABASE": "from-env.db", "TASKMEM_INSECURE": "true"},
                         {"listen": "127.0.0.1:7000"})
    assert config.listen == "127.0.0.1:7000"
    assert config.database == "from-env.db"
    assert config.insecure is True and config.shutdown_grace_seconds == 2.0
    assert config.api_keys == (ApiKey("k1", ("team-a",)),)


def test_keys_from_the_environment_use_key_colon_namespaces() -> None:
    config = load_config(None, {"TASKMEM_API_KEYS": "k1:a,b;k2"}, {})
    assert config.api_keys == (ApiKey("k1", ("a", "b")), ApiKey("k2", ("default",)))
    assert not config.open_namespace


@pytest.mark.parametrize("environ, needle", [
    ({"TASKMEM_WRITER_BATCH_SIZE": "many"}, "writer_batch_size"),
    ({"TASKMEM_INSECURE": "perhaps"}, "insecure"),
    ({"TASKMEM_RECONCILE_ADJUDICATION": "always"}, "reconcile_adjudication"),
    ({"TASKMEM_RECONCILE_ADJUDICATION_TIMEOUT_SECONDS": "0"}, "reconcile_adjudication_timeout_seconds"),
])
def test_bad_values_name_the_setting(environ: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_config(None, environ, {})


def test_an_unknown_setting_in_the_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "taskmem.yaml"
    file.write_text("listen_on: 1\n")
    with pytest.raises(ConfigError, match="listen_on"):
        load_config(str(file), {}, {})
