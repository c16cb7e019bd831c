"""One run: the runner, its limits and output, the stubs and hints the model sees, the stamped settings, the workspace
boundary (policy) and the secret check."""
