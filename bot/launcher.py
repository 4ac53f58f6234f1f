"""Processes of `make run` that die with their supervisor, and the ghosts of an earlier run found and stopped.

    python -m bot.launcher exec -- COMMAND ARGS...     run COMMAND (same pid) so that it gets SIGTERM when the process
                                                       that started it dies (Linux prctl PR_SET_PDEATHSIG)
    python -m bot.launcher free-ports PORT...          stop this checkout's processes that hold PORTs; name any other
                                                       holder and exit 1

Issue 20, finding 8: when `make run`'s supervisord was killed (out of memory, a closed terminal) Rasa, the action
server, the website and the staff page kept running, orphaned, holding their ports; the next `make run` then said it
was running while the old processes answered with the old code, and its own servers exited in a loop. Now every
server of deploy/supervisor/run.conf starts through `exec` (it dies with supervisord), supervisord itself through
`exec` under scripts/run.sh (it dies with the script), and scripts/run.sh runs `free-ports` before starting.

A process is this checkout's when its working directory is the checkout (supervisord starts every server there)
and its command line runs the checkout's Python or one of the product's modules. Linux only (prctl, /proc), like the
rest of `make run`.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
ROOT = Path(__file__).resolve().parents[1]
PRODUCT_MODULES = ("bot.", "rasa", "supervisord")
STOP_WAIT_S = 15.0  # Rasa's Sanic finishes its requests within this (deploy/supervisor/run.conf stopwaitsecs)


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Ask the kernel to send `sig` to this process when its parent dies; exits at once if it already has."""
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the request took effect
        sys.exit(1)


def exec_with_parent(command: Sequence[str]) -> None:
    """Replace this process by `command` (the death signal survives exec)."""
    die_with_parent()
    os.execvp(command[0], list(command))


# ---------------------------------------------------------------------------------------------- ghosts

def _listening_inodes(ports: Sequence[int]) -> Dict[str, int]:
    """socket inode -> port, for the TCP sockets listening on `ports` (IPv4 and IPv6)."""
    wanted = set(ports)
    found: Dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if fields[3] == "0A" and port in wanted:  # 0A: TCP_LISTEN
                found[fields[9]] = port
    return found


def port_holders(ports: Sequence[int]) -> Dict[int, List[int]]:
    """port -> pids holding a listening socket on it (the processes this account may inspect)."""
    inodes = _listening_inodes(ports)
    holders: Dict[int, List[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            continue
        for link in links:
            if link.startswith("socket:[") and link[8:-1] in inodes:
                holders.setdefault(inodes[link[8:-1]], [])
                if int(proc.name) not in holders[inodes[link[8:-1]]]:
                    holders[inodes[link[8:-1]]].append(int(proc.name))
    return holders


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def belongs_to_checkout(pid: int, root: Path = ROOT) -> bool:
    try:
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return False
    line = command_line(pid)
    return cwd == root and (str(root / ".venv") in line or any(f"-m {m}" in line for m in PRODUCT_MODULES))


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def stop(pids: Sequence[int], wait_s: float = STOP_WAIT_S) -> List[int]:
    """SIGTERM, then SIGKILL whatever still runs after `wait_s`; returns the pids that had to be killed."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    killed = [pid for pid in pids if _alive(pid)]
    for pid in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return killed


def free_ports(ports: Sequence[int], root: Path = ROOT, out=sys.stderr) -> bool:
    """Stop this checkout's processes holding `ports`; False (and what holds them said) when another program does."""
    holders = port_holders(ports)
    foreign = {port: [pid for pid in pids if not belongs_to_checkout(pid, root)] for port, pids in holders.items()}
    foreign = {port: pids for port, pids in foreign.items() if pids}
    if foreign:
        for port, pids in sorted(foreign.items()):
            for pid in pids:
                print(f"port {port} is held by pid {pid} ({command_line(pid)[:160]}), not by this checkout's "
                      "`make run`: stop it, or give this run other ports (RASA_PORT, ACTIONS_PORT, WEB_PORT, "
                      "STAFF_PORT)", file=out)
        unknown = [port for port in ports if port not in holders and _port_taken(port)]
        for port in unknown:
            print(f"port {port} is held by a process of another account", file=out)
        return False
    unknown = [port for port in ports if port not in holders and _port_taken(port)]
    if unknown:
        for port in unknown:
            print(f"port {port} is held by a process this account cannot see (another user's?): stop it, or give "
                  "this run other ports (RASA_PORT, ACTIONS_PORT, WEB_PORT, STAFF_PORT)", file=out)
        return False
    ghosts = sorted({pid for pids in holders.values() for pid in pids})
    supervised = {pid: _parent(pid) for pid in ghosts if "supervisord" in command_line(_parent(pid))}
    if supervised:  # a running `make run` or `make cluster` of this checkout: not ghosts, not ours to stop
        for pid, parent in sorted(supervised.items()):
            print(f"pid {pid} ({command_line(pid)[:80]}) is served by this checkout's running supervisord (pid "
                  f"{parent}: `make run` or `make cluster`): use it, or stop it first", file=out)
        return False
    if ghosts:
        print("stopping what an earlier `make run` of this checkout left running: "
              + ", ".join(f"pid {pid} ({command_line(pid)[:80]})" for pid in ghosts), file=out)
        stop(ghosts)
    return True


def _port_taken(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    run = sub.add_parser("exec", help="run a command that dies with the process that started it")
    run.add_argument("command", nargs=argparse.REMAINDER)
    ports = sub.add_parser("free-ports", help="stop this checkout's ghosts on these ports, or say who holds them")
    ports.add_argument("ports", nargs="+", type=int)
    args = parser.parse_args(argv)
    if args.what == "exec":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        if not command:
            parser.error("exec needs a command")
        exec_with_parent(command)
    return 0 if free_ports(args.ports) else 1


if __name__ == "__main__":
    sys.exit(main())
