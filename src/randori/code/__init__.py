"""The code track: secure code generation measured with static analysis, sandboxed tests and
repair rounds. Entry point: `randori code` (`randori.cli.code.code_app`)."""
