#!/usr/bin/env python3
"""Runs every command of README.md as written, against a real server, and checks the docs' links.

    python3 .ci/readme-commands.py .build/debug/tactus          # --show prints each command's output

What it checks, failing with the README's line on the first problem:

- README.md has at most 150 lines.
- Every relative link of README.md and docs/*.md names a file that exists, and a `#section`
  a heading of that file.
- Every command of README.md's ```sh blocks exits 0. They run in order, in one bash, as a
  user would type them in a terminal at the top of a checkout: the working directory is a
  temporary copy of what they name (`Tests/Fixtures/sample.ogg`, and `.build/release/tactus`,
  which is the binary given here), `~` is a temporary home whose `Music` folder holds the
  sample, and a server runs as `make run` starts it (its command line is read from
  `make -n run`), its data in the temporary directory. Nothing else is changed, except that the
  server listens on free loopback ports rather than the defaults: the commands' 127.0.0.1:5555,
  :5556, :5557 and :8080 are those ports, and so is `$TACTUS_SERVER`, as the defaults are for a
  user. A `make TARGET` line is checked with `make -n TARGET` (it would build, or run this check).
"""
import argparse
import os
import pathlib
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 150
SAMPLE = "Tests/Fixtures/sample.ogg"
# The whole run of the commands, beyond which the check fails naming the command that was running.
COMMANDS_SECONDS = 240


class Failure(Exception):
    pass


def commands(text):
    """The commands of the ```sh blocks: (line number, command), continuation lines joined."""
    found, fence, pending, start = [], None, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = line.strip()[3:] if fence is None else None
            continue
        if fence != "sh":
            continue
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            found.append((start, command))
    return found


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def check_links(files):
    problems = []
    for path in files:
        text = path.read_text()
        # Links outside code: drop fenced blocks and inline code first.
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        prose = re.sub(r"`[^`\n]*`", "", prose)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue
            name, _, anchor = target.partition("#")
            linked = (path.parent / name).resolve() if name else path
            where = f"{path.relative_to(ROOT)}: link {target}"
            if not linked.exists():
                problems.append(f"{where}: no such file")
            elif anchor and linked.suffix == ".md":
                headings = {slug(h) for h in re.findall(r"^#+ (.*)$", re.sub(r"```.*?```", "", linked.read_text(), flags=re.S), re.M)}
                if anchor not in headings:
                    problems.append(f"{where}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    return problems


def free_ports():
    """A base port whose next two are free too (frontend, backend, events), and a port for the web."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base > 65000:
            continue
        held = []
        try:
            for port in (base, base + 1, base + 2, base + 3):
                held.append(socket.socket())
                held[-1].bind(("127.0.0.1", port))
            return base, base + 3
        except OSError:
            continue
        finally:
            for held_socket in held:
                held_socket.close()
    raise Failure("no four consecutive free loopback ports")


def serve_command():
    """`make run`'s command line for the server, from `make -n run`."""
    out = subprocess.run(["make", "-n", "-s", "--no-print-directory", "run"], cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines() if re.search(r"tactus serve\b", line)]
    if out.returncode != 0 or len(lines) != 1:
        raise Failure(f"`make -n run` does not show one `tactus serve` line:\n{out.stdout}{out.stderr}")
    return shlex.split(lines[0])


def wait_until(what, ready, seconds, server):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise Failure(f"the server exited ({server.returncode}) before {what}")
        if ready():
            return
        time.sleep(0.2)
    raise Failure(f"the server was not ready within {seconds} s: {what}")


def listening(port):
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def run_commands(found, sandbox, addresses, env, log, show):
    """Runs the commands in one bash; returns None, or (line, command, exit status, output).
    With `show`, prints each command as run and its output."""
    script = ["set -u"]
    for index, (line, command) in enumerate(found):
        if command.startswith("make "):
            words = shlex.split(command, comments=True)[1:]
            command = f"make -n -C {shlex.quote(str(ROOT))} {shlex.join(words)} >/dev/null"
        for default, actual in addresses.items():
            command = command.replace(default, actual)
        out = shlex.quote(str(log / f"{index}.out"))
        script += [
            f"echo {index} > {shlex.quote(str(log / 'current'))}",
            f"{{ {command}\n}} > {out} 2>&1 < /dev/null",
            f"status=$?; if [ $status -ne 0 ]; then echo $status > {shlex.quote(str(log / 'failed'))}; exit 1; fi",
        ]
    started = time.monotonic()
    try:
        shell = subprocess.run(
            ["bash", "-c", "\n".join(script)], cwd=sandbox, env=env, timeout=COMMANDS_SECONDS, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        index = int((log / "current").read_text())
        line, command = found[index]
        return line, command, f"still running after {COMMANDS_SECONDS} s", (log / f"{index}.out").read_text(errors="replace")
    if (log / "failed").exists():
        index = int((log / "current").read_text())
        line, command = found[index]
        return line, command, f"exit status {(log / 'failed').read_text().strip()}", (log / f"{index}.out").read_text(errors="replace")
    if shell.returncode != 0:
        # bash itself failed (a command it cannot parse): the commands after the last one started did not run.
        index = int((log / "current").read_text()) if (log / "current").exists() else 0
        line, command = found[index]
        return line, command, f"bash exited {shell.returncode}", shell.stdout + shell.stderr
    if show:
        for index, (line, command) in enumerate(found):
            print(f"README.md:{line}: {command}\n{(log / f'{index}.out').read_text(errors='replace')}")
    print(f"readme: {len(found)} commands ran in {time.monotonic() - started:.1f} s")
    return None


def start_server(binary, sandbox, home, server_log):
    """Starts the server as `make run` does, on free loopback ports, and waits until it answers
    and its web pages listen. Another program may take a port between the probe and the bind:
    then it starts again on others (three times at most).

    Returns the server, the default addresses and the ports that stand for them, and the
    environment the commands run in."""
    for attempt in range(3):
        base, web = free_ports()
        addresses = {
            "127.0.0.1:5555": f"127.0.0.1:{base}", "127.0.0.1:5556": f"127.0.0.1:{base + 1}",
            "127.0.0.1:5557": f"127.0.0.1:{base + 2}", "127.0.0.1:8080": f"127.0.0.1:{web}",
        }
        serve = [addresses.get(word, word) for word in serve_command()] + [
            "--frontend", f"tcp://127.0.0.1:{base}", "--backend", f"tcp://127.0.0.1:{base + 1}",
            "--events", f"tcp://127.0.0.1:{base + 2}"]
        env = {name: value for name, value in os.environ.items() if not name.startswith("TACTUS_")}
        env.update(HOME=str(home), TACTUS_SERVER=f"tcp://127.0.0.1:{base}")
        print(f"readme: {' '.join(serve)} (in a temporary checkout)")
        with open(server_log, "w") as output:
            server = subprocess.Popen(serve, cwd=sandbox, env=env, stdout=output, stderr=subprocess.STDOUT)
        status = [str(binary), "status", "--server", f"tcp://127.0.0.1:{base}", "--timeout", "1"]
        try:
            wait_until("it answers status", lambda: subprocess.run(status, env=env, capture_output=True).returncode == 0, 60, server)
            wait_until(f"its web pages listen on {web}", lambda: listening(web), 60, server)
            return server, addresses, env
        except Failure:
            exited = server.poll() is not None
            stop(server)
            if attempt == 2 or not (exited and "Address already in use" in server_log.read_text(errors="replace")):
                raise


def stop(server):
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", help="the tactus binary the commands run (`.build/release/tactus` in the README)")
    parser.add_argument("--show", action="store_true", help="print each command's output")
    arguments = parser.parse_args()
    binary = pathlib.Path(arguments.binary).resolve()
    if not os.access(binary, os.X_OK):
        print(f"readme: no tactus binary at {binary}", file=sys.stderr)
        return 1

    text = README.read_text()
    problems = []
    if len(text.splitlines()) > MAX_LINES:
        problems.append(f"README.md has {len(text.splitlines())} lines, more than {MAX_LINES}: move some to docs/")
    problems += check_links([README] + sorted((ROOT / "docs").glob("*.md")))
    if problems:
        print("\n".join(f"readme: {problem}" for problem in problems), file=sys.stderr)
        return 1
    found = commands(text)

    with tempfile.TemporaryDirectory(prefix="tactus-readme-") as temporary:
        temporary = pathlib.Path(temporary)
        sandbox, home, log = temporary / "checkout", temporary / "home", temporary / "log"
        for folder in (sandbox / "Tests" / "Fixtures", sandbox / ".build" / "release", home / "Music", log):
            folder.mkdir(parents=True)
        shutil.copy(ROOT / SAMPLE, sandbox / SAMPLE)
        shutil.copy(ROOT / SAMPLE, home / "Music" / "sample.ogg")
        (sandbox / ".build" / "release" / "tactus").symlink_to(binary)
        server_log = temporary / "serve.log"
        server = None
        try:
            server, addresses, env = start_server(binary, sandbox, home, server_log)
            failed = run_commands(found, sandbox, addresses, env, log, arguments.show)
            if failed:
                line, command, how, output = failed
                problems.append(f"README.md:{line}: `{command}` failed ({how}):\n{output.rstrip()}")
        except Failure as failure:
            problems.append(str(failure))
        finally:
            if server:
                stop(server)
        if problems:
            print("\n".join(f"readme: {problem}" for problem in problems), file=sys.stderr)
            print(f"readme: the server's log:\n{server_log.read_text(errors='replace')[-4000:]}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
