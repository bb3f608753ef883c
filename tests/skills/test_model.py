"""The skill model: skills from memory and from disk, their entries and manifests, and every check
that refuses a skill at registration rather than at request time."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from jsonrpc_mcp import RegistrationError
from jsonrpc_mcp.skills import Skill, SkillError, Skills, digest_of, load_directory

EXAMPLE_SKILLS = Path(__file__).resolve().parents[2] / "examples" / "everything" / "skills"


def skill_md(name: str = "demo", description: str = "A demo skill.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# Demo\n"


def test_an_in_memory_skill_has_its_uri_frontmatter_and_a_manifest_with_skill_md_first() -> None:
    skill = Skill.from_files("demo", {"z.txt": "zed", "SKILL.md": skill_md(), "a/b.md": b"bee"})
    entry = skill.entry()
    assert entry["uri"] == "skill://demo/SKILL.md"
    assert entry["frontmatter"] == {"name": "demo", "description": "A demo skill."}
    assert [r["uri"] for r in entry["resources"]] == [
        "skill://demo/SKILL.md",
        "skill://demo/a/b.md",
        "skill://demo/z.txt",
    ]
    assert entry["resources"][1] == {
        "uri": "skill://demo/a/b.md",
        "digest": "sha256:" + hashlib.sha256(b"bee").hexdigest(),
        "size": 3,
    }
    assert skill.files[0].mime_type == "text/markdown"


def test_digests_are_sha256_of_the_raw_bytes_in_lowercase_hex() -> None:
    assert digest_of(b"") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_a_nested_skill_path_ends_in_the_skill_name() -> None:
    skill = Skill.from_files("acme/billing/refunds", {"SKILL.md": skill_md("refunds")})
    assert skill.uri == "skill://acme/billing/refunds/SKILL.md"


def test_file_names_are_percent_encoded_in_their_uris() -> None:
    skill = Skill.from_files("demo", {"SKILL.md": skill_md(), "my notes.md": "x"})
    assert skill.file("skill://demo/my%20notes.md") is not None


def test_a_binary_file_keeps_its_bytes_and_has_no_text() -> None:
    skill = Skill.from_files("demo", {"SKILL.md": skill_md(), "logo.bin": b"\xff\x00\xfe"})
    file = skill.files[1]
    assert (file.text, file.mime_type, file.size) == (None, "application/octet-stream", 3)


def test_the_directories_list_direct_children_with_folders_as_none() -> None:
    skill = Skill.from_files("demo", {"SKILL.md": skill_md(), "ref/a.md": "a", "ref/deep/b.md": "b"})
    tree = skill.directories()
    assert [(uri, f is None) for uri, f in tree["skill://demo"]] == [
        ("skill://demo/SKILL.md", False),
        ("skill://demo/ref", True),
    ]
    assert [uri for uri, _ in tree["skill://demo/ref"]] == ["skill://demo/ref/a.md", "skill://demo/ref/deep"]
    assert [uri for uri, _ in tree["skill://demo/ref/deep"]] == ["skill://demo/ref/deep/b.md"]


def test_the_example_directory_loads_with_its_supporting_files() -> None:
    (skill,) = load_directory(EXAMPLE_SKILLS)
    assert skill.path == "pdf-processing"
    assert [f.path for f in skill.files] == ["SKILL.md", "references/FORMS.md", "scripts/extract_tables.sh"]
    on_disk = (EXAMPLE_SKILLS / "pdf-processing" / "references" / "FORMS.md").read_bytes()
    assert skill.entry()["resources"][1]["digest"] == digest_of(on_disk)
    assert skill.frontmatter["metadata"] == {"author": "jsonrpc-mcp examples", "version": "1.0"}


def test_nested_skill_paths_come_from_the_folders_and_hidden_files_are_left_out(tmp_path: Path) -> None:
    folder = tmp_path / "acme" / "refunds"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md("refunds"))
    (folder / ".secret").write_text("no")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "SKILL.md").write_text(skill_md("hidden"))
    (skill,) = load_directory(tmp_path)
    assert (skill.path, [f.path for f in skill.files]) == ("acme/refunds", ["SKILL.md"])


def test_skills_takes_a_skills_directory_a_skill_directory_or_skills() -> None:
    one = Skill.from_files("one", {"SKILL.md": skill_md("one")})
    skills = Skills(EXAMPLE_SKILLS / "pdf-processing", one)
    assert [s.uri for s in skills.skills] == ["skill://pdf-processing/SKILL.md", "skill://one/SKILL.md"]
    assert [s.uri for s in Skills(EXAMPLE_SKILLS).skills] == ["skill://pdf-processing/SKILL.md"]


def test_the_same_skill_twice_is_refused() -> None:
    one = Skill.from_files("one", {"SKILL.md": skill_md("one")})
    skills = Skills(one)
    with pytest.raises(SkillError, match="added twice"):
        skills.add(one)
    with pytest.raises(SkillError, match="added twice"):
        Skills(EXAMPLE_SKILLS, EXAMPLE_SKILLS / "pdf-processing")


@pytest.mark.parametrize(
    ("path", "files", "says"),
    [
        ("demo", {"README.md": "x"}, "no SKILL.md"),
        ("demo", {"SKILL.md": "# no frontmatter\n"}, "must begin with a '---'"),
        ("demo", {"SKILL.md": "---\nname: demo\n---\n"}, "'description'"),
        ("demo", {"SKILL.md": "---\ndescription: d\n---\n"}, "'name'"),
        ("other", {"SKILL.md": skill_md()}, "last segment"),
        ("Demo", {"SKILL.md": skill_md("Demo")}, "naming rules"),
        ("a--b", {"SKILL.md": skill_md("a--b")}, "naming rules"),
        ("-demo", {"SKILL.md": skill_md("-demo")}, "naming rules"),
        ("demo", {"SKILL.md": skill_md(extra="metadata: x\n")}, "'metadata' must be a mapping"),
        ("demo", {"SKILL.md": skill_md(extra="metadata:\n  io.modelcontextprotocol/x: z\n")}, "reserved"),
        ("demo", {"SKILL.md": skill_md(description="x" * 1025)}, "at most 1024"),
        ("demo", {"SKILL.md": skill_md(), "../up.md": "x"}, "'..' segment"),
        ("demo", {"SKILL.md": skill_md(), "/abs.md": "x"}, "must be relative"),
        ("demo", {"SKILL.md": b"---\nname: demo\xff\n---\n"}, "not UTF-8"),
        ("bad path/demo", {"SKILL.md": skill_md()}, "skill path"),
        ("demo", {"SKILL.md": skill_md(extra="when: yes\n")}, "YAML 1.1"),
    ],
)
def test_a_skill_that_cannot_be_served_is_refused_at_registration(
    path: str, files: dict[str, str | bytes], says: str
) -> None:
    with pytest.raises(SkillError, match="skill") as caught:
        Skill.from_files(path, files)
    assert says in str(caught.value)
    assert isinstance(caught.value, RegistrationError)


def test_a_skill_over_512_files_is_refused() -> None:
    files: dict[str, str | bytes] = {"SKILL.md": skill_md()}
    files.update({f"f{i}.txt": "" for i in range(511)})
    assert len(Skill.from_files("demo", files).files) == 512
    files["one-more.txt"] = ""
    with pytest.raises(SkillError, match="513 files"):
        Skill.from_files("demo", files)


def test_a_skill_over_16_mib_is_refused() -> None:
    big = b"\0" * (16 * 1024 * 1024)
    with pytest.raises(SkillError, match="at most 16777216 bytes"):
        Skill.from_files("demo", {"SKILL.md": skill_md(), "big.bin": big})


def test_a_skill_cannot_hold_another_skill(tmp_path: Path) -> None:
    (tmp_path / "demo" / "inner").mkdir(parents=True)
    (tmp_path / "demo" / "SKILL.md").write_text(skill_md())
    (tmp_path / "demo" / "inner" / "SKILL.md").write_text(skill_md("inner"))
    with pytest.raises(SkillError, match="cannot nest"):
        load_directory(tmp_path)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")
def test_a_link_out_of_the_skill_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "SKILL.md").write_text(skill_md())
    (tmp_path / "outside.txt").write_text("secret")
    os.symlink(tmp_path / "outside.txt", tmp_path / "demo" / "leak.txt")
    with pytest.raises(SkillError, match="links outside"):
        load_directory(tmp_path)


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="does not exist"):
        load_directory(tmp_path / "nope")
    with pytest.raises(SkillError, match=r"no SKILL\.md"):
        Skill.from_directory(tmp_path)
