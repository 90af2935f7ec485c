"""malloc_mmap_threshold_bytes: glibc's mmap and trim thresholds fixed at start-up, or left alone with 0."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from taskmem import malloc_tuning
from taskmem.config import MALLOC_MMAP_THRESHOLD_MAX, ConfigError, load_config
from taskmem.malloc_tuning import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, fix_malloc_thresholds


def glibc() -> bool:
    try:
        return sys.platform.startswith("linux") and bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):
        return False


class RecordingMallopt:
    def __init__(self, answer: int = 1) -> None:
        self.calls: list[tuple[int, int]] = []
        self.answer = answer

    def __call__(self, parameter: int, value: int) -> int:
        self.calls.append((parameter, value))
        return self.answer


def test_the_setting_defaults_to_glibcs_own_and_is_read_from_file_and_environment(tmp_path: Path) -> None:
    assert load_config(None, {}, {}).malloc_mmap_threshold_bytes == 0
    file = tmp_path / "taskmem.yaml"
    file.write_text("malloc_mmap_threshold_bytes: 262144\n")
    assert load_config(str(file), {}, {}).malloc_mmap_threshold_bytes == 262_144
    assert load_config(None, {"TASKMEM_MALLOC_MMAP_THRESHOLD_BYTES": "131072"}, {}).malloc_mmap_threshold_bytes == 131_072


@pytest.mark.parametrize("value", ["-1", str(MALLOC_MMAP_THRESHOLD_MAX + 1), "lots"])
def test_a_negative_too_large_or_unreadable_threshold_is_refused_naming_the_setting(value: str) -> None:
    with pytest.raises(ConfigError, match="malloc_mmap_threshold_bytes"):
        load_config(None, {"TASKMEM_MALLOC_MMAP_THRESHOLD_BYTES": value}, {})


def test_zero_leaves_mallopt_uncalled(monkeypatch: pytest.MonkeyPatch) -> None:
    mallopt = RecordingMallopt()
    monkeypatch.setattr(malloc_tuning, "glibc_mallopt", lambda: mallopt)
    assert fix_malloc_thresholds(0) is False
    assert mallopt.calls == []


def test_a_threshold_fixes_both_the_mmap_and_the_trim_threshold_at_it(monkeypatch: pytest.MonkeyPatch) -> None:
    mallopt = RecordingMallopt()
    monkeypatch.setattr(malloc_tuning, "glibc_mallopt", lambda: mallopt)
    assert fix_malloc_thresholds(131_072) is True
    assert mallopt.calls == [(M_MMAP_THRESHOLD, 131_072), (M_TRIM_THRESHOLD, 131_072)]


def test_off_glibc_nothing_is_called_and_one_line_says_so(monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(malloc_tuning, "glibc_mallopt", lambda: None)
    with caplog.at_level(logging.INFO, logger="taskmem.malloc_tuning"):
        assert fix_malloc_thresholds(131_072) is False
    assert [record.getMessage() for record in caplog.records] == [
        "malloc_mmap_threshold_bytes: not glibc, so left to this C library's defaults"]


def test_a_value_glibc_refuses_is_a_warning_not_a_failed_start(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="taskmem.malloc_tuning"):
        assert fix_malloc_thresholds(131_072, RecordingMallopt(answer=0)) is False
    assert "glibc refused M_MMAP_THRESHOLD=131072" in caplog.text


# After a 1 MiB block is mmapped and freed, glibc's adaptive threshold rises to 1 MiB, so a later 256 KiB
# block comes from the heap (and stays there when freed); with the threshold fixed it is mmapped still.
MMAPPED_AFTER_A_LARGE_FREE = textwrap.dedent("""
    import ctypes, sys
    from taskmem.malloc_tuning import fix_malloc_thresholds

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                    "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.mallinfo2.restype = MallInfo2
    print(fix_malloc_thresholds(int(sys.argv[1])))
    libc.free(libc.malloc(1 << 20))
    before = libc.mallinfo2().hblks
    block = libc.malloc(256 << 10)
    print(libc.mallinfo2().hblks - before)
    libc.free(block)
""")


@pytest.mark.skipif(not glibc(), reason="glibc only")
@pytest.mark.parametrize("threshold, applied, mmapped", [(0, "False", "0"), (131_072, "True", "1")])
def test_on_this_glibc_the_threshold_really_stops_adapting(threshold: int, applied: str, mmapped: str) -> None:
    environ = {name: value for name, value in os.environ.items()  # glibc's own defaults, whatever the shell set
               if not name.startswith("MALLOC_") and name != "GLIBC_TUNABLES"}
    done = subprocess.run([sys.executable, "-c", MMAPPED_AFTER_A_LARGE_FREE, str(threshold)],
                          capture_output=True, text=True, timeout=60, check=True, env=environ)
    assert done.stdout.split() == [applied, mmapped]
