"""Live tool providers: running processes lend tools to CodeAct programs over a loopback WebSocket.

- :class:`~codeact.providers.hub.ProviderHub` — the endpoint the warm server runs (``websockets``' threaded server).
- :mod:`codeact.providers.protocol` — the wire format: typed messages, :func:`~codeact.providers.protocol.parse`,
  the frame builders and error codes (pure).
- :func:`~codeact.providers.state.open_state` — the token (file 0600) and status file kept across restarts.
- :class:`~codeact.providers.helper.Provider` — a provider in a few lines, for tests and users.

Importing this package imports neither ``websockets`` nor the hub; the modules do when used.
"""
from __future__ import annotations
