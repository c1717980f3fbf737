"""The differential harness: real Claude Code releases against the workbench (dev tooling).

Not part of the product or of `make test`: it downloads releases from npm. `make oracle` runs
it; `python -m oracle --help` lists what it can do. See docs/compatibility.md for its output.
"""
