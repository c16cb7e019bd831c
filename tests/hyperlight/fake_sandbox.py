"""A stand-in for ``hyperlight_sandbox.Sandbox`` that runs the guest source in plain Python, in the child process.

It mimics what the real Python guest does (upstream's ``sandbox_executor.py``): one globals dict seeded with
``call_tool``; ``call_tool(name, **kwargs)`` sends the keyword arguments as JSON to the registered host function and
returns its JSON result (a host exception arrives as ``RuntimeError("Tool 'x' failed: ...")``); printed output is
collected and returned with stderr and an exit code. Tool arguments and results make a JSON round trip, as they do
across the VM boundary. Everything else the backend does (child process, pipe, proxies, guest driver, generated tool
functions, the parent's dispatch) is the real code.

Environment knobs: ``FAKE_SANDBOX_PID_FILE`` (the process id is written there, so a test can check that a runaway
was killed), ``FAKE_SANDBOX_BOOT_ERROR`` (``run()`` fails as a VM that cannot boot), ``FAKE_SANDBOX_HANG`` (``run()``
never returns, as a VM stuck before the program starts), ``FAKE_SANDBOX_RUN_ERROR`` (``run()`` fails as a VM that
trapped).
"""
import io
import json
import os
import sys


class Result:
    def __init__(self, stdout, stderr, exit_code):
        self.stdout, self.stderr, self.exit_code = stdout, stderr, exit_code

    @property
    def success(self):
        return self.exit_code == 0


class FakeSandbox:
    def __init__(self, **options):
        self.options = options
        self.tools = {}
        self.ran = False
        pid_file = os.environ.get("FAKE_SANDBOX_PID_FILE")
        if pid_file:
            with open(pid_file, "w") as handle:
                handle.write(str(os.getpid()))
        self.boot_error = os.environ.get("FAKE_SANDBOX_BOOT_ERROR")

    def register_tool(self, name, callback):
        if self.ran:
            raise RuntimeError("tools must be registered before the first run()")
        self.tools[name] = callback

    def _call_tool(self, name, **kwargs):
        callback = self.tools.get(name)
        if callback is None:
            raise RuntimeError(f"Tool '{name}' failed: unknown tool")
        try:
            result = callback(**json.loads(json.dumps(kwargs)))
        except Exception as exc:
            raise RuntimeError(f"Tool '{name}' failed: {exc}")
        return json.loads(json.dumps(result))

    def run(self, code):
        self.ran = True
        if self.boot_error:
            raise RuntimeError(f"Failed to create sandbox: {self.boot_error}")
        if os.environ.get("FAKE_SANDBOX_RUN_ERROR"):
            raise RuntimeError(os.environ["FAKE_SANDBOX_RUN_ERROR"])
        if os.environ.get("FAKE_SANDBOX_HANG"):
            import time
            while True:
                time.sleep(1)
        out, err = io.StringIO(), io.StringIO()
        old = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        exit_code = 0
        try:
            exec(code, {"__builtins__": __builtins__, "call_tool": self._call_tool})
        except SystemExit as exc:
            exit_code = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:
            print(f"{type(exc).__name__}: {exc}", file=err)
            exit_code = 1
        finally:
            sys.stdout, sys.stderr = old
        return Result(out.getvalue(), err.getvalue(), exit_code)
