"""Tests of the client libraries against a live server."""
