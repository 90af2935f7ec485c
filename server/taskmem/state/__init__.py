"""StateService's pipelines: the parts that combine store reads, providers (model, embedder) and core decisions."""
