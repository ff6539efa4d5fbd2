"""The multi-language path: hello world and stdin echo in every language, compile errors,
the artefact cache, and limits on compiled programs and node."""

from __future__ import annotations

import shutil
import uuid

import pytest
from sandbox_helpers import FAST

from gymforge.sandbox import Limits, SandboxJob, Status
from gymforge.sandbox.local import LocalBackend

PROGRAMS = {
    "python": "import sys\nprint('hello')\nfor line in sys.stdin:\n    print(line.strip()[::-1])\n",
    "c": (
        '#include <stdio.h>\n#include <string.h>\nint main(void){ char b[256]; puts("hello");\n'
        ' while (fgets(b, sizeof b, stdin)) { size_t n = strcspn(b, "\\n"); b[n] = 0;\n'
        "  for (size_t i = n; i > 0; i--) putchar(b[i-1]); putchar(10); } return 0; }\n"
    ),
    "cpp": (
        "#include <iostream>\n#include <string>\n#include <algorithm>\nint main(){\n"
        ' std::cout << "hello\\n"; std::string s;\n while (std::getline(std::cin, s)) {'
        ' std::reverse(s.begin(), s.end()); std::cout << s << "\\n"; } }\n'
    ),
    "javascript": (
        "console.log('hello');\nconst lines = require('fs').readFileSync(0, 'utf8')"
        ".split('\\n').filter(Boolean);\nfor (const l of lines) console.log("
        "[...l].reverse().join(''));\n"
    ),
}
TOOLS = {"python": "python3", "c": "gcc", "cpp": "g++", "javascript": "node"}
LIMITS = FAST.model_copy(update={"memory_bytes": 512 << 20})


def needs(lang: str) -> None:
    if shutil.which(TOOLS[lang]) is None:
        pytest.skip(f"{TOOLS[lang]} is not installed")


def tag(src: str, lang: str) -> str:
    """Make the source unique so the first compile is a cache miss."""
    mark = uuid.uuid4().hex
    return src + (f"\n# {mark}\n" if lang == "python" else f"\n// {mark}\n")


@pytest.mark.parametrize("lang", sorted(PROGRAMS))
def test_hello_and_stdin_echo(sandbox: LocalBackend, lang: str) -> None:
    needs(lang)
    job = SandboxJob(
        language=lang, source=tag(PROGRAMS[lang], lang), stdin="abc\nxyz\n", limits=LIMITS
    )
    r = sandbox.run(job)
    assert r.status == Status.OK, (r.status, r.stderr, r.compile_output, r.error)
    assert r.stdout == "hello\ncba\nzyx\n"
    if lang in ("c", "cpp"):
        assert r.compile_cached is False
        again = sandbox.run(job)
        assert again.ok and again.compile_cached is True and again.stdout == r.stdout


@pytest.mark.parametrize("lang", ["c", "cpp"])
def test_compile_errors_carry_the_compiler_message(sandbox: LocalBackend, lang: str) -> None:
    needs(lang)
    r = sandbox.run(SandboxJob(language=lang, source="int main( { return 0 }\n", limits=LIMITS))
    assert r.status == Status.COMPILE_ERROR and r.exit_code not in (0, None)
    assert "error" in (r.compile_output or "") and "main" in (r.compile_output or "")
    assert r.stdout == ""


def test_compiled_programs_get_limits_and_faithful_facts(sandbox: LocalBackend) -> None:
    needs("c")
    cases = {
        "int main(){ return 3; }": (Status.RUNTIME_ERROR, 3, None),
        "int main(){ volatile int *p = 0; return *p; }": (Status.RUNTIME_ERROR, None, 11),
        "int main(){ for(;;); }": (Status.TIMEOUT, None, 24),
        ('#include <stdio.h>\nint main(){ FILE *f = fopen("x", "w"); for(;;) fputc(\'x\', f); }'): (
            Status.RUNTIME_ERROR,
            None,
            25,
        ),
        ('#include <stdio.h>\nint main(){ for(;;) puts("spam spam spam"); }'): (
            Status.OUTPUT_LIMIT,
            None,
            9,
        ),
    }
    lim = Limits(
        wall_time=20, cpu_time=1, file_size_bytes=1 << 20, output_bytes=1 << 12, processes=16
    )
    for src, (status, code, sig) in cases.items():
        r = sandbox.run(SandboxJob(language="c", source=src, limits=lim))
        assert (r.status, r.exit_code) == (status, code), (src, r)
        if sig is not None:
            assert r.signal == sig, (src, r)


def test_node_is_bounded_without_rlimit_as(sandbox: LocalBackend) -> None:
    needs("javascript")
    lim = Limits(wall_time=10, cpu_time=10, memory_bytes=128 << 20)
    r = sandbox.run(
        SandboxJob(
            language="javascript",
            limits=lim,
            source="const a = []; for (;;) a.push(new Array(1e6).fill(1));",
        )
    )
    if sandbox.workers[0].has_memory_cgroup:  # the cgroup is the limit: its OOM kill counts
        assert r.status == Status.MEMORY and r.limits_hit.memory, r
    else:  # V8's own heap cap aborts the process
        assert r.status == Status.RUNTIME_ERROR and r.signal == 6, r


def test_unknown_language_is_a_clear_error(sandbox: LocalBackend) -> None:
    from gymforge.core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown language"):
        sandbox.run(SandboxJob(language="cobol", source=""))
