"""Serving: the refresh schedule, the worker process, the lifecycle and the HTTP server."""
