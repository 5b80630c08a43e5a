"""Integration tests of the sources against loopback servers: fakes, dripping and TLS."""
