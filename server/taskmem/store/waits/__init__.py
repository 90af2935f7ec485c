"""Wait jobs and the claims that let one replica run each."""
