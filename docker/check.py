#!/usr/bin/env python3
"""Checks the Docker deployment without a container engine (run by `make docker-check`).

1. Libraries: every shared library `ldd` lists for the static release binary, and every
   library tactus loads itself when needed (`DLOPENED`: OpenBLAS, for beatnet), comes from a
   package the Dockerfile's runtime stage installs, a dependency of one, or the base image
   (Priority: required, and apt); and every installed package but tini is needed.
2. Compose: the commands and health checks of compose.yaml, read from the file, run as they
   would in the containers, with container paths mapped to a temporary directory, the
   published ports to free ones and the service names to 127.0.0.1: keys made with
   `tactus keys generate` as docker/README.md says, the coordinator, every worker service
   (comb-filter twice, as `--scale` does), their health checks, a song submitted with
   `tactus submit --wait` over CURVE, then a clean stop and the health checks failing.

Usage: docker/check.py PATH-TO-STATIC-TACTUS
"""
import json
import math
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

import yaml

DOCKER = Path(__file__).resolve().parent
# Libraries tactus opens with dlopen, not listed by ldd: Plugins/BeatNet/OpenBLAS.swift.
DLOPENED = ["libopenblas.so.0"]
SECRETS = "/run/secrets/"


def fail(message):
    sys.exit(f"docker/check.py: {message}")


def run(arguments, **options):
    return subprocess.run(arguments, capture_output=True, text=True, **options)


# 1. Libraries.

def runtime_packages(dockerfile):
    """The packages of the `apt-get install` in the Dockerfile's last stage."""
    last_stage = re.split(r"(?m)^FROM ", dockerfile.read_text())[-1].replace("\\\n", " ")
    match = re.search(r"apt-get install -y --no-install-recommends\s+(.*?)\s*&&", last_stage)
    if not match:
        fail("no `apt-get install -y --no-install-recommends ... &&` in the Dockerfile's runtime stage")
    return match.group(1).split()


def package_of(library):
    """The Debian package that owns a library path (tried as is, resolved, and under /usr)."""
    real = os.path.realpath(library)
    for path in dict.fromkeys([library, real, "/usr" + library, "/usr" + real, real.removeprefix("/usr")]):
        result = run(["dpkg-query", "-S", path])
        if result.returncode == 0:
            return result.stdout.split(":")[0]
    return None


def with_dependencies(packages):
    result = run(["apt-cache", "depends", "--recurse", "--installed", "--no-recommends", "--no-suggests",
                  "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *packages])
    names = set(packages)
    for line in result.stdout.splitlines():
        # "pkg", "  Depends: dep", "  |Depends: alternative", "    provider-of-a-virtual-dep"
        name = line.split(":", 1)[1] if line.startswith(" ") and ":" in line else line
        names.add(name.strip().strip("<>").split(":")[0])
    return names


def check_libraries(binary):
    listed = runtime_packages(DOCKER / "Dockerfile")
    required = [line.split()[0] for line in run(["dpkg-query", "-W", "-f", "${Package} ${Priority}\n"]).stdout.splitlines()
                if line.endswith(" required")]
    base = with_dependencies(required + ["apt"])
    installed = with_dependencies(listed)
    needed = set()
    linked = [(line.split("=>")[0].strip(), line.split("=>")[1].split("(")[0].strip())
              for line in run(["ldd", binary]).stdout.splitlines() if "=>" in line]  # not the vDSO and the loader
    cache = run(["ldconfig", "-p"]).stdout
    for name in DLOPENED:
        found = re.search(rf"^\s*{re.escape(name)} \(libc6,x86-64\) => (\S+)$", cache, re.MULTILINE)
        linked.append((name, found.group(1) if found else "not found"))
    for name, path in linked:
        if path == "not found":
            fail(f"{name} not found (ldd, or ldconfig for a library tactus loads itself)")
        package = package_of(path)
        if package is None:
            fail(f"{path} is not from a Debian package (the Swift runtime? build with --static-swift-stdlib)")
        if package not in installed and package not in base:
            fail(f"{name} comes from {package}, which the runtime stage does not install")
        needed.add(package)
        print(f"  {name:28} {package:22} {'listed' if package in listed else 'dependency' if package in installed else 'base image'}")
    unneeded = [package for package in listed if package not in needed and package != "tini"]
    if unneeded:
        fail(f"the runtime stage installs packages no library needs: {', '.join(unneeded)}")
    print(f"libraries: ok ({len(needed)} packages; runtime stage installs {' '.join(listed)})")


# 2. Compose, outside Docker.

class Host:
    """compose.yaml's view of the containers, mapped onto this machine."""

    def __init__(self, compose, tactus, root):
        self.compose, self.tactus, self.root = compose, tactus, root
        self.ports = {}
        for port in compose["services"]["coordinator"]["ports"]:
            published, container = str(port).split(":")
            if published != container:
                fail(f"port {port}: clients find the events at the frontend's port plus 2, keep them equal")
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.ports[container] = str(probe.getsockname()[1])
        self.secrets = {SECRETS + name: str(root / spec["file"]) for name, spec in compose["secrets"].items()}

    def translate(self, service, argument, replica=0):
        """A container argument for this host: secrets, volumes, /tmp, ports, service names."""
        spec = self.compose["services"][service]
        directories = {"/tmp/": self.root / "tmp" / f"{service}-{replica}"}
        for volume in spec.get("volumes", []):
            name, target = volume.split(":")[:2]
            directories[target] = self.root / "volumes" / name
        for directory in directories.values():
            directory.mkdir(parents=True, exist_ok=True)
        paths = {**self.secrets, **{k: str(v) + ("/" if k.endswith("/") else "") for k, v in directories.items()}}
        def path(match):
            secret = match.group(0).removeprefix(SECRETS)
            if match.group(0).startswith(SECRETS) and secret not in spec.get("secrets", []):
                fail(f"{service} uses {match.group(0)} without the secret {secret}")
            return paths[match.group(0)]
        pattern = "|".join(re.escape(p) for p in sorted(paths, key=len, reverse=True))
        argument = re.sub(pattern, path, argument)
        def endpoint(match):
            host, port = match.group(1), match.group(2)
            if host not in ("0.0.0.0", "127.0.0.1") and host not in self.compose["services"]:
                fail(f"{service}: {host} is neither a wildcard, loopback nor a service")
            if port not in self.ports:
                fail(f"{service}: port {port} is not published by the coordinator")
            return f"tcp://{'0.0.0.0' if host == '0.0.0.0' else '127.0.0.1'}:{self.ports[port]}"
        return re.sub(r"tcp://([^:/]+):(\d+)", endpoint, argument)

    def command(self, service, replica=0):
        arguments = self.compose["services"][service]["command"]
        return [self.tactus] + [self.translate(service, str(a), replica) for a in arguments]

    def environment(self, service, replica=0):
        variables = self.compose["services"][service].get("environment", {})
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("TACTUS_")}  # as in a container
        return {**inherited, **{k: self.translate(service, str(v), replica) for k, v in variables.items()}}

    def healthy(self, service, replica=0):
        """Whether the service's health check passes, run as Docker would (exit status 0)."""
        test = self.compose["services"][service]["healthcheck"]["test"]
        if test[:2] != ["CMD", "tactus"]:
            fail(f"{service}: the health check must be [CMD, tactus, ...]")
        argv = [self.tactus] + [self.translate(service, a, replica) for a in test[2:]]
        return run(argv, env=self.environment(service, replica), timeout=30).returncode == 0


def wait_until(what, condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            fail(f"timed out: {what}")
        time.sleep(0.5)


def click_track(path, bpm=120.0, seconds=20, rate=22050):
    """A 16-bit mono WAV file: a decaying 1 kHz click on every beat."""
    frames = bytearray()
    period = 60.0 / bpm
    for n in range(int(seconds * rate)):
        t = (n / rate) % period
        frames += struct.pack("<h", int(20000 * math.exp(-t * 60) * math.sin(2 * math.pi * 1000 * t)))
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(bytes(frames))


def check_compose(tactus):
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    entrypoint = re.search(r"(?m)^ENTRYPOINT (.*)$", (DOCKER / "Dockerfile").read_text())
    if not entrypoint or json.loads(entrypoint.group(1))[-1] != "tactus":
        fail("the Dockerfile's ENTRYPOINT must end with tactus (the compose commands are its arguments)")
    services = compose["services"]
    workers = sorted(name for name, spec in services.items() if spec["command"][0] == "worker")
    detectors = sorted(json.loads(line)["name"] for line in run([tactus, "detectors", "--json"]).stdout.splitlines())
    if workers != detectors:
        fail(f"worker services {workers} are not the built-in detectors {detectors}")
    for name in workers:
        if "container_name" in services[name] or "ports" in services[name]:
            fail(f"{name} cannot scale with a container_name or published ports")
        if f"--detector={name}" not in services[name]["command"]:
            fail(f"the {name} service does not run the {name} detector")
    for name, spec in services.items():
        if "--insecure" in spec["command"]:
            fail(f"{name} uses --insecure")

    with tempfile.TemporaryDirectory(prefix="tactus-docker-check-") as directory:
        root = Path(directory)
        (root / "tmp").mkdir()
        secrets = root / "secrets"
        # The keys, as docker/README.md makes them; `client` stands for a user.
        for name in ["server", "worker", "health", "client"]:
            if run([tactus, "keys", "generate", name, "--out", str(secrets)]).returncode != 0:
                fail(f"tactus keys generate {name} failed")
        admitted = {"authorized-clients": ["health", "client"], "authorized-workers": ["worker"]}
        for folder, names in admitted.items():
            (secrets / folder).mkdir()
            for name in names:
                (secrets / folder / f"{name}.key").write_bytes((secrets / f"{name}.key").read_bytes())
        for name, spec in compose["secrets"].items():
            if not (root / spec["file"]).exists():
                fail(f"secret {name}: {spec['file']} is not among the keys docker/README.md makes")

        host = Host(compose, tactus, root)
        processes = []

        def start(service, replica=0):
            log = open(root / f"{service}-{replica}.log", "w")
            process = subprocess.Popen(
                host.command(service, replica), env=host.environment(service, replica), stdout=log, stderr=log)
            processes.append((service, replica, process, log.name))
            return process

        def logs():
            return "\n".join(f"--- {service} {replica}\n{Path(log).read_text()[-3000:]}"
                             for service, replica, _, log in processes)

        try:
            coordinator = start("coordinator")
            wait_until("the coordinator's health check", lambda: host.healthy("coordinator"), 30)
            print(f"coordinator: healthy (ports {host.ports})")
            replicas = {name: 2 if name == "comb-filter" else 1 for name in workers}
            for name, count in replicas.items():
                for replica in range(count):
                    start(name, replica)
            for service, replica, _, _ in processes[1:]:
                wait_until(f"the {service} health check", lambda: host.healthy(service, replica), 30)
            client = ["--server", f"tcp://127.0.0.1:{host.ports['5555']}", "--curve-server-key", str(secrets / "server.key"),
                      "--curve-secret-key", str(secrets / "client.key_secret")]
            status = json.loads(run([tactus, "status", "--json", *client]).stdout)
            counts = {name: sum(w["detector"] == name for w in status["workers"]) for name in workers}
            if counts != replicas:
                fail(f"the coordinator has workers {counts}, expected {replicas}")
            print(f"workers: healthy, {counts}")

            song = root / "click-120.wav"
            click_track(song)
            started = time.monotonic()
            # Every detector named: an advisory one (beatnet) runs only when asked for.
            named = [argument for name in workers for argument in ["--detector", name]]
            submitted = run([tactus, "submit", str(song), *named, "--wait", "--json", *client,
                             "--events", f"tcp://127.0.0.1:{host.ports['5557']}"], timeout=120)
            if submitted.returncode != 0:
                fail(f"tactus submit --wait exited {submitted.returncode}: {submitted.stdout}{submitted.stderr}\n{logs()}")
            report = json.loads(submitted.stdout.splitlines()[-1])
            states = {job["detector"]: job["state"] for job in report["jobs"]}
            bpms = {analysis["detector"]: analysis.get("bpm") for analysis in report.get("analyses", [])}
            if states != {name: "done" for name in workers} or set(bpms) != set(workers):
                fail(f"the song's jobs ended {states} with analyses {bpms}\n{logs()}")
            print(f"submit --wait: done in {time.monotonic() - started:.1f} s, BPM {bpms}")

            for _, _, process, _ in processes[1:]:
                process.send_signal(signal.SIGTERM)
            for service, replica, process, _ in processes[1:]:
                if process.wait(timeout=20) != 0:
                    fail(f"{service} exited {process.returncode} on SIGTERM\n{logs()}")
                if host.healthy(service, replica):
                    fail(f"{service}'s health check passes after it stopped")
            coordinator.send_signal(signal.SIGTERM)
            if coordinator.wait(timeout=30) != 0:
                fail(f"the coordinator exited {coordinator.returncode} on SIGTERM\n{logs()}")
            started = time.monotonic()
            if host.healthy("coordinator"):
                fail("the coordinator's health check passes after it stopped")
            timeout = compose["services"]["coordinator"]["healthcheck"]["timeout"]
            print(f"stop: every process exited 0; the health checks fail (the coordinator's in "
                  f"{time.monotonic() - started:.1f} s, its timeout {timeout})")
        finally:
            for _, _, process, _ in processes:
                if process.poll() is None:
                    process.kill()
                    process.wait()


def main():
    if len(sys.argv) != 2:
        fail("usage: docker/check.py PATH-TO-STATIC-TACTUS")
    tactus = os.path.abspath(sys.argv[1])
    print("== libraries of the static binary")
    check_libraries(tactus)
    print("== compose.yaml outside Docker")
    check_compose(tactus)
    print("docker check: ok")


if __name__ == "__main__":
    main()
