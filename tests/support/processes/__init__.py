"""Loopback fakes, process control and database checks shared by the reliability tests."""
