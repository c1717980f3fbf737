"""The memories area: the memory files and MEMORY.md (store.py, behind `Engine.memories`), their
frontmatter and file format, the index and its lints, the folder scan; models.py holds what the
front ends render."""
