"""Team memory: the secret scanner and guard, path safety, and sync with a team server."""
