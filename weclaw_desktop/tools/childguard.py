"""The supervisor between the app and a command it runs (POSIX): the command's group dies with the app.

Run as ``python -I -S childguard.py LIFELINE_FD -- PROGRAM ARGS...`` (``<app> --child-guard ...`` in the
frozen bundle). Standard library only, no package imports: it starts in a few milliseconds.

The app starts this process as the leader of a new process group (``start_new_session``) and passes it
the read end of a pipe whose write end only the app holds (the *lifeline*). The supervisor starts the
command in the same group and waits for it. When the app dies, however it dies (``kill -9`` included),
the kernel closes the write end, the lifeline reads EOF, and the supervisor kills the whole group, so
no command, and no child the command started, keeps running without the app. On Linux the supervisor
also asks for ``PR_SET_PDEATHSIG`` (a signal when the app exits), checked against ``getppid()`` because
the kernel sends it when the *thread* that started the supervisor ends.

When the command exits, the supervisor exits with the same status (the app reads it as the command's).
If processes the command started are still running in the group (``server &`` with its output
redirected), a small janitor stays behind without any of the output pipes and keeps watching the
lifeline until the group is empty, so those die with the app too.
"""

import _signal as signal  # the C module: ``signal`` itself imports enum, which doubles the start-up time
import os
import select
import sys

JANITOR_POLL_S = 1.0


def _kill_group() -> None:
    try:  # noqa: SIM105  (no contextlib: it costs start-up time in this small process)
        os.killpg(0, signal.SIGKILL)
    except OSError:
        pass
    os._exit(137)


def _linux_prctl(sig: int) -> None:
    """Linux: a signal when the parent exits (PR_SET_PDEATHSIG = 1), and orphans of the command become our
    children (PR_SET_CHILD_SUBREAPER = 36), so "did it leave anything running" is one waitpid."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)
        libc.prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _children_left() -> bool:
    """Linux (subreaper): True while a descendant is alive; reaps the ones that ended."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _others_in_group() -> bool:
    """True while a process other than this one is in our process group."""
    me, group = os.getpid(), os.getpgrp()
    if sys.platform.startswith("linux"):
        try:
            names = os.listdir("/proc")
        except OSError:
            return False
        for name in names:
            if not name.isdigit() or int(name) == me:
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            # fields after "(comm)": state ppid pgrp ...; a zombie (state Z) is already dead
            if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == group:
                return True
        return False
    if sys.platform == "darwin":
        try:
            import ctypes

            libproc = ctypes.CDLL("/usr/lib/libproc.dylib")
            buf = (ctypes.c_int * 512)()
            n = libproc.proc_listpgrppids(group, buf, ctypes.sizeof(buf))
            return any(buf[i] not in (0, me) for i in range(max(0, n) // ctypes.sizeof(ctypes.c_int)))
        except (OSError, AttributeError):
            return False
    return False


def _janitor(lifeline: int) -> None:
    """Stay in the group, holding none of the output, until it is empty or the app dies."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    while _others_in_group():
        ready, _, _ = select.select([lifeline], [], [], JANITOR_POLL_S)
        if ready and not os.read(lifeline, 1):
            _kill_group()
    os._exit(0)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        os.write(2, b"usage: childguard.py LIFELINE_FD -- PROGRAM [ARGS...]\n")
        return 2
    lifeline = int(argv[0])
    command = argv[2:]
    parent = os.getppid()
    os.set_inheritable(lifeline, False)
    if os.getpgrp() != os.getpid():  # never kill the group of whoever started us: lead our own
        os.setsid()

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: None)  # PR_SET_PDEATHSIG; handled in the loop below
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    linux = sys.platform.startswith("linux")
    if linux:
        _linux_prctl(signal.SIGTERM)
    if os.getppid() != parent:  # the app died before the request took effect
        _kill_group()

    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"cannot start {command[0]}: {exc.strerror or exc}\n".encode(errors="replace"))
        os._exit(127)

    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if os.getppid() != parent:
            _kill_group()
        ready, _, _ = select.select([lifeline, wake_r], [], [])
        if lifeline in ready and not os.read(lifeline, 1):
            _kill_group()
        if wake_r in ready:
            try:  # noqa: SIM105
                os.read(wake_r, 512)
            except (BlockingIOError, InterruptedError):
                pass

    left = _children_left() if linux else _others_in_group()
    if left and os.fork() == 0:
        _janitor(lifeline)
    if os.WIFSIGNALED(status):  # die the way the command died, so the app sees the same status
        signum = os.WTERMSIG(status)
        signal.set_wakeup_fd(-1)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    return os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
