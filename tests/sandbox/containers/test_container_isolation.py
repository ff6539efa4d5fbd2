"""What a job sees in a container worker: every bound is the engine's, and checked from inside
(uid, capabilities, no_new_privs, read-only root, no network, the job directory, and nothing
of one job left for the next)."""

from __future__ import annotations

import ast
import json
import socket

import pytest
from containers_helpers import CONTAINERS

from gymforge.sandbox import Call, Limits, SandboxJob, Status
from gymforge.sandbox.docker import DockerBackend
from gymforge.sandbox.docker_engine import run_engine

pytestmark = CONTAINERS

LIMITS = Limits(wall_time=5, cpu_time=3, memory_bytes=256 << 20, processes=16)


def facts(backend: DockerBackend, source: str) -> object:
    r = backend.run(SandboxJob(source=source, limits=LIMITS))
    assert r.status is Status.OK, (r.status, r.stderr[-500:], r.error)
    return ast.literal_eval(r.stdout.strip())


def test_the_job_is_an_unprivileged_uid_without_capabilities(docker_sandbox: DockerBackend) -> None:
    got = facts(
        docker_sandbox,
        "import os\nst = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)\n"
        "print({k: st[k].strip() for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb',"
        " 'NoNewPrivs', 'Seccomp')} | {'uid': os.getuid(), 'gid': os.getgid(),"
        " 'groups': os.getgroups()})",
    )
    assert isinstance(got, dict)
    uids = {docker_sandbox.launcher.uid(i) for i in range(docker_sandbox.capacity)}
    assert got["uid"] in uids and got["gid"] == got["uid"] and got["uid"] != 0
    assert got["groups"] in ([], [got["gid"]])
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(got[cap], 16) == 0, (cap, got[cap])
    assert got["NoNewPrivs"] == "1" and got["Seccomp"] == "2"


def test_the_root_is_read_only_and_the_job_dir_is_the_one_writable_place(
    docker_sandbox: DockerBackend,
) -> None:
    places = ["/", "/usr", "/etc", "/tmp", "/var/tmp", "/run", "/dev", "/dev/shm", "/dev/mqueue"]
    got = facts(
        docker_sandbox,
        "import os\ndef w(d):\n    try:\n        open(os.path.join(d, 'gf_probe'), 'w').close()"
        "\n        return True\n    except OSError:\n        return False\n"
        f"print({{d: w(d) for d in {places!r} + ['.']}})",
    )
    assert got == {**dict.fromkeys(places, False), ".": True}


def test_no_network_no_dns_and_no_route_to_a_host_listener(docker_sandbox: DockerBackend) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        got = facts(
            docker_sandbox,
            "import socket\ndef c(a):\n    try:\n        socket.create_connection(a, timeout=1)"
            ".close()\n        return True\n    except OSError:\n        return False\n"
            "def d(h):\n    try:\n        socket.getaddrinfo(h, 80)\n        return True\n"
            "    except OSError:\n        return False\n"
            f"print({{'host': c(('127.0.0.1', {port})), 'outside': c(('1.1.1.1', 53)),"
            " 'dns': d('example.com'), 'ifaces': [l.split(':')[0].strip() for l in"
            " open('/proc/net/dev').readlines()[2:]]})",
        )
    assert got == {"host": False, "outside": False, "dns": False, "ifaces": ["lo"]}


def test_nothing_of_one_job_is_visible_to_the_next(docker_sandbox: DockerBackend) -> None:
    """Files in the job directory, message queues, System V objects and processes: a job
    that leaves all of them behind finds none in the next job on the same worker."""
    plant = (
        "import os, subprocess\nopen('left.txt', 'w').write('secret')\n"
        "try:\n    open('/dev/mqueue/left', 'w').close()\nexcept OSError:\n    pass\n"
        "subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
        "print({'pid': os.getpid()})"
    )
    look = (
        "import os\nprint({'files': sorted(os.listdir('.')), 'mqueue': sorted(os.listdir("
        "'/dev/mqueue')) if os.path.isdir('/dev/mqueue') else [],"
        " 'procs': sorted(p for p in os.listdir('/proc') if p.isdigit() and"
        " open(f'/proc/{p}/cmdline').read().startswith('sleep'))})"
    )
    for _ in range(2):  # on both workers, whichever runs the next job
        facts(docker_sandbox, plant)
    for _ in range(4):
        got = facts(docker_sandbox, look)
        assert got == {"files": ["main.py"], "mqueue": [], "procs": []}


def test_the_engine_holds_every_bound_of_the_container(docker_sandbox: DockerBackend) -> None:
    launcher = docker_sandbox.launcher
    name = launcher.container(docker_sandbox.runtime, 0)
    p = run_engine(launcher.engine.cli, "inspect", "--format", "{{json .HostConfig}}", name)
    assert p.returncode == 0, p.stderr
    host = json.loads(p.stdout)
    assert host["ReadonlyRootfs"] is True and host["NetworkMode"] == "none"
    assert not host.get("CapAdd")  # and every default capability dropped:
    assert {c.upper() for c in host["CapDrop"]} >= {"CAP_CHOWN", "CAP_NET_RAW", "CAP_SETUID"}
    assert any("no-new-privileges" in o for o in host["SecurityOpt"])
    assert host["Memory"] == launcher.memory_bytes and host["PidsLimit"] == launcher.pids
    assert host["Privileged"] is False
    tmpfs = host["Tmpfs"]["/tmp/job"]
    assert f"size={launcher.jobdir_bytes}" in tmpfs and "rw" in tmpfs


@pytest.mark.parametrize("language", ["c", "cpp", "javascript"])
def test_every_judge_language_runs_in_the_full_image(
    docker_sandbox: DockerBackend, language: str
) -> None:
    src = {
        "c": '#include <stdio.h>\nint main(void){int a,b;scanf("%d %d",&a,&b);'
        'printf("%d\\n",a+b);}',
        "cpp": "#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}",
        "javascript": "const s=require('fs').readFileSync(0,'utf8').trim().split(' ');"
        "console.log(Number(s[0])+Number(s[1]));",
    }[language]
    job = SandboxJob(language=language, source=src, stdin="20 22\n", limits=LIMITS)
    r = docker_sandbox.run(job)
    assert r.status is Status.OK and r.stdout == "42\n", (r.status, r.stderr, r.compile_output)


def test_function_calls_and_the_wall_clock_kill(docker_sandbox: DockerBackend) -> None:
    r = docker_sandbox.run(
        SandboxJob(source="def f(x): return (x, x)", calls=[Call(name="f", args=(2,))])
    )
    assert r.calls and r.calls[0].value == (2, 2)
    r = docker_sandbox.run(
        SandboxJob(source="while True: pass", limits=Limits(wall_time=2, cpu_time=1))
    )
    assert r.status is Status.TIMEOUT
    assert docker_sandbox.run(SandboxJob(source="print(1)", limits=LIMITS)).stdout == "1\n"


def test_read_only_files_hold_in_a_container(docker_sandbox: DockerBackend) -> None:
    """Landlock works under the engine's seccomp profile too: the job's files cannot change."""
    src = (
        "import os\nout = []\n"
        "for f in (lambda: open('a.py', 'w'), lambda: os.unlink('a.py'),"
        " lambda: os.rename('a.py', 'b.py'), lambda: open('new', 'x')):\n"
        "    try:\n        f()\n        out.append('done')\n"
        "    except PermissionError:\n        out.append('refused')\n"
        "open(os.path.join(os.environ['TMPDIR'], 't'), 'w').write('ok')\n"
        "print(out, open('a.py').read())\n"
    )
    job = SandboxJob(source=src, files={"a.py": "x"}, read_only_files=True, limits=LIMITS)
    r = docker_sandbox.run(job)
    assert r.status is Status.OK, (r.status, r.stderr[-500:], r.error)
    assert r.stdout.strip() == "['refused', 'refused', 'refused', 'refused'] x"
