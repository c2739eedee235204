"""Skills: a real folder with two SKILL.md skills, listed, called, a declared script run,
and hot-reloaded by the real watcher on edit, add and removal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import SourceError
from nexus_jupyter.sources.skills import SkillsSource, read_skill_file
from tests.waiting import wait_until

REVIEW = """---
name: review
description: Review a change for bugs and style.
scripts:
  - name: count
    path: scripts/count.sh
    args: ["{word}"]
    parameters: {type: object, properties: {word: {type: string}}, required: [word]}
---
1. Read the diff.
2. Run `review__count`.
"""

NOTES = """---
name: release-notes
description: Write release notes from the log.
---
Group the changes by kind.
"""


def _skill(folder: Path, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text)


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    _skill(root / "review", REVIEW)
    (root / "review" / "scripts").mkdir()
    (root / "review" / "scripts" / "count.sh").write_text('echo "counted $1"\n')
    (root / "review" / "checklist.md").write_text("- tests\n")
    _skill(root / "notes", NOTES)
    return root


@pytest.fixture
def reg(skills: Path) -> Registry:
    registry = Registry(search="keyword")
    registry.add_source(SkillsSource([skills]))
    yield registry
    registry.close()


def test_two_skills_listed_and_callable(reg: Registry, skills: Path) -> None:
    listed = [e.name for e in reg.entries(source="skill")]
    assert listed == ["release-notes", "review", "review__count"]
    review = reg.call_sync("review", {})
    assert review.ok, review.error
    assert review.structured["instructions"].startswith("1. Read the diff.")
    assert review.structured["files"] == ["SKILL.md", "checklist.md", "scripts/count.sh"]
    assert reg.get("release-notes").spec.description == "Write release notes from the log."
    counted = reg.call_sync("review__count", {"word": "bugs"}, approved=True)
    assert counted.structured == {"exit_code": 0, "stdout": "counted bugs\n", "stderr": ""}


def test_skills_hot_reload_on_edit_add_and_remove(reg: Registry, skills: Path) -> None:
    source = next(s.source for s in reg.sources() if s.name == "skill")
    assert source.started.wait(10)
    assert source._watchers and all(w.ready.wait(10) for w in source._watchers)
    (skills / "notes" / "SKILL.md").write_text(NOTES.replace("from the log", "from git tags"))
    wait_until(reg, lambda: "git tags" in reg.get("release-notes").spec.description)
    _skill(skills / "triage", "---\nname: triage\ndescription: Sort new issues.\n---\nLabel.\n")
    wait_until(reg, lambda: "triage" in reg.names())
    (skills / "notes" / "SKILL.md").write_text("---\nname: [broken\n---\n")  # a bad save
    wait_until(reg, lambda: "notes" in str(_skill_state(reg).error))
    assert "git tags" in reg.get("release-notes").spec.description  # the last good version
    (skills / "review" / "SKILL.md").unlink()
    wait_until(reg, lambda: "review" not in reg.names() and "review__count" not in reg.names())


def _skill_state(reg: Registry) -> Any:
    return next(s for s in reg.sources() if s.name == "skill")


def test_broken_skill_is_reported_and_others_still_load(tmp_path: Path) -> None:
    _skill(tmp_path / "ok", NOTES)
    _skill(tmp_path / "bad", "no front matter here\n")
    source = SkillsSource([tmp_path], watch=False)
    assert [t.spec.name for t in source.scan()] == ["release-notes"]
    assert "front matter" in source.errors[str(tmp_path / "bad" / "SKILL.md")]
    _skill(tmp_path / "half", "---\nname: half\n---\n")
    with pytest.raises(SourceError, match="needs `name` and `description`"):
        read_skill_file(tmp_path / "half" / "SKILL.md")


def test_project_skills_folder_joins_the_default_registry(tmp_path: Path, skills: Path) -> None:
    project = skills.parent
    (project / "nex.yaml").write_text("search: {mode: keyword}\n")
    reg = Registry.default(root=project, watch=False, builtins=False)
    try:
        assert {"review", "release-notes"} <= set(reg.names())
        assert reg.get("review").spec.source == "skill"
    finally:
        reg.close()


def test_skills_folders_resolve_against_the_nex_yaml_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    _skill(home / "team-skills" / "standup", NOTES.replace("release-notes", "standup"))
    (home / "nex.yaml").write_text("skills: [team-skills]\n")  # next to the user level
    monkeypatch.setenv("NEXUS_HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    (project / "nex.yaml").write_text("search: {mode: keyword}\n")
    reg = Registry.default(root=project, watch=False, builtins=False)
    try:
        assert "standup" in reg.names()
    finally:
        reg.close()


def test_skills_folders_of_the_user_and_the_project_add_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    _skill(home / "team-skills" / "standup", NOTES.replace("release-notes", "standup"))
    (home / "nex.yaml").write_text("skills: [team-skills]\n")
    monkeypatch.setenv("NEXUS_HOME", str(home))
    project = tmp_path / "project"
    _skill(project / "more-skills" / "retro", NOTES.replace("release-notes", "retro"))
    (project / "nex.yaml").write_text("search: {mode: keyword}\nskills: [more-skills]\n")
    reg = Registry.default(root=project, watch=False, builtins=False)
    try:
        assert {"standup", "retro"} <= set(reg.names())  # the project's list adds a folder
    finally:
        reg.close()


def test_a_skills_source_stopped_while_it_scans_ends_quietly(
    skills: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A short command closes the registry while the skills source's first scan still runs
    on its thread: the scan's result is dropped, no watcher starts, nothing is logged."""
    import threading

    from nexus_jupyter.core.registry.publisher import SourcePublisher

    registry = Registry(search="keyword")
    source = SkillsSource([skills])
    registry.add_source(source, start=False)
    scanning, go_on = threading.Event(), threading.Event()
    real_scan = source.scan

    def slow_scan() -> list[Any]:
        scanning.set()
        assert go_on.wait(10)
        return real_scan()

    source.scan = slow_scan  # type: ignore[method-assign]
    try:
        started = registry.loop.submit(source.start(SourcePublisher(registry, "skill")))
        assert scanning.wait(10)
        registry.loop.run(source.stop(), timeout=10)  # what Registry.close() does
        go_on.set()
        started.result(timeout=10)  # raised AttributeError ('NoneType' ... 'replace') before
        assert source._watchers == [] and source.started.is_set()
        assert _skill_state(registry).error is None
        assert not [r for r in caplog.records if r.levelname in ("ERROR", "WARNING")]
    finally:
        go_on.set()
        registry.close()


def _declaring(project: Path, entry: str) -> Registry:
    """The project's registry with ``entry`` as its one declared tool."""
    (project / "nex.yaml").write_text(f"search: {{mode: keyword}}\ntools:\n  - {entry}\n")
    return Registry.default(root=project, watch=False, builtins=False)


def test_a_declared_skill_owns_its_folder_and_another_of_its_name_conflicts(
    skills: Path,
) -> None:
    """`{id: review, source: {type: skill, path: skills/review}}` names the skill that
    ./skills holds: one tool, of the declaration, with its settings. A different folder's
    skill of the same name still conflicts."""
    project = skills.parent
    declared = "{id: review, source: {type: skill, path: skills/review}, categories: [quality]}"
    with _declaring(project, declared) as reg:
        review = reg.entry("review")
        assert (review.status, review.reason, review.shadowed) == ("ok", None, ())
        assert review.tool.spec.source == "manifest"
        assert review.tool.spec.categories == ("quality",)
        assert reg.entry("review__count").tool.spec.source == "manifest"
        assert [e.name for e in reg.entries(source="skill")] == ["release-notes"]
        assert reg.call_sync("review", {}).structured["instructions"].startswith("1. Read")
    _skill(project / "elsewhere" / "review", REVIEW.replace("Review a change", "Another"))
    with _declaring(project, "{id: review, source: {type: skill, path: elsewhere/review}}") as reg:
        review = reg.entry("review")
        assert review.status == "error"
        assert "conflict: 'review' is defined by manifest and skill" in str(review.reason)
