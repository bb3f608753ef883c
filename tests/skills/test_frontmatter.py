"""The SKILL.md frontmatter: the built-in parser of the YAML subset skills use, and its refusals."""

from __future__ import annotations

from typing import Any

import pytest

from jsonrpc_mcp.skills import _frontmatter
from jsonrpc_mcp.skills._frontmatter import FrontmatterError, parse_frontmatter, parse_yaml, split_frontmatter


def test_splits_the_frontmatter_from_the_body() -> None:
    block, body = split_frontmatter("---\nname: a\n---\n# Title\n")
    assert (block, body) == ("name: a\n", "# Title\n")


def test_a_byte_order_mark_and_crlf_lines_are_accepted() -> None:
    assert parse_frontmatter("\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nbody") == {
        "name": "a",
        "description": "b",
    }


@pytest.mark.parametrize(
    "text",
    ["name: a\n---\n", "---\nname: a\n", "# no frontmatter\n"],
    ids=["no-opening", "no-closing", "none"],
)
def test_a_missing_or_unclosed_frontmatter_is_refused(text: str) -> None:
    with pytest.raises(FrontmatterError):
        split_frontmatter(text)


@pytest.mark.parametrize(
    ("yaml", "value"),
    [
        ("k: plain text, with commas", "plain text, with commas"),
        ("k: 'it''s'", "it's"),
        ('k: "tab\\tquote\\" \\u00e9"', 'tab\tquote" é'),
        ("k: 42", 42),
        ("k: -3.5e2", -350.0),
        ("k: 0x1f", 31),
        ("k: true", True),
        ("k: FALSE", False),
        ("k: ~", None),
        ("k:", None),
        ("k: a # a comment", "a"),
        ("k: C#", "C#"),
        ("k: https://example.com/x", "https://example.com/x"),
        ("k: [a, 'b c', 3]", ["a", "b c", 3]),
        ("k: []", []),
    ],
)
def test_scalars_resolve_as_yaml_1_2_does(yaml: str, value: Any) -> None:
    assert parse_yaml(yaml + "\n") == {"k": value}


def test_nested_mappings_and_block_lists() -> None:
    text = "metadata:\n  author: me\n  version: '1.0'\ntags:\n  - a\n  - b\nlast: x\n"
    assert parse_yaml(text) == {
        "metadata": {"author": "me", "version": "1.0"},
        "tags": ["a", "b"],
        "last": "x",
    }


def test_a_list_may_sit_at_its_keys_indentation() -> None:
    assert parse_yaml("tags:\n- a\n- b\nname: x\n") == {"tags": ["a", "b"], "name": "x"}


def test_literal_and_folded_block_scalars_with_chomping() -> None:
    text = "a: |\n  one\n  two\nb: >\n  one\n  two\n\n  three\nc: |-\n  x\nd: >-\n  y\n  z\n"
    assert parse_yaml(text) == {"a": "one\ntwo\n", "b": "one two\nthree\n", "c": "x", "d": "y z"}


def test_a_kept_block_scalar_keeps_its_trailing_blank_lines() -> None:
    assert parse_yaml("a: |+\n  x\n\nb: 1\n") == {"a": "x\n\n", "b": 1}


def test_quoted_keys() -> None:
    assert parse_yaml("\"a b\": 1\n'c': 2\n") == {"a b": 1, "c": 2}


@pytest.mark.parametrize(
    ("yaml", "says"),
    [
        ("k: yes", "YAML 1.1"),
        ("k: off", "YAML 1.1"),
        ("k: 012", "YAML 1.1"),
        ("k: 1_000", "YAML 1.1"),
        ("k: 2024-01-01", "YAML 1.1"),
        ("k: a: b", "': '"),
        ("k: .inf", "JSON number"),
        ("k: 1\nk: 2", "duplicate key"),
        ("k: {a: 1}", "unsupported"),
        ("k: &anchor x", "unsupported"),
        ("k: 'unterminated", "end on its own line"),
        ('k: "bad \\q"', "invalid escape"),
        ("k: [a, [b]]", "flow lists"),
        ("k:\n  - - nested", "unsupported"),
        ("k:\n  -\n  - a", "nested list"),
        ("k:\n  - a: 1", "mappings inside lists"),
        ("k: 1\n   oops: 2", "indentation"),
        ("  k: 1", "left margin"),
        ("k:\n\t- a", "tabs"),
        ("just text", "key: value"),
        ("k: >\n  a\n    more\n", "folded"),
    ],
)
def test_what_the_subset_does_not_cover_is_refused_naming_the_line(yaml: str, says: str) -> None:
    with pytest.raises(FrontmatterError, match=r"line [0-9]+") as caught:
        parse_yaml(yaml + "\n")
    assert says in str(caught.value)


def test_the_frontmatter_must_be_a_mapping_of_json_values() -> None:
    assert parse_frontmatter("---\n---\n") == {}
    with pytest.raises(FrontmatterError):
        parse_frontmatter("---\n- a\n---\n")


def test_agrees_with_pyyaml_on_the_subset() -> None:
    yaml = pytest.importorskip("yaml")
    text = (
        "name: pdf-processing\ndescription: >\n  Extract text,\n  fill forms.\nlicense: Apache-2.0\n"
        "metadata:\n  author: me\n  version: \"1.0\"\ntags: [a, 'b', 3]\nlist:\n  - x\n  - 2.5\nflag: true\n"
        "note: |\n  line one\n  line two\n"
    )
    assert parse_yaml(text) == yaml.safe_load(text)


OUTSIDE = "---\nname: a\ndescription: b\nextra: {x: 1}\n---\n"


def test_outside_the_subset_without_pyyaml_is_refused_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_frontmatter, "_pyyaml", lambda: None)
    with pytest.raises(FrontmatterError, match="install PyYAML"):
        parse_frontmatter(OUTSIDE)


def test_outside_the_subset_pyyaml_reads_it_and_the_result_must_be_json() -> None:
    pytest.importorskip("yaml")
    assert parse_frontmatter(OUTSIDE) == {"name": "a", "description": "b", "extra": {"x": 1}}
    with pytest.raises(FrontmatterError, match="not a JSON value"):
        parse_frontmatter("---\nname: a\nwhen: !!timestamp 2024-01-01\n---\n")
    with pytest.raises(FrontmatterError, match="not valid YAML"):
        parse_frontmatter("---\nname: a\nbad: [unclosed\n---\n")


def test_what_the_subset_refuses_outright_is_never_handed_to_pyyaml() -> None:
    with pytest.raises(FrontmatterError, match=r"YAML 1\.1"):
        parse_frontmatter("---\nname: a\nbeta: yes\n---\n")
    with pytest.raises(FrontmatterError, match="duplicate key"):
        parse_frontmatter("---\nname: a\nname: b\n---\n")
