"""Cost accounting of the server's model calls: the meter the model clients report to."""
