"""The storage port (storage.py, writer.py, the event log and caches every area shares), one folder per area of data, and the two engines (sqlite/, postgres/)."""
