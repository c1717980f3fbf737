"""Real servers on loopback that stand in for outside services during tests."""
