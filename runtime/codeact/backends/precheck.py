#!/usr/bin/env python3
"""Could hyperlight run on this machine at all? Cheap checks, standard library only.

The launcher runs this file BEFORE any venv exists, to decide whether hyperlight's ~100 MB of packages are worth
installing. It prints ``yes`` (exit 0) or ``no: <reason>`` (exit 1) in a few milliseconds::

    python3 -S .codeact/runtime/codeact/backends/precheck.py [.codeact/settings.json]

With the stamped settings (or ``CODEACT_BACKEND``), a backend pinned to monty gives ``no: ...`` and one pinned to
hyperlight gives ``yes: ...`` without looking further (so an explicit choice that cannot run fails with the probe's
own error); ``auto`` runs the checks.

The checks: Linux x86_64 with glibc >= 2.28, or Windows x64 (hyperlight-sandbox 0.8 ships no other wheels); a
hypervisor device this user can open (/dev/kvm or /dev/mshv; on Windows the Windows Hypervisor Platform); not a
software KVM such as kvm_pvm, on which hyperlight fails. Passing them does not prove hyperlight boots here: the
runtime's probe (``codeact doctor``) decides that. The runtime imports this module too (``codeact.backends.probe``).

Kept importable by any Python 3 the system may have: no annotations or syntax newer than 3.6.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
import os
import sys

TYPE_CHECKING = False  # not `typing`; the annotations are type comments, which every Python 3 reads
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple  # noqa: F401 - read in the type comments

    Check = Dict[str, Any]  # {"name", "ok", "detail", "fix"}

MIN_GLIBC = (2, 28)
MSHV, KVM = "/dev/mshv", "/dev/kvm"  # Hyper-V on Linux (e.g. Azure), KVM
DEVICES = (MSHV, KVM)
SYS_MODULE = "/sys/module"  # loaded kernel modules
SOFTWARE_KVM_MODULES = ("kvm_pvm",)

FIX_PLATFORM = "use the monty backend (auto picks it); hyperlight-sandbox 0.8 has wheels for Linux x86_64 " \
               "(glibc >= 2.28) and Windows x64 only"
FIX_NO_DEVICE = "hyperlight needs hardware virtualisation: enable VT-x/AMD-V in the firmware and load kvm " \
                "(sudo modprobe kvm_intel or kvm_amd), or in a VM enable nested virtualisation; otherwise use monty"
FIX_DEVICE_ACCESS = "let your user open it: sudo usermod -aG kvm $USER, then log out and in " \
                    "(or a udev rule giving group kvm rw access to {device})"
FIX_SOFTWARE_KVM = "{module} emulates KVM in software and hyperlight's micro-VMs fail on it: run on a host with " \
                   "hardware virtualisation (bare metal, or a VM with nested VT-x/AMD-V); otherwise use monty"
FIX_WINDOWS_WHP = "enable the Windows Hypervisor Platform feature (PowerShell as administrator: " \
                  "Enable-WindowsOptionalFeature -Online -FeatureName HypervisorPlatform), then reboot"


def _check(name, ok, detail, fix=None):
    # type: (str, bool, str, Optional[str]) -> Check
    return {"name": name, "ok": ok, "detail": detail, "fix": None if ok else fix}


def glibc_version():
    # type: () -> Optional[Tuple[int, int]]
    """``(major, minor)`` of the C library, or ``None`` where it is not glibc (musl, macOS, Windows)."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    except (AttributeError, ValueError, OSError):
        return None
    if not text or not text.startswith("glibc "):
        return None
    try:
        parts = text.split()[1].split(".")
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def _machine():
    # type: () -> str
    if sys.platform == "win32":
        return (os.environ.get("PROCESSOR_ARCHITEW6432") or os.environ.get("PROCESSOR_ARCHITECTURE") or "").lower()
    try:
        return os.uname().machine.lower()
    except AttributeError:
        return ""


def platform_check():
    # type: () -> Check
    """Is there a hyperlight-sandbox 0.8 wheel for this OS, CPU and C library?"""
    machine = _machine()
    if sys.platform.startswith("linux"):
        if machine not in ("x86_64", "amd64"):
            return _check("platform", False, "Linux on %s: no hyperlight wheels for this CPU" % machine, FIX_PLATFORM)
        libc = glibc_version()
        if libc is None:
            return _check("platform", False, "Linux x86_64 without glibc (musl?): hyperlight has manylinux "
                                             "wheels only", FIX_PLATFORM)
        if libc < MIN_GLIBC:
            return _check("platform", False, "glibc %d.%d is older than the 2.28 hyperlight's wheels need" % libc,
                          FIX_PLATFORM)
        return _check("platform", True, "Linux x86_64, glibc %d.%d" % libc)
    if sys.platform == "win32":
        if machine not in ("amd64", "x86_64"):
            return _check("platform", False, "Windows on %s: hyperlight has Windows x64 wheels only" % machine,
                          FIX_PLATFORM)
        return _check("platform", True, "Windows x64")
    if sys.platform == "darwin":
        return _check("platform", False, "macOS: hyperlight-sandbox 0.8 has no macOS wheels", FIX_PLATFORM)
    return _check("platform", False, "%s: hyperlight has no wheels for it" % sys.platform, FIX_PLATFORM)


def _can_open(path):
    # type: (str) -> Optional[str]
    """``None`` if ``path`` opens read-write, else the reason (the hypervisor needs read-write access)."""
    flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    return None


def device_check():
    # type: () -> Check
    """A hypervisor device this user can open: /dev/mshv or /dev/kvm (Linux), the Hypervisor Platform (Windows)."""
    if sys.platform == "win32":
        root = os.environ.get("SystemRoot") or os.environ.get("windir") or "C:\\Windows"
        dll = os.path.join(root, "System32", "WinHvPlatform.dll")
        if os.path.exists(dll):
            return _check("hypervisor", True, "Windows Hypervisor Platform present (%s)" % dll)
        return _check("hypervisor", False, "the Windows Hypervisor Platform is not enabled", FIX_WINDOWS_WHP)
    present = [d for d in DEVICES if os.path.exists(d)]
    if not present:
        return _check("hypervisor", False, "no hypervisor device (%s)" % " or ".join(DEVICES), FIX_NO_DEVICE)
    refused = []
    for device in present:
        why = _can_open(device)
        if why is None:
            return _check("hypervisor", True, "%s present and opens read-write" % device)
        refused.append((device, why))
    device, why = refused[-1]
    return _check("hypervisor", False, "%s cannot be opened (%s)" % (device, why),
                  FIX_DEVICE_ACCESS.format(device=device))


def software_kvm_check():
    # type: () -> Check
    """Is /dev/kvm a software emulation (kvm_pvm)? Only matters when KVM is the device hyperlight would use."""
    if not sys.platform.startswith("linux"):
        return _check("software KVM", True, "not applicable on %s" % sys.platform)
    if os.path.exists(MSHV) and _can_open(MSHV) is None:
        return _check("software KVM", True, "%s is used, not KVM" % MSHV)
    for module in SOFTWARE_KVM_MODULES:
        if os.path.exists(os.path.join(SYS_MODULE, module)):
            return _check("software KVM", False, "/dev/kvm is provided by %s, a software KVM on which hyperlight "
                                                 "fails" % module, FIX_SOFTWARE_KVM.format(module=module))
    return _check("software KVM", True, "no software KVM module loaded")


def checks():
    # type: () -> List[Check]
    """Every cheap check, in order; each ``{"name", "ok", "detail", "fix"}``."""
    first = platform_check()
    if not first["ok"]:
        return [first]
    return [first, device_check(), software_kvm_check()]


def reason():
    # type: () -> Optional[str]
    """``None`` if hyperlight might run here, else the first failing check's detail."""
    for check in checks():
        if not check["ok"]:
            return str(check["detail"])
    return None


def pinned_backend(settings_path=None, environ=None):
    # type: (Optional[str], Optional[Mapping[str, str]]) -> Tuple[str, Optional[str]]
    """The backend named by ``CODEACT_BACKEND``, else by the stamped settings file; "auto" when neither says."""
    env = os.environ if environ is None else environ
    if env.get("CODEACT_BACKEND"):
        return env["CODEACT_BACKEND"], "CODEACT_BACKEND"
    if settings_path:
        try:
            import json  # only when a settings file is given: the plain check stays on os and sys

            with open(settings_path, encoding="utf-8") as handle:
                backend = json.load(handle).get("backend")
            if isinstance(backend, str) and backend:
                return backend, "settings"
        except (OSError, ValueError, AttributeError):
            pass  # unreadable settings: decide by the machine
    return "auto", None


def decide(settings_path=None, environ=None):
    # type: (Optional[str], Optional[Mapping[str, str]]) -> str
    """``"yes"``, ``"yes: <why>"`` or ``"no: <why>"``: should the launcher install hyperlight?"""
    backend, source = pinned_backend(settings_path, environ)
    if backend == "monty":
        return "no: the backend is pinned to monty (%s)" % source
    if backend == "hyperlight":
        return "yes: the backend is pinned to hyperlight (%s)" % source
    why = reason()
    return "yes" if why is None else "no: " + why


def main(argv=None):
    # type: (Optional[List[str]]) -> int
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(args) > 1:
        sys.stderr.write("usage: precheck.py [SETTINGS_JSON]  (prints yes, or no: <reason>)\n")
        return 2
    verdict = decide(args[0] if args else None)
    print(verdict)
    return 0 if verdict.startswith("yes") else 1


if __name__ == "__main__":
    sys.exit(main())
