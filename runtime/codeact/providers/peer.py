"""Whose listener a provider reached: the token goes only to a hub of the provider's own user.

A provider finds the hub's loopback port in the status file. Once that hub is gone, any local user may bind the
port; so a provider connects first, then asks the kernel who owns the socket at the other end, and sends its
``Authorization`` header only when that is its own user. Linux lists every TCP socket with its owner's uid in
``/proc/net/tcp`` and ``/proc/net/tcp6`` (an accepted socket, or one still in the accept queue, carries its
listener's uid), so the check is of the connection itself, with no gap between checking and sending. Where there is
no ``/proc/net/tcp`` (macOS, Windows) the owner is unknown and the provider relies on the status file alone (the hub
marks it stopped before it closes its port): see docs/providers.md.
"""
from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

PROC_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


class ForeignListener(ConnectionRefusedError):
    """The listener at the hub's address is not the provider's own user's (or its owner cannot be told)."""


def connect_own(host: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to ``host:port`` whose listening end belongs to this user (checked where the system tells:
    Linux); :class:`ForeignListener` when it belongs to another user or is missing from the kernel's tables."""
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        owner = peer_uid(sock)
        if owner is not None and owner != os.getuid():
            raise ForeignListener(f"the listener on {host}:{port} belongs to uid {owner}, not to you: the CodeAct "
                                  "hub that was there has stopped; the token is not sent")
    except BaseException:
        sock.close()
        raise
    return sock


def peer_uid(sock: socket.socket) -> int | None:
    """The uid owning the other end of connected ``sock``; None where the system keeps no such table."""
    tables = [path for path in PROC_TABLES if path.exists()] if hasattr(os, "getuid") else []
    if not tables:
        return None
    local, remote = sock.getsockname(), sock.getpeername()
    wanted = {(_hex(remote), _hex(local))}  # the other end: its local address is our remote one
    for path in tables:
        for line in path.read_text(encoding="ascii", errors="replace").splitlines()[1:]:
            fields = line.split()
            if len(fields) > 7 and (fields[1], fields[2]) in wanted:
                return int(fields[7])
    raise ForeignListener(f"the listener on {remote[0]}:{remote[1]} is in none of the kernel's socket tables "
                          "(another network namespace?): its owner cannot be told; the token is not sent")


def _hex(address: tuple[object, ...]) -> str:
    """``address`` as /proc/net/tcp{,6} writes it: the address's 32-bit words in host order, then the port."""
    host, port = str(address[0]), int(str(address[1]))
    if ":" in host:
        packed = socket.inet_pton(socket.AF_INET6, host.split("%", 1)[0])
        words = "".join(f"{struct.unpack('=I', packed[i:i + 4])[0]:08X}" for i in range(0, 16, 4))
        return f"{words}:{port:04X}"
    return f"{struct.unpack('=I', socket.inet_aton(host))[0]:08X}:{port:04X}"


__all__ = ["ForeignListener", "connect_own", "peer_uid"]
