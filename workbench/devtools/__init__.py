"""Tooling for tests, benchmarks and the sample projects, kept out of the engine: nothing in
`workbench.engine` imports it (an import contract in pyproject.toml says so)."""
