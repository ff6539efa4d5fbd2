"""Isolation facts of the local (bubblewrap) backend, checked from inside a job."""

from __future__ import annotations

import ast
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import UID_BASE, run_py

from gymforge.sandbox.local import LocalBackend

REPO_DIR = Path(__file__).resolve().parents[2]


def facts(backend: LocalBackend, source: str) -> dict:
    r = run_py(backend, source)
    assert r.ok, (r.status, r.stderr, r.error)
    return ast.literal_eval(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def solo() -> Iterator[LocalBackend]:
    """One worker, so consecutive jobs are known to share it (for leak tests)."""
    b = LocalBackend(workers=1, uid_base=UID_BASE + 10, host_grace=5.0)
    yield b
    b.close()


@pytest.fixture
def host_port() -> Iterator[int]:
    srv = socket.socket()
    srv.bind(("0.0.0.0", 0))
    srv.listen(1)
    yield srv.getsockname()[1]
    srv.close()


def _host_ip() -> str:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))
        return str(s.getsockname()[0])
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()


def test_no_network(sandbox: LocalBackend, host_port: int) -> None:
    src = f"""
import socket
def try_connect(addr):
    try:
        socket.create_connection(addr, timeout=2).close()
        return 'connected'
    except OSError as e:
        return type(e).__name__
ifaces = [l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]]
print({{'lo': try_connect(('127.0.0.1', {host_port})),
        'host': try_connect(({_host_ip()!r}, {host_port})),
        'out': try_connect(('1.1.1.1', 53)), 'ifaces': ifaces}})
"""
    f = facts(sandbox, src)
    assert f["lo"] != "connected" and f["host"] != "connected" and f["out"] != "connected"
    assert f["ifaces"] == ["lo"]


def test_read_only_everywhere_but_the_job_dir(sandbox: LocalBackend) -> None:
    src = (
        f"REPO = {str(REPO_DIR)!r}\nHOST_PYTHON = {sys.base_prefix!r}\n"
        + """
import os
def writable(path):
    try:
        with open(path, 'w') as f:
            f.write('x')
        os.unlink(path)
        return True
    except OSError:
        return False
targets = ['/etc/gf', '/usr/gf', '/gf', '/tmp/gf', '/dev/shm/gf', '/proc/gf', '/cache/gf',
           '/judge/gf', '/.gymforge/gf', '/usr/lib/python3/dist-packages/gf.py']
print({'w': {t: writable(t) for t in targets}, 'job': writable('gf'),
       'cwd': os.getcwd(), 'tmp': os.environ['TMPDIR'], 'home': os.environ['HOME'],
       'repo': os.path.exists(REPO), 'host_python': os.path.exists(HOST_PYTHON),
       'top': sorted(os.listdir('/'))})
"""
    )
    f = facts(sandbox, src)
    assert not any(f["w"].values()), f["w"]
    assert f["job"] is True
    assert f["cwd"] == f["tmp"] == f["home"] == "/tmp/job"
    assert not f["repo"] and not f["host_python"], "host files must not be visible"
    assert "work" not in f["top"] and "root" not in f["top"] and "home" not in f["top"]
    assert "judge" not in f["top"], "no judge directory is mounted"


def test_unprivileged_without_capabilities(sandbox: LocalBackend) -> None:
    src = """
import os
st = dict(l.split(':', 1) for l in open('/proc/self/status'))
print({k: st[k].strip() for k in ('Uid', 'Gid', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd',
      'CapAmb', 'NoNewPrivs')} | {'groups': os.getgroups()})
"""
    f = facts(sandbox, src)
    assert set(f["Uid"].split()) <= {str(UID_BASE), str(UID_BASE + 1)}
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(f[cap], 16) == 0, (cap, f[cap])
    assert f["NoNewPrivs"] == "1"
    assert f["groups"] in ([], [int(f["Gid"].split()[0])])


def test_own_pid_namespace(sandbox: LocalBackend) -> None:
    f = facts(
        sandbox,
        "import os; pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
        "cmd = {p: open(f'/proc/{p}/cmdline', 'rb').read().split(b'\\0')[3:4] for p in pids}\n"
        "print({'pids': pids, 'me': os.getpid(), 'pp': os.getppid(), 'cmd': cmd})",
    )
    assert f["pp"] == 1, "the zygote is the namespace's init"
    rest = set(f["pids"]) - {1, f["me"]}
    assert len(rest) == 1, f  # the fork template, every job's memory parent
    assert f["cmd"][rest.pop()] == [b"/.gymforge/template.py"], f


def test_kernel_attack_surface_is_reduced(sandbox: LocalBackend) -> None:
    src = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def rc(fn, *args):
    r = fn(*args)
    return 'ok' if r == 0 else os.strerror(ctypes.get_errno())
print({'userns': rc(libc.unshare, 0x10000000), 'mountns': rc(libc.unshare, 0x00020000),
       'ptrace': rc(libc.ptrace, 0, 0, 0, 0),
       'seccomp': open('/proc/self/status').read().split('Seccomp:')[1].split()[0]})
"""
    f = facts(sandbox, src)
    assert f["userns"] != "ok" and f["mountns"] != "ok"
    if sandbox.worker_info()[0]["seccomp"] == "on":
        assert f["seccomp"] == "2" and f["ptrace"] != "ok"


def test_nothing_survives_into_the_next_job(solo: LocalBackend) -> None:
    leave = """
import ctypes, os, subprocess, sys, time
open('left.txt', 'w').write('secret')
os.makedirs('d/e', exist_ok=True); os.chmod('d', 0)
os.environ['LEAK'] = '1'; os.putenv('LEAK2', '1')
libc = ctypes.CDLL(None)
shm = libc.shmget(4242, 4096, 0o1000 | 0o666)
subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(60)'])
print(shm >= 0)
"""
    r = run_py(solo, leave)
    assert r.ok and r.stdout.strip() == "True", (r.stdout, r.stderr)
    assert r.stray_processes >= 1, "the background process was found and killed"
    look = """
import os
def cmd(p):
    return open(f'/proc/{p}/cmdline', 'rb').read()
print({'files': os.listdir('.'), 'env': [k for k in os.environ if k.startswith('LEAK')],
       'shm': open('/proc/sysvipc/shm').read().splitlines()[1:],
       'pids': [cmd(p) for p in os.listdir('/proc')
                if p.isdigit() and int(p) not in (1, os.getpid())]})
"""
    f = facts(solo, look)
    tpl = b"\0/.gymforge/template.py\0"
    assert len(f["pids"]) == 1 and tpl in f["pids"][0], f  # only the fork template
    assert {**f, "pids": []} == {"files": ["main.py"], "env": [], "shm": [], "pids": []}


def test_python_state_is_fresh_per_job(solo: LocalBackend) -> None:
    run_py(solo, "import math, builtins; math.pi = 3; builtins.len = lambda x: 0")
    f = facts(solo, "import math; print({'pi': math.pi, 'len': len('abc')})")
    assert f == {"pi": 3.141592653589793, "len": 3}
