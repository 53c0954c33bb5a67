from tqdm import tqdm

from mvlib.core.progress import progress, progress_enabled


def test_progress_silent_in_ci_and_when_disabled(monkeypatch):
    monkeypatch.delenv("MVLIB_PROGRESS", raising=False)
    monkeypatch.setenv("CI", "true")
    assert not progress_enabled()
    items = [1, 2, 3]
    assert progress(items) is items
    monkeypatch.setenv("MVLIB_PROGRESS", "0")
    monkeypatch.delenv("CI")
    assert progress(items) is items


def test_progress_bar_when_asked(monkeypatch):
    monkeypatch.setenv("MVLIB_PROGRESS", "1")
    bar = progress(range(3), desc="x", file=open("/dev/null", "w"))
    assert isinstance(bar, tqdm)
    assert list(bar) == [0, 1, 2]
