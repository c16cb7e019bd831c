"""Ctrl-C ends a run, however the process was started."""
import _signal


def honour_ctrl_c() -> None:
    """Handle SIGINT (as ``KeyboardInterrupt``) even where this process was started with it ignored.

    A shell without job control (a script, a CI job, an agent's non-interactive shell) starts each background
    command with SIGINT ignored, and Python keeps an inherited ``SIG_IGN``: the run would then go on to its time
    limit through the Ctrl-C or the cancel that was meant to stop it. Call it in the main thread of an entry point.
    """
    if _signal.getsignal(_signal.SIGINT) == _signal.SIG_IGN:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


__all__ = ["honour_ctrl_c"]
