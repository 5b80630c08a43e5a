"""The demo: a simulated GPU cluster whose fake upstreams speak the real APIs over loopback."""
