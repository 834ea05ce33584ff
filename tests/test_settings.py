"""Settings: one coercer for every config section, and where each value comes from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repolens.errors import ConfigError, EmbedderError, RerankerError, UsageError
from repolens.models.embed_config import load_embed_config
from repolens.models.factory import EmbedConfig
from repolens.models.rerank import RerankConfig
from repolens.server.config import load_serve_config
from repolens.settings import CONFIG_FILE, Settings, coerce, load_settings


@pytest.mark.parametrize(
    ("value", "hint", "expected"),
    [
        ("yes", bool, True),
        ("Off", bool, False),
        (True, bool, True),
        ("12", int, 12),
        (12.0, int, 12),
        ("0.5", float, 0.5),
        (3, float, 3.0),
        ("text", str, "text"),
        (None, int | None, None),
        ("7", int | None, 7),
    ],
)
def test_coerce_converts_text_and_numbers(value: object, hint: object, expected: object) -> None:
    assert coerce("key", value, hint) == expected


@pytest.mark.parametrize(
    ("value", "hint", "kwargs", "message"),
    [
        ("maybe", bool, {}, "key must be true or false, got 'maybe'"),
        ("lots", int, {}, "key must be an integer, got 'lots'"),
        (2.5, int, {}, "key must be an integer, got 2.5"),
        (True, int, {}, "key must be an integer, got True"),
        (True, float, {}, "key must be a number, got True"),
        (5, str, {}, "key must be a string, got 5"),
        ("c", str, {"choices": ("a", "b")}, "key must be one of a, b, got 'c'"),
        (0, int, {"bounds": (1, 50)}, "key must be between 1 and 50, got 0"),
        (1.5, float, {"bounds": (0.0, 1.0)}, "key must be between 0 and 1, got 1.5"),
        (None, int, {}, "key must be an integer, got None"),
    ],
)
def test_coerce_refuses_in_one_line(value: object, hint: object, kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        coerce("key", value, hint, **kwargs)
    assert str(caught.value) == message


def test_every_section_words_its_errors_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """[repolens], [embed], [rerank] and [serve] go through the one coercer:
    the same wording, each with its own error class and source."""
    (tmp_path / CONFIG_FILE).write_text("top_k = 5.5\n[serve]\nwatch = 'perhaps'\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    assert str(caught.value) == f"{tmp_path / CONFIG_FILE}: top_k must be an integer, got 5.5"
    monkeypatch.setenv("REPOLENS_TOP_K", "many")
    with pytest.raises(ConfigError, match=r"^environment: REPOLENS_TOP_K must be an integer, got 'many'$"):
        load_settings(None)
    monkeypatch.delenv("REPOLENS_TOP_K")
    # a call's own argument out of bounds is a usage error (exit 2), as every other one is
    with pytest.raises(UsageError, match=r"^top_k must be between 1 and 50, got 0$"):
        load_settings(None, {"top_k": 0})
    with pytest.raises(EmbedderError, match=r"^embed.threads must be an integer, got 'two'$"):
        EmbedConfig.from_mapping({"threads": "two"})
    with pytest.raises(RerankerError, match=r"^rerank.weight must be a number, got 'heavy'$"):
        RerankConfig.from_mapping({"weight": "heavy"})
    with pytest.raises(
        ConfigError, match=r"^\S+\.repolens\.toml: watch must be true or false, got 'perhaps'$"
    ):
        load_serve_config(config_file=tmp_path / CONFIG_FILE, read_token=False, env={})


def test_a_section_reads_the_file_then_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / CONFIG_FILE).write_text("[embed]\nprovider = 'fake'\ndim = 64\n")
    assert load_embed_config(tmp_path) == EmbedConfig(provider="fake", dim=64)
    monkeypatch.setenv("REPOLENS_EMBED_DIM", "32")
    assert load_embed_config(tmp_path) == EmbedConfig(provider="fake", dim=32)
    (tmp_path / CONFIG_FILE).write_text("embed = 3\n")
    with pytest.raises(ConfigError, match=r"^\.repolens\.toml: \[embed\] must be a table$"):
        load_embed_config(tmp_path)


def test_languages_take_names_and_aliases_from_the_file_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REPOLENS_LANGUAGES", raising=False)
    assert load_settings(tmp_path).languages == ()  # every language
    (tmp_path / CONFIG_FILE).write_text('languages = ["Py", "golang", "go"]\n')
    assert load_settings(tmp_path).languages == ("go", "python")
    monkeypatch.setenv("REPOLENS_LANGUAGES", "rs, typescript,")
    assert load_settings(tmp_path).languages == ("rust", "typescript")
    monkeypatch.setenv("REPOLENS_LANGUAGES", "")
    assert load_settings(tmp_path).languages == ()


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            'languages = ["python", "cobol"]',
            "{file}: languages: unknown language 'cobol': use one of asciidoc, ",
        ),
        ("languages = [1]", "{file}: languages must be a list of strings, got [1]"),
        ("languages = true", "{file}: languages must be a list of strings, got True"),
    ],
)
def test_an_unknown_language_is_refused_with_the_list(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / CONFIG_FILE).write_text(toml + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    text = str(caught.value)
    assert text.startswith(message.format(file=tmp_path / CONFIG_FILE)) and "\n" not in text
    if "cobol" in toml:
        assert text.endswith(
            "zig (or py, python3, js, node, ts, rs, golang, c++, cs, c#, rb, kt, sh, shell, "
            "md, yml, objective-c, terraform)"
        )


def test_the_chunkers_own_default_is_the_settings_one():
    """chunking cannot import settings (it sits below it), so its default for
    callers that name none is a constant of its own: it must not drift."""
    from repolens.chunking.dispatch import DEFAULT_MERGE_LINES

    assert Settings().chunk_merge_lines == DEFAULT_MERGE_LINES


def test_a_misspelled_table_of_a_server_config_is_refused(tmp_path: Path) -> None:
    """``[rootz]`` was ignored: the server said it had no repository to serve."""
    config = tmp_path / "server.toml"
    config.write_text(f'[rootz]\napp = "{tmp_path}"\n')
    with pytest.raises(ConfigError) as caught:
        load_serve_config(config_file=config, read_token=False, env={})
    assert str(caught.value) == (
        f"{config}: unknown table [rootz]; known: embed, registry, repolens, rerank, roots, serve, store"
    )


@pytest.mark.parametrize(
    ("toml", "problem"),
    [
        ('[embed]\nprovidr = "local"', "unknown setting embed.providr; valid: "),
        ("[rerank]\nbogus = 1", "unknown setting rerank.bogus; valid: "),
        ("[repolens.embed]\nthread = 2", "unknown setting embed.thread"),
        ('embed = "local"', "[embed] must be a table"),
    ],
)
def test_a_stage_table_is_checked_with_the_rest_of_the_file(tmp_path: Path, toml: str, problem: str) -> None:
    """[embed] and [rerank] were read only when their stage ran: a misspelt
    key passed every command that did not embed or rerank, while the same
    typo at the top was refused at once."""
    (tmp_path / CONFIG_FILE).write_text(toml + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    text = str(caught.value)
    assert text.startswith(f"{tmp_path / CONFIG_FILE}: ") and problem in text and "\n" not in text
    (tmp_path / CONFIG_FILE).write_text('[embed]\nprovider = "local"\n[rerank]\ntop_n = 10\n')
    assert load_settings(tmp_path).top_k  # a valid table is no error


@pytest.mark.parametrize(
    ("toml", "problem"),
    [
        (
            '[embed]\nprovider = "onxx"',
            "embed.provider must be one of onnx, local, openai, fake, none, got 'onxx'",
        ),
        ('[embed]\nbatch_size = "lots"', "embed.batch_size must be an integer, got 'lots'"),
        (
            '[embed]\nfamily = "bert-ish"',
            "embed.family must be one of sentence-transformers, coderankembed, ",
        ),
        ('[embed]\npooling = "maen"', "embed.pooling must be one of mean, cls, last, auto, got 'maen'"),
        ('[rerank]\nprovider = "locl"', "rerank.provider must be one of none, local, got 'locl'"),
        ("[rerank]\ntop_n = 0", "rerank.top_n must be between 1 and 1000, got 0"),
        ('[repolens.rerank]\nweight = "heavy"', "rerank.weight must be a number, got 'heavy'"),
    ],
)
def test_a_stage_value_is_checked_when_the_file_is_read(tmp_path: Path, toml: str, problem: str) -> None:
    """QA: a value of [embed] or [rerank] was checked only when its stage
    ran: ``provider = "locl"`` let every search run on with a note ("rerank
    leg missing: ..."), an [embed] typo waited until vectors were turned
    on. Now the file's reading refuses it, in one line naming the key and
    what it takes, before a command does anything."""
    (tmp_path / CONFIG_FILE).write_text(toml + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / CONFIG_FILE}: {problem}")
    assert "\n" not in str(caught.value)
    index = subprocess.run(
        [sys.executable, "-m", "repolens", "index", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")},
    )
    assert (index.returncode, index.stdout) == (1, "")
    assert index.stderr == f"error: {caught.value}\n"
    assert not (tmp_path / ".repolens").exists()


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        (
            "REPOLENS_RERANK_PROVIDER",
            "locl",
            "REPOLENS_RERANK_PROVIDER must be one of none, local, got 'locl'",
        ),
        ("REPOLENS_RERANK_TOP_N", "0", "REPOLENS_RERANK_TOP_N must be between 1 and 1000, got 0"),
        ("REPOLENS_EMBED_BATCH_SIZE", "lots", "REPOLENS_EMBED_BATCH_SIZE must be an integer, got 'lots'"),
        ("REPOLENS_EMBED_POOLING", "maen", "REPOLENS_EMBED_POOLING must be one of mean, cls, last, auto"),
    ],
)
def test_a_stage_variable_is_checked_with_the_other_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, problem: str
) -> None:
    """QA: ``REPOLENS_EMBED_*`` and ``REPOLENS_RERANK_*`` were checked only
    when their stage ran, a bad one surfacing mid-search (or never, for a
    command that does not embed), while the same value in the file was
    refused at once. Now the settings' reading refuses it, in one line
    naming the variable and what it takes, before a command does anything."""
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    assert str(caught.value).startswith(f"environment: {problem}") and "\n" not in str(caught.value)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    index = subprocess.run(
        [sys.executable, "-m", "repolens", "index", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, variable: value},
    )
    assert (index.returncode, index.stdout) == (1, "")
    assert index.stderr == f"error: {caught.value}\n"
    assert not (tmp_path / ".repolens").exists()


def test_a_variable_beside_the_stage_keys_is_not_a_stage_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """``REPOLENS_EMBED_STYLE`` is the setting ``embed_style`` and
    ``REPOLENS_EMBED_API_KEY`` a key, not ``[embed]`` keys; a stage
    variable's value as its stage reads it passes."""
    monkeypatch.setenv("REPOLENS_EMBED_STYLE", "code")
    monkeypatch.setenv("REPOLENS_EMBED_API_KEY", "secret")
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", " Local ")
    monkeypatch.setenv("REPOLENS_RERANK_WEIGHT", "2")
    assert load_settings(None).embed_style == "code"


def test_a_stage_value_as_its_stage_reads_it_is_no_error(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text(
        '[embed]\nprovider = " Local "\nfamily = "BGE"\npooling = "cls"\ntimeout = 30\n'
        '[rerank]\nprovider = "LOCAL"\nweight = 2\nthreads = 0\n'
    )
    assert load_settings(tmp_path).top_k


def test_the_stage_keys_are_the_stages_own_fields() -> None:
    import typing

    from repolens.models.embed_config import EmbedConfig
    from repolens.models.local import PRESETS
    from repolens.models.onnx import POOLINGS
    from repolens.models.rerank_config import RerankConfig
    from repolens.settings import STAGE_CHOICES, STAGE_KEYS

    assert {
        "embed": typing.get_type_hints(EmbedConfig),
        "rerank": typing.get_type_hints(RerankConfig),
    } == STAGE_KEYS
    assert set(STAGE_CHOICES["embed.family"]) == set(PRESETS)
    assert STAGE_CHOICES["embed.pooling"] == (*POOLINGS, "auto")
