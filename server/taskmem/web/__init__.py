"""The web view (`taskmem serve --http`): a browser UI over the server's own gRPC services."""
