"""Reconciliation thresholds are configured per embedding model."""

import pytest

from taskmem.config import RECONCILIATION_DEFAULTS, ConfigError, load_config, reconciliation_thresholds
from taskmem.core.reconcile import SEED_THRESHOLDS


def test_the_builtin_model_has_calibrated_defaults_and_unknown_models_get_the_seeds() -> None:
    assert reconciliation_thresholds("all-MiniLM-L6-v2-int8") == RECONCILIATION_DEFAULTS["all-MiniLM-L6-v2-int8"]
    assert reconciliation_thresholds("openai:text-embedding-3-small") == SEED_THRESHOLDS


def test_a_config_file_mapping_overrides_one_field_of_one_model() -> None:
    config = load_config(None, {"TASKMEM_RECONCILIATION": "{all-MiniLM-L6-v2-int8: {ask: 0.7}, other: {named_floor: 0.2}}"})
    builtin = reconciliation_thresholds("all-MiniLM-L6-v2-int8", config.reconciliation)
    assert builtin.ask == 0.7 and builtin.named_floor == RECONCILIATION_DEFAULTS["all-MiniLM-L6-v2-int8"].named_floor
    assert reconciliation_thresholds("other", config.reconciliation).named_floor == 0.2


@pytest.mark.parametrize("value", ["[0.5]", "{m: {ask: 2}}", "{m: {speed: 1}}", "{m: {ask: high}}"])
def test_bad_thresholds_name_the_setting(value: str) -> None:
    with pytest.raises(ConfigError, match="reconciliation"):
        load_config(None, {"TASKMEM_RECONCILIATION": value})
