"""The command line's parser is built from its registry, and sizes take units (advisor round 2)."""

from __future__ import annotations

import pytest

from python_ops.cli.arguments import COMMANDS, build_parser


def test_every_registered_command_parses_with_its_logging_flags() -> None:
    parser = build_parser()
    for command in COMMANDS:
        extra = ["t"] if command.name in ("health", "purge", "stats") else []
        args = parser.parse_args([command.name, *extra, "--verbose"])
        assert args.op == command.name
        assert args.verbose is True


@pytest.mark.parametrize(
    ("text", "expected"), [("2MB", 2_000_000), ("1GiB", 1 << 30), ("4096", 4096)]
)
def test_target_size_takes_a_size_as_the_config_key_does(text: str, expected: int) -> None:
    args = build_parser().parse_args(["optimize", "/t", "--target-size", text])
    assert args.target_size == expected


def test_a_bad_size_is_a_usage_error_naming_the_value(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["optimize", "/t", "--target-size", "lots"])
    assert exit_.value.code == 2
    assert "'lots': use bytes or a size like '1GiB'" in capsys.readouterr().err
