"""The supervisor between the app and a command it runs (POSIX): the command's group dies with the app.

Run as ``python -I -S childguard.py LIFELINE -- PROGRAM ARGS...`` (``<app> --child-guard ...`` in the
frozen bundle). Standard library only, no package imports: it starts in a few milliseconds.

``LIFELINE`` is either the number of an inherited pipe FD (below), or ``--parent`` when the program that
starts the supervisor cannot pass one (the MCP SDK spawns stdio servers itself, with ``close_fds``): then
the supervisor watches the process that started it. Linux: a ``pidfd`` of the parent (readable when it
exits; kernel 5.3+) plus ``PR_SET_PDEATHSIG``; macOS and the BSDs: a kqueue ``NOTE_EXIT`` on the parent;
elsewhere (or if those fail): ``getppid()`` polled every :data:`PARENT_POLL_S`. Either way the parent's
death is noticed however it dies, and the rest (group kill, janitor) is the same. The supervisor never
reads or writes the command's standard streams: the command inherits them as they are, and after
starting it the supervisor puts ``/dev/null`` in place of its own copies of stdin and stdout, so the
app sees EOF the moment the command closes its output.

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
PARENT_POLL_S = 0.5  # --parent without pidfd/kqueue: how often getppid() is checked
PARENT = "--parent"


class Lifeline:
    """What tells the supervisor that the app died: an inherited pipe (EOF), a pidfd or kqueue of the app
    (readable when it exits), or nothing to wait on (poll: the app's pid is checked on every wake-up)."""

    def __init__(self, arg: str, app: int) -> None:
        self.app, self.kind, self.fd = app, "poll", -1
        self.kq: object = None  # keeps the kqueue open (macOS / BSD)
        if arg != PARENT:
            self.kind, self.fd = "pipe", int(arg)
            os.set_inheritable(self.fd, False)
            return
        self.watch()

    def watch(self) -> None:
        """(Re)start watching the app's pid (the janitor calls it again: a kqueue is not inherited by fork)."""
        self.kind, self.fd = "poll", -1
        if sys.platform == "linux":
            try:
                self.kind, self.fd = "pidfd", os.pidfd_open(self.app)
            except (OSError, AttributeError):  # an old kernel (ENOSYS), or the app is gone (seen by getppid)
                self.kind, self.fd = "poll", -1
        elif sys.platform != "win32" and hasattr(select, "kqueue"):  # macOS, the BSDs
            try:
                kq = select.kqueue()
                flags = select.KQ_EV_ADD | select.KQ_EV_ONESHOT
                kq.control([select.kevent(self.app, select.KQ_FILTER_PROC, flags, select.KQ_NOTE_EXIT)], 0, 0)
                self.kind, self.kq, self.fd = "kqueue", kq, kq.fileno()
            except OSError:  # ESRCH: the app is already gone (seen by getppid)
                self.kind, self.fd = "poll", -1

    def timeout(self) -> float | None:
        return PARENT_POLL_S if self.kind == "poll" else None

    def ready(self) -> bool:
        """The lifeline's FD was reported readable: did the app die?"""
        if self.kind == "pipe":
            return not os.read(self.fd, 1)
        return True  # pidfd / kqueue: readable means the watched process exited

    def gone(self) -> bool:
        """The janitor's check on every wake-up (``--parent``; its parent is the finished supervisor, so
        getppid() says nothing): the app no longer exists."""
        if self.kind == "pipe":
            return False
        try:
            os.kill(self.app, 0)
        except ProcessLookupError:
            return True
        except OSError:
            pass
        return False


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


def _janitor(lifeline: Lifeline) -> None:
    """Stay in the group, holding none of the output, until it is empty or the app dies."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if lifeline.kind == "kqueue":
        lifeline.watch()
    while _others_in_group():
        if lifeline.gone():
            _kill_group()
        fds = [lifeline.fd] if lifeline.fd >= 0 else []
        ready, _, _ = select.select(fds, [], [], JANITOR_POLL_S)
        if ready and lifeline.ready():
            _kill_group()
    os._exit(0)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        os.write(2, b"usage: childguard.py LIFELINE_FD|--parent -- PROGRAM [ARGS...]\n")
        return 2
    command = argv[2:]
    parent = os.getppid()
    lifeline = Lifeline(argv[0], parent)
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
    if os.getppid() != parent:  # the app died before the request (or the pidfd / kqueue) took effect
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

    devnull = os.open(os.devnull, os.O_RDWR)  # the command has the real streams; hold none of them open
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    watched = [lifeline.fd, wake_r] if lifeline.fd >= 0 else [wake_r]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if os.getppid() != parent:
            _kill_group()
        ready, _, _ = select.select(watched, [], [], lifeline.timeout())
        if lifeline.fd in ready and lifeline.ready():
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
