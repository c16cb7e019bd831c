"""Enforcement: what the preToolUse hooks allow (:mod:`.spec`, data) and the hooks generated from it (:mod:`.render`)."""
