"""The memory archive (entries, their text and vector indexes, search, the embedding backlog) and the agent memory beside it: knowledge, episodes, patterns, artifacts, working memory."""
