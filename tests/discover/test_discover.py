"""File discovery: git and walk modes, ignore layers, secrets, symlinks, content filters, messages."""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from repolens.discover import (
    DECODED_WITH_REPLACEMENT,
    Discovery,
    LoadedText,
    SkipReason,
    discover,
    format_bytes,
    load_text,
    nothing_to_index,
    nothing_to_index_error,
)
from repolens.discover.noise import NOISE_RULES
from repolens.errors import ConfigError, NothingToIndexError, RootError, UsageError

# The fixtures ``git`` and ``write_tree`` come from conftest.py.
Git = Callable[..., str]
WriteTree = Callable[[Path, Mapping[str, str | bytes]], None]


def paths(discovery: Discovery) -> list[str]:
    return [f.path for f in discovery.files]


@pytest.fixture(params=["git", "walk"])
def any_root(request: pytest.FixtureRequest, git_repo: Path, plain_dir: Path) -> tuple[Path, str]:
    """The same test in a git work tree (untracked files) and in a plain directory."""
    return (git_repo, "git") if request.param == "git" else (plain_dir, "walk")


# --- git mode ---------------------------------------------------------------------------


def test_git_mode_lists_tracked_and_untracked_files_but_not_ignored_ones(
    git_repo: Path, git: Git, write_tree: WriteTree
) -> None:
    write_tree(git_repo, {".gitignore": "*.out\n", "tracked.py": "x = 1\n"})
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "init")
    write_tree(git_repo, {"untracked.py": "y = 2\n", "result.out": "junk\n"})

    found = discover(git_repo)

    assert found.mode == "git"
    assert paths(found) == [".gitignore", "tracked.py", "untracked.py"]
    tracked = found.files[1]
    assert tracked.abs_path == git_repo / "tracked.py"
    assert tracked.size == 6
    assert tracked.mtime_ns == (git_repo / "tracked.py").stat().st_mtime_ns


def test_git_mode_honours_nested_gitignore(git_repo: Path, write_tree: WriteTree) -> None:
    write_tree(
        git_repo,
        {
            "pkg/.gitignore": "*.gen.py\n",
            "pkg/a.gen.py": "x\n",
            "pkg/a.py": "x\n",
            "b.gen.py": "x\n",  # the nested file does not reach its parent
        },
    )
    assert paths(discover(git_repo)) == ["b.gen.py", "pkg/.gitignore", "pkg/a.py"]


def test_git_mode_honours_info_exclude(git_repo: Path, write_tree: WriteTree) -> None:
    write_tree(git_repo, {"notes.txt": "mine\n", "app.py": "x\n"})
    (git_repo / ".git" / "info" / "exclude").write_text("notes.txt\n", encoding="utf-8")
    assert paths(discover(git_repo)) == ["app.py"]
    # The walker reads .git/info/exclude too when asked to walk a work tree.
    assert paths(discover(git_repo, mode="walk")) == ["app.py"]


def test_root_inside_a_work_tree_lists_paths_relative_to_that_root(
    git_repo: Path, git: Git, write_tree: WriteTree
) -> None:
    write_tree(
        git_repo,
        {
            ".gitignore": "local_*.py\n",
            "sub/pkg/a.py": "a\n",
            "sub/local_b.py": "ignored by the parent .gitignore\n",
            "sub/.repolensignore": "skip_me.py\n",
            "sub/skip_me.py": "x\n",
            "other/c.py": "c\n",
        },
    )
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "init")

    found = discover(git_repo / "sub")

    assert found.mode == "git"
    assert found.root == (git_repo / "sub").resolve()
    assert paths(found) == [".repolensignore", "pkg/a.py"]
    assert found.skipped == Counter({"repolensignore": 1})


def test_deleted_tracked_file_is_counted_missing_and_not_listed(
    git_repo: Path, git: Git, write_tree: WriteTree
) -> None:
    write_tree(git_repo, {"a.py": "a\n", "gone.py": "b\n", "dir/gone2.py": "c\n"})
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "init")
    (git_repo / "gone.py").unlink()
    (git_repo / "dir" / "gone2.py").unlink()
    (git_repo / "dir").rmdir()

    found = discover(git_repo)

    assert paths(found) == ["a.py"]
    assert found.skipped == Counter({"missing": 2})


def test_submodules_and_nested_repositories_are_skipped(
    tmp_path: Path, git_repo: Path, git: Git, write_tree: WriteTree
) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    write_tree(lib, {"lib.py": "x\n"})
    git(lib, "add", "-A")
    git(lib, "commit", "-q", "-m", "lib")
    write_tree(git_repo, {"main.py": "x\n"})
    git(git_repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "libsub")
    nested = git_repo / "nested"
    nested.mkdir()
    git(nested, "init", "-q")
    write_tree(nested, {"inner.py": "x\n"})

    found = discover(git_repo)

    assert paths(found) == [".gitmodules", "main.py"]
    assert found.skipped == Counter({"submodule": 2})


def test_plain_directory_falls_back_to_the_walker(plain_dir: Path, write_tree: WriteTree) -> None:
    write_tree(plain_dir, {"a.py": "x\n"})
    found = discover(plain_dir)
    assert found.mode == "walk"
    assert paths(found) == ["a.py"]


def test_git_mode_outside_a_work_tree_is_a_usage_error(plain_dir: Path) -> None:
    with pytest.raises(UsageError, match="not inside a git work tree"):
        discover(plain_dir, mode="git")


# --- gitignore semantics, walker and git alike --------------------------------------------

GITIGNORE_TREE: dict[str, str] = {
    ".gitignore": "*.out\n!keep.out\n/build-out/\ntmp/\ndocs/*.txt\n!docs/readme.txt\ncache\n",
    "app.py": "x\n",
    "x.out": "x\n",
    "keep.out": "x\n",
    "build-out/o.py": "anchored: only at the top\n",
    "sub/build-out/o.py": "x\n",
    "tmp/t.py": "x\n",
    "a/tmp/t.py": "dir-only pattern, any depth\n",
    "c/tmp": "a file named tmp is not matched by tmp/\n",
    "docs/a.txt": "x\n",
    "docs/readme.txt": "x\n",
    "docs/deep/b.txt": "docs/*.txt does not cross a slash\n",
    "cache/x.py": "x\n",
    "a/.gitignore": "*.gen.py\n!important.gen.py\n/local.py\n",
    "a/m.gen.py": "x\n",
    "a/important.gen.py": "x\n",
    "a/local.py": "x\n",
    "a/b/local.py": "anchored to a/, not a/b/\n",
    "a/b/.gitignore": "!*.out\n",
    "a/b/y.out": "the deeper file re-includes *.out\n",
    "a/b/z.py": "x\n",
}
GITIGNORE_TREE_EXPECTED = [
    ".gitignore",
    "a/.gitignore",
    "a/b/.gitignore",
    "a/b/local.py",
    "a/b/y.out",
    "a/b/z.py",
    "a/important.gen.py",
    "app.py",
    "c/tmp",
    "docs/deep/b.txt",
    "docs/readme.txt",
    "keep.out",
    "sub/build-out/o.py",
]


def test_walker_applies_nested_gitignore_with_negation_anchors_and_dir_only_patterns(
    plain_dir: Path, write_tree: WriteTree
) -> None:
    write_tree(plain_dir, GITIGNORE_TREE)
    found = discover(plain_dir)
    assert found.mode == "walk"
    assert paths(found) == GITIGNORE_TREE_EXPECTED


def test_git_mode_gives_the_same_list_for_the_gitignore_tree(git_repo: Path, write_tree: WriteTree) -> None:
    write_tree(git_repo, GITIGNORE_TREE)
    assert paths(discover(git_repo)) == GITIGNORE_TREE_EXPECTED


def test_an_ignore_file_starting_with_a_byte_order_mark_keeps_its_first_pattern(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    """git skips a UTF-8 BOM; read as text, it made the first pattern
    ``\ufeffprivate.py``, which matches nothing."""
    root, _ = any_root
    write_tree(root, {"private.py": "x\n", "draft.py": "x\n", "a.py": "x\n"})
    (root / ".gitignore").write_bytes(b"\xef\xbb\xbfprivate.py\n")
    (root / ".repolensignore").write_bytes(b"\xef\xbb\xbfdraft.py\n")
    assert paths(discover(root)) == [".gitignore", ".repolensignore", "a.py"]


def test_a_folder_the_walker_cannot_open_is_counted_not_a_crash(plain_dir: Path) -> None:
    """A path longer than PATH_MAX (scandir: ENAMETOOLONG) ended discovery
    with "unexpected OSError ... (a bug)", exit 70; git mode lists it."""
    (plain_dir / "top.py").write_text("x\n")
    fd = os.open(plain_dir, os.O_RDONLY)
    try:
        for _ in range(21):  # 21 folders of 200 characters: over 4,096 from the root
            os.mkdir("d" * 200, dir_fd=fd)
            inner = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        leaf = os.open("leaf.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
        os.write(leaf, b"x = 1\n")
        os.close(leaf)
    finally:
        os.close(fd)
    found = discover(plain_dir)
    assert paths(found) == ["top.py"]
    assert found.skipped == Counter({"unreadable": 1})


def test_walker_does_not_descend_into_ignored_directories(plain_dir: Path, write_tree: WriteTree) -> None:
    write_tree(
        plain_dir, {".gitignore": "big/\n", "a.py": "x\n", **{f"big/f{i}.py": "x\n" for i in range(5)}}
    )
    found = discover(plain_dir)
    assert paths(found) == [".gitignore", "a.py"]
    assert found.skipped == Counter({"gitignored": 1})  # the folder, once


_NAMES = ["a", "b", "gen", "tmp", "docs", "keep"]
_EXTS = [".py", ".out", ".md", ".txt"]
_PATTERNS = [
    "*.out",
    "!keep.out",
    "tmp/",
    "/a.py",
    "gen/",
    "docs/*.md",
    "!docs/keep.md",
    "b",
    "**/gen/*.py",
    "*.txt",
    "!keep.txt",
    "a/*",
    "!a/keep.py",
    "# comment",
    # a folder as git judges it: by the last pattern matching it, not its files
    "*",
    "!*/",
    "!*.py",
    "gen/**",
    "!gen/docs/",
    "!gen/docs/**",
    "!tmp/",
    "docs/",
]


def _random_tree(rng: random.Random) -> dict[str, str]:
    tree: dict[str, str] = {}
    for _ in range(40):
        depth = rng.randint(0, 3)
        parts = [rng.choice(_NAMES) for _ in range(depth)]
        name = rng.choice(_NAMES) + rng.choice(_EXTS)
        tree["/".join([*parts, name])] = "x\n"
    for _ in range(3):
        depth = rng.randint(0, 2)
        folder = "/".join(rng.choice(_NAMES) for _ in range(depth))
        lines = rng.sample(_PATTERNS, rng.randint(1, 5))
        tree[f"{folder}/.gitignore" if folder else ".gitignore"] = "\n".join(lines) + "\n"
    # a file and a folder cannot share a path: keep the first one written
    for path in sorted(tree):
        if any(p in tree for p in _prefixes(path)):
            del tree[path]
    return tree


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


@pytest.mark.parametrize("seed", range(int(os.environ.get("REPOLENS_TREE_SEEDS", "24"))))
def test_walker_and_git_agree_on_random_trees(seed: int, git_repo: Path, write_tree: WriteTree) -> None:
    write_tree(git_repo, _random_tree(random.Random(seed)))
    assert paths(discover(git_repo, mode="walk")) == paths(discover(git_repo, mode="git"))


# --- built-in noise rules -------------------------------------------------------------------


def _noise_sample(pattern: str) -> str:
    """A path that ``pattern`` should exclude."""
    if pattern.endswith("/"):
        return pattern[:-1].replace("*", "pkg") + "/inner.py"
    return pattern.replace("*", "x")


@pytest.mark.parametrize("family", sorted(NOISE_RULES))
def test_each_builtin_noise_rule_excludes_its_files(
    family: str, any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, mode = any_root
    patterns = NOISE_RULES[family]
    write_tree(root, {"keep.py": "x\n", **{_noise_sample(p): "noise\n" for p in patterns}})

    found = discover(root)

    assert found.mode == mode
    assert paths(found) == ["keep.py"]
    assert found.skipped == Counter({"ignored": len(patterns)})


def test_noise_rules_apply_at_any_depth(any_root: tuple[Path, str], write_tree: WriteTree) -> None:
    root, _ = any_root
    write_tree(
        root,
        {
            "a/b/node_modules/pkg/index.js": "x\n",
            "web/static/app.min.js": "x\n",
            "src/deep/__pycache__/m.pyc": "x\n",
            "src/ok.py": "x\n",
        },
    )
    assert paths(discover(root)) == ["src/ok.py"]


def test_noise_rules_leave_similar_source_names_alone(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    names = [
        "build.py",
        "builder/x.py",
        "distance.py",
        "map.py",
        "minimal.js",
        "rebuild/x.py",
        "src/coverage.py",
        "src/target.rs",
        "vendored.py",
        "yarn.lock.md",
    ]
    write_tree(root, dict.fromkeys(names, "x\n"))
    assert paths(discover(root)) == names


def test_a_build_folder_below_the_top_and_beside_no_manifest_is_source(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    """clap keeps its core in ``src/build/``, pip in ``operations/build/``."""
    root, _ = any_root
    kept = [
        "crates/a/Cargo.toml",
        "packages/web/package.json",
        "src/build/arg.rs",
        "src/pip/operations/build/wheel.py",
    ]
    skipped = ["build/out.js", "dist/app.js", "crates/a/target/debug/x.rs", "packages/web/dist/index.js"]
    write_tree(root, dict.fromkeys([*kept, *skipped], "x\n"))
    found = discover(root)
    assert paths(found) == sorted(kept)
    assert found.skipped == Counter({"ignored": len(skipped)})


# --- secrets --------------------------------------------------------------------------------

SECRET_NAMES = [
    ".env",
    ".env.local",
    "config/.env.production",
    "id_rsa",
    "id_rsa_old",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    "deploy/server.key",
    "cert.pem",
    "store.p12",
    "store.pfx",
    "android/release.keystore",
    "credentials.json",
    "client_secret_123.json",
    "service-account-prod.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.json",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
    "infra/terraform.tfstate",
]
KEPT_NEAR_SECRETS = [
    ".env.example",
    ".env.local.example",
    ".env.sample",
    ".env.template",
    "credentials.py",
    "environment.py",
    "id_rsa.pub",
    "keys.py",
    "secrets.py",
]


def test_secret_files_are_never_indexed_but_templates_are(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    write_tree(root, dict.fromkeys(SECRET_NAMES + KEPT_NEAR_SECRETS, "TOKEN=abc\n"))
    found = discover(root)
    assert paths(found) == sorted(KEPT_NEAR_SECRETS)
    assert found.skipped == Counter({"secret": len(SECRET_NAMES)})


def test_secret_folders_are_skipped_whole(plain_dir: Path, write_tree: WriteTree) -> None:
    write_tree(plain_dir, {".ssh/config": "Host x\n", ".ssh/known_hosts": "x\n", "a.py": "x\n"})
    found = discover(plain_dir)
    assert paths(found) == ["a.py"]
    assert found.skipped == Counter({"secret": 1})


def test_repolensignore_cannot_resurrect_a_secret(any_root: tuple[Path, str], write_tree: WriteTree) -> None:
    root, _ = any_root
    write_tree(
        root,
        {
            ".repolensignore": "!.env\n!*.pem\n!.ssh/\n!.ssh/config\n",
            ".env": "TOKEN=abc\n",
            "cert.pem": "x\n",
            ".ssh/config": "x\n",
            "a.py": "x\n",
        },
    )
    found = discover(root)
    assert paths(found) == [".repolensignore", "a.py"]
    assert found.skipped == Counter({"secret": 3})


# --- .repolensignore ------------------------------------------------------------------------


def test_repolensignore_adds_exclusions(any_root: tuple[Path, str], write_tree: WriteTree) -> None:
    root, _ = any_root
    write_tree(
        root,
        {
            ".repolensignore": "# generated code\ngenerated/\n*.snap\n/top_only.py\n",
            "generated/g.py": "x\n",
            "tests/__snapshots__/a.snap": "x\n",
            "top_only.py": "x\n",
            "pkg/top_only.py": "x\n",
            "app.py": "x\n",
        },
    )
    found = discover(root)
    assert paths(found) == [".repolensignore", "app.py", "pkg/top_only.py"]
    assert found.skipped == Counter({"repolensignore": 3})


def test_repolensignore_reincludes_a_builtin_directory(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    write_tree(
        root,
        {
            ".repolensignore": "!dist/\n",
            "dist/app.js": "x\n",
            "dist/sub/util.js": "x\n",
            # A file rule still applies inside: `!dist/` re-includes the folder, not minified files.
            "dist/app.min.js": "x\n",
            # A `!` line without a slash does not reach into another excluded folder.
            "node_modules/pkg/dist/index.js": "x\n",
        },
    )
    assert paths(discover(root)) == [".repolensignore", "dist/app.js", "dist/sub/util.js"]


def test_repolensignore_reincludes_one_file_inside_a_builtin_directory(
    plain_dir: Path, write_tree: WriteTree
) -> None:
    write_tree(
        plain_dir,
        {
            ".repolensignore": "!vendor/keep.js\n",
            "vendor/keep.js": "x\n",
            "vendor/other.js": "x\n",
            "vendor/sub/deep.js": "x\n",
            "node_modules/pkg/index.js": "x\n",
        },
    )
    found = discover(plain_dir)
    assert paths(found) == [".repolensignore", "vendor/keep.js"]
    # vendor/other.js one by one; vendor/sub/ and node_modules/ skipped whole
    assert found.skipped == Counter({"ignored": 3})


def test_repolensignore_last_match_wins(any_root: tuple[Path, str], write_tree: WriteTree) -> None:
    root, _ = any_root
    files = {"dist/app.js": "x\n", "dist/generated/g.js": "x\n"}
    write_tree(root, {**files, ".repolensignore": "!dist/\ndist/generated/\n"})
    found = discover(root)
    assert paths(found) == [".repolensignore", "dist/app.js"]
    assert found.skipped == Counter({"repolensignore": 1})

    (root / ".repolensignore").write_text("dist/generated/\n!dist/\n", encoding="utf-8")
    assert paths(discover(root)) == [".repolensignore", "dist/app.js", "dist/generated/g.js"]


def test_repolensignore_cannot_reinclude_a_gitignored_file(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    write_tree(
        root,
        {".gitignore": "out/\n", ".repolensignore": "!out/\n!out/a.py\n", "out/a.py": "x\n", "b.py": "x\n"},
    )
    assert paths(discover(root)) == [".gitignore", ".repolensignore", "b.py"]


def test_invalid_repolensignore_pattern_is_a_config_error_naming_the_line(
    plain_dir: Path, write_tree: WriteTree
) -> None:
    write_tree(plain_dir, {".repolensignore": "ok.py\n!\n", "a.py": "x\n"})
    with pytest.raises(ConfigError, match=r"\.repolensignore:2: '!' is not a valid gitignore pattern"):
        discover(plain_dir)


def test_index_folders_are_never_listed_nor_counted(
    tmp_path: Path, any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    write_tree(
        root,
        {
            ".repolensignore": "!.repolens/\n!idx/\n",
            ".repolens/current/meta.json": "x\n",
            "idx/gen-000001/meta.json": "x\n",
            "a.py": "x\n",
        },
    )
    found = discover(root, index_dir=root / "idx")
    assert paths(found) == [".repolensignore", "a.py"]
    assert found.skipped == Counter()
    # An index folder outside the root changes nothing inside it.
    assert "idx/gen-000001/meta.json" in paths(discover(root, index_dir=tmp_path / "elsewhere"))


# --- size and emptiness (stat-based) --------------------------------------------------------


def test_files_over_the_size_cap_are_counted_too_large(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    write_tree(root, {"fits.txt": "x" * 10, "big.txt": "x" * 11})
    found = discover(root, max_file_bytes=10)
    assert paths(found) == ["fits.txt"]
    assert found.skipped == Counter({"too_large": 1})


def test_empty_files_are_counted_empty(any_root: tuple[Path, str], write_tree: WriteTree) -> None:
    root, _ = any_root
    write_tree(root, {"__init__.py": "", "a.py": "x\n"})
    found = discover(root)
    assert paths(found) == ["a.py"]
    assert found.skipped == Counter({"empty": 1})


def test_max_file_bytes_below_one_is_a_usage_error(plain_dir: Path) -> None:
    with pytest.raises(UsageError, match="max_file_bytes must be at least 1"):
        discover(plain_dir, max_file_bytes=0)


def test_unknown_mode_is_a_usage_error(plain_dir: Path) -> None:
    with pytest.raises(UsageError, match="discovery mode must be one of auto, git, walk"):
        discover(plain_dir, mode="fast")


def test_names_that_are_not_utf8_are_counted_bad_name(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    write_tree(root, {"a.py": "x\n"})
    with open(os.path.join(os.fsencode(root), b"bad\xff.py"), "wb") as fh:
        fh.write(b"x\n")
    (root / "new\nline.py").write_text("x\n")  # a line break: no reply could cite it on one line
    (root / "cr\rname.py").write_text("x\n")
    found = discover(root)
    assert paths(found) == ["a.py"]
    assert found.skipped == Counter({"bad_name": 3})


# --- content filters (load_text) -----------------------------------------------------------


def test_nul_byte_in_the_first_8_kib_means_binary(tmp_path: Path) -> None:
    path = tmp_path / "blob.dat"
    path.write_bytes(b"abc\0def")
    assert load_text(path) is SkipReason.BINARY
    path.write_bytes(b"a" * 8192 + b"\0")  # outside the sniffed window
    assert isinstance(load_text(path), LoadedText)


def test_invalid_utf8_is_decoded_with_replacement_and_flagged(tmp_path: Path) -> None:
    path = tmp_path / "latin1.py"
    path.write_bytes(b"name = 'caf\xe9'\n")
    assert load_text(path) == LoadedText("name = 'caf\ufffd'\n", b"name = 'caf\xe9'\n", replaced=True)
    path.write_bytes("name = 'café'\n".encode())
    assert load_text(path) == LoadedText("name = 'café'\n", "name = 'café'\n".encode(), replaced=False)


def test_bom_is_stripped_and_crlf_becomes_lf(tmp_path: Path) -> None:
    path = tmp_path / "win.py"
    raw = b"\xef\xbb\xbfa = 1\r\nb = 2\r\nc = 3"
    path.write_bytes(raw)
    loaded = load_text(path)
    assert loaded == LoadedText("a = 1\nb = 2\nc = 3", raw)  # data stays as read, for hashing
    assert isinstance(loaded, LoadedText)
    assert loaded.lines == 3


def test_lone_cr_is_not_a_line_break(tmp_path: Path) -> None:
    path = tmp_path / "cr.txt"
    path.write_bytes(b"progress\r50%\nnext\n")
    loaded = load_text(path)
    assert isinstance(loaded, LoadedText)
    assert loaded.text == "progress\r50%\nnext\n"
    assert loaded.lines == 2


@pytest.mark.parametrize("content", [b"", b"\xef\xbb\xbf", b"  \n\t\r\n"])
def test_empty_or_blank_content_is_empty(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "blank.py"
    path.write_bytes(content)
    assert load_text(path) is SkipReason.EMPTY


def test_file_grown_past_the_cap_since_discovery_is_too_large(tmp_path: Path) -> None:
    path = tmp_path / "grew.log"
    path.write_bytes(b"x" * 11)
    assert load_text(path, max_file_bytes=10) is SkipReason.TOO_LARGE
    assert isinstance(load_text(path, max_file_bytes=11), LoadedText)
    assert isinstance(load_text(path), LoadedText)  # no cap unless asked


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_file_holding_more_than_its_size_says_is_read_to_the_cap() -> None:
    """The size a file has when opened only sizes the first read: a file
    that holds more (one that grew since; /proc reports a size of 0) is
    read on, up to the cap."""
    path = Path("/proc/self/status")
    assert path.stat().st_size == 0
    loaded = load_text(path, max_file_bytes=1 << 20)
    assert isinstance(loaded, LoadedText)
    assert loaded.text.startswith("Name:")
    assert load_text(path, max_file_bytes=10) is SkipReason.TOO_LARGE


def test_file_deleted_since_discovery_is_missing(tmp_path: Path) -> None:
    assert load_text(tmp_path / "gone.py") is SkipReason.MISSING


# --- symlinks -------------------------------------------------------------------------------


def test_symlink_to_a_listed_file_is_not_indexed_twice(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    write_tree(root, {"real.py": "x\n"})
    (root / "alias.py").symlink_to("real.py")
    found = discover(root)
    assert paths(found) == ["real.py"]
    assert found.skipped == Counter({"symlink_duplicate": 1})


def test_symlink_to_an_unlisted_file_inside_the_root_is_indexed_once(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    write_tree(root, {"node_modules/pkg/index.js": "x\n"})
    (root / "a.js").symlink_to("node_modules/pkg/index.js")
    (root / "b.js").symlink_to("node_modules/pkg/index.js")
    found = discover(root)
    assert paths(found) == ["a.js"]
    assert found.files[0].size == 2
    assert found.skipped["symlink_duplicate"] == 1


def test_symlink_to_a_file_gitignore_or_repolensignore_keeps_out_is_skipped(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    """A link must not show what the ignore files hide: it was indexed, the
    ignored file's text with it. (A noise rule's file is indexed through a
    link, as above: the link is made on purpose.)"""
    root, _ = any_root
    write_tree(
        root,
        {
            ".gitignore": "config.local.py\nprivate/\n",
            ".repolensignore": "drafts/\n",
            "config.local.py": "PASSWORD = 'x'\n",
            "private/notes.py": "x\n",
            "drafts/plan.py": "x\n",
            "app.py": "x\n",
        },
    )
    (root / "config.py").symlink_to("config.local.py")
    (root / "notes.py").symlink_to("private/notes.py")
    (root / "plan.py").symlink_to("drafts/plan.py")
    found = discover(root)
    assert paths(found) == [".gitignore", ".repolensignore", "app.py"]
    assert found.skipped["repolensignore"] == 2  # drafts/ and the link to it
    assert (
        found.skipped["gitignored"] >= 2
    )  # the links (git lists no ignored file; the walker counts them too)


def test_symlink_pointing_outside_the_root_is_skipped(
    tmp_path: Path, any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, _ = any_root
    outside = tmp_path / "outside.py"
    outside.write_text("x\n", encoding="utf-8")
    write_tree(root, {"a.py": "x\n"})
    (root / "escape.py").symlink_to(outside)
    (root / "escape_dir").symlink_to(tmp_path, target_is_directory=True)
    found = discover(root)
    assert paths(found) == ["a.py"]
    assert found.skipped == Counter({"symlink_outside": 2})


def test_directory_symlink_is_not_descended(any_root: tuple[Path, str], write_tree: WriteTree) -> None:
    root, _ = any_root
    write_tree(root, {"pkg/a.py": "x\n"})
    (root / "pkg_alias").symlink_to("pkg", target_is_directory=True)
    found = discover(root)
    assert paths(found) == ["pkg/a.py"]
    assert found.skipped == Counter({"symlink_dir": 1})


def test_broken_symlink_is_counted(any_root: tuple[Path, str], write_tree: WriteTree) -> None:
    root, _ = any_root
    write_tree(root, {"a.py": "x\n"})
    (root / "dangling.py").symlink_to("nowhere.py")
    found = discover(root)
    assert paths(found) == ["a.py"]
    assert found.skipped == Counter({"symlink_broken": 1})


def test_symlink_to_a_secret_is_a_secret(plain_dir: Path, write_tree: WriteTree) -> None:
    write_tree(plain_dir, {".env": "TOKEN=abc\n", "a.py": "x\n"})
    (plain_dir / "settings.txt").symlink_to(".env")
    found = discover(plain_dir)
    assert paths(found) == ["a.py"]
    assert found.skipped == Counter({"secret": 2})


# --- root and "nothing to index" -------------------------------------------------------------


def test_missing_root_is_a_root_error(tmp_path: Path) -> None:
    with pytest.raises(RootError, match="does not exist"):
        discover(tmp_path / "nope")


def test_root_that_is_a_file_is_a_root_error(tmp_path: Path) -> None:
    file = tmp_path / "file.py"
    file.write_text("x\n", encoding="utf-8")
    with pytest.raises(RootError, match="is not a directory"):
        discover(file)


def test_empty_directory_message(plain_dir: Path) -> None:
    (plain_dir / ".git").mkdir()  # internal folders are not counted
    found = discover(plain_dir)
    assert str(nothing_to_index(found)) == f"nothing to index in {found.root}: the directory is empty"


def test_empty_git_repository_message(git_repo: Path) -> None:
    found = discover(git_repo)
    assert str(nothing_to_index(found)) == (
        f"nothing to index in {found.root}: git lists no files here "
        "(the directory is empty or everything in it is git-ignored)"
    )


def test_everything_ignored_message_points_at_repolensignore(plain_dir: Path, write_tree: WriteTree) -> None:
    write_tree(plain_dir, {"node_modules/a/index.js": "x\n", "logo.png": "x\n", "dist/app.js": "x\n"})
    found = discover(plain_dir)
    assert str(nothing_to_index(found)) == (
        f"nothing to index in {found.root}: all 3 paths matched the built-in noise rules "
        "(re-include with `!pattern` in .repolensignore)"
    )


def test_message_combines_discovery_and_content_skips(plain_dir: Path, write_tree: WriteTree) -> None:
    write_tree(plain_dir, {"big.txt": "x" * 20, "a.dat": b"\0\1", "b.dat": b"\0\2"})
    found = discover(plain_dir, max_file_bytes=10)
    content: Counter[str] = Counter()
    for source in found.files:  # what the indexer does while reading
        loaded = load_text(source.abs_path, max_file_bytes=found.max_file_bytes)
        assert isinstance(loaded, SkipReason)
        content[loaded] += 1
    content[DECODED_WITH_REPLACEMENT] += 0  # a note, never a reason

    error = nothing_to_index(found, content)

    assert isinstance(error, NothingToIndexError)
    assert str(error) == (
        f"nothing to index in {found.root}: none of 3 files is indexable: "
        "2 were binary, 1 was larger than 10 bytes (raise max_file_bytes)"
    )


@pytest.mark.parametrize(
    ("skipped", "expected"),
    [
        (
            Counter(binary=3, too_large=2),
            "none of 5 files is indexable: 3 were binary, 2 were larger than 1 MiB (raise max_file_bytes)",
        ),
        (Counter(empty=1), "the only file was empty"),
        (Counter(secret=2, decoded_with_replacement=4), "all 2 paths looked like secrets (never indexed)"),
        (
            Counter(repolensignore=4, gitignored=1),
            "none of 5 paths is indexable: 4 matched .repolensignore, 1 matched .gitignore",
        ),
        (Counter(missing=2), "all 2 files are tracked by git but missing on disk"),
        (
            Counter(symlink_outside=1, submodule=1),
            "none of 2 files is indexable: "
            "1 was a symlink pointing outside the root, 1 was a submodule or nested repository "
            "(index it separately)",
        ),
    ],
)
def test_nothing_to_index_message_names_every_reason(skipped: Counter[str], expected: str) -> None:
    error = nothing_to_index_error(Path("/x"), skipped)
    assert isinstance(error, NothingToIndexError)
    assert str(error) == f"nothing to index in /x: {expected}"


@pytest.mark.parametrize(
    ("n", "text"),
    [(1, "1 byte"), (10, "10 bytes"), (1536, "1.5 KiB"), (1_048_576, "1 MiB"), (1 << 30, "1 GiB")],
)
def test_format_bytes(n: int, text: str) -> None:
    assert format_bytes(n) == text


def test_files_are_sorted_by_path(any_root: tuple[Path, str], write_tree: WriteTree) -> None:
    root, _ = any_root
    write_tree(root, dict.fromkeys(["b/z.py", "a.py", "b/a.py", "B.py", "a/b/c.py"], "x\n"))
    found = discover(root)
    assert paths(found) == sorted(paths(found))
    assert len(found.files) == 5


def _names_near(patterns: tuple[str, ...]) -> set[str]:
    """Names each pattern matches or nearly matches: its own text with the
    globs filled in, the same with a prefix, suffix or case change."""
    names = set()
    for line in patterns:
        body = line.removeprefix("!").rstrip("/")
        for fill in ("", "x", "a.b", "min"):
            base = body.replace("*", fill).replace("?", "q")
            names.update({base, "x" + base, base + "x", base + ".py", base.upper(), "." + base})
    return {n for n in names if n and "/" not in n}


@pytest.mark.parametrize("which", ["noise", "secrets"])
def test_name_rules_give_the_verdict_of_the_whole_pattern_list(which: str) -> None:
    """NameRules compiles only the patterns that can match a name; its verdict
    must be pathspec's over the whole list, for files and folders alike, when
    asked again too (a verdict is remembered by name, apart for folders)."""
    from pathspec import GitIgnoreSpec

    from repolens.discover.noise import NOISE_PATTERNS, SECRET_RULES
    from repolens.discover.rules import NameRules

    patterns = NOISE_PATTERNS if which == "noise" else SECRET_RULES
    rules, whole = NameRules(patterns), GitIgnoreSpec.from_lines(patterns)
    names = _names_near(patterns) | {"main.py", "README.md", "a.min.js", "lib.so.1", "notes~", ".env.local"}
    for name in sorted(names):
        for is_dir in (False, True, False, True):
            path = name + "/" if is_dir else name
            assert rules.check(name, is_dir) == whole.check_file(path).include, (name, is_dir)


# --- the languages setting --------------------------------------------------------------


def test_languages_keep_the_files_of_those_languages_only(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    root, mode = any_root
    write_tree(root, {"a.py": "x = 1\n", "b.go": "package b\n", "docs/c.md": "# C\n", "d.txt": "d\n"})
    found = discover(root, mode=mode, languages=("go", "python"))
    assert paths(found) == ["a.py", "b.go"]
    assert found.skipped == Counter({"not_in_languages": 2})
    assert paths(discover(root, mode=mode)) == ["a.py", "b.go", "d.txt", "docs/c.md"]
    assert paths(discover(root, mode=mode, languages=("text",))) == ["d.txt"]


def test_a_header_named_h_is_kept_by_the_language_its_text_says(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    """A ``.h`` header is C by its name: a C++ one passed ``languages = ["c"]``
    and was indexed as cpp, and ``["cpp"]`` lost it. Each header is in
    exactly one of the two now, as the index reads it."""
    root, mode = any_root
    write_tree(
        root,
        {
            "widget.h": "class Widget {\npublic:\n  void draw();\n};\n",
            "point.h": "/* not Widget::draw */\nstruct point { int x; };\n",
            "a.cpp": "int a;\n",
            "b.c": "int b;\n",
        },
    )
    c = discover(root, mode=mode, languages=("c",))
    assert paths(c) == ["b.c", "point.h"]
    assert c.skipped == Counter({"not_in_languages": 2})
    cpp = discover(root, mode=mode, languages=("cpp",))
    assert paths(cpp) == ["a.cpp", "widget.h"]
    assert cpp.skipped == Counter({"not_in_languages": 2})
    both = discover(root, mode=mode, languages=("c", "cpp"))
    assert paths(both) == ["a.cpp", "b.c", "point.h", "widget.h"] and not both.skipped
    assert paths(discover(root, mode=mode, languages=("python",))) == []


def test_a_header_is_read_again_only_when_its_stat_moved(
    any_root: tuple[Path, str], write_tree: WriteTree
) -> None:
    """The watcher lists a repository again and again: a header whose size and mtime
    stayed is not read to tell C from C++ each time (here its text is made C++ behind
    the same size and mtime, so a read would show). An edited header is read again,
    and so is one modified so close to the listing that the stat cannot be trusted."""
    root, mode = any_root
    c_text, cpp_text = "struct point { int x, yy; };\n", "class Pt { public: int x; };\n"
    assert len(c_text) == len(cpp_text)
    write_tree(root, {"point.h": c_text, "b.c": "int b;\n"})
    header, old = root / "point.h", time.time_ns() - 3_600_000_000_000
    os.utime(header, ns=(old, old))
    assert paths(discover(root, mode=mode, languages=("c",))) == ["b.c", "point.h"]
    header.write_text(cpp_text)
    os.utime(header, ns=(old, old))
    assert paths(discover(root, mode=mode, languages=("c",))) == ["b.c", "point.h"]  # not read again
    os.utime(header, ns=(old + 1_000_000_000, old + 1_000_000_000))
    assert paths(discover(root, mode=mode, languages=("c",))) == ["b.c"]  # read again: C++ now
    recent = time.time_ns()  # modified just now: read at every listing until its mtime is old enough
    header.write_text(c_text)
    os.utime(header, ns=(recent, recent))
    assert paths(discover(root, mode=mode, languages=("c",))) == ["b.c", "point.h"]
    header.write_text(cpp_text)
    os.utime(header, ns=(recent, recent))
    assert paths(discover(root, mode=mode, languages=("c",))) == ["b.c"]


def test_nothing_in_the_languages_names_them(plain_dir: Path, write_tree: WriteTree) -> None:
    write_tree(plain_dir, {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    found = discover(plain_dir, languages=("rust",))
    assert str(nothing_to_index(found)) == (
        f"nothing to index in {plain_dir}: all 2 files were not in the languages setting (rust)"
    )
