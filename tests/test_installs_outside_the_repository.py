"""Each client, and the server, installed the way its ecosystem expects into a fresh project outside the
repository, then run against a live server: the agent loop that opens each client's README, as written.

The sources are copied into a temporary "checkout" first (no node_modules, no dist/, no build/), as a fresh
clone has them, so nothing is built inside the repository and `make test-ts` beside this file is undisturbed.
npm, pip and go may use their caches; the registries are reachable.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import venv
from pathlib import Path

from tests.support.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ROOT / "clients"
NPM_QUIET = ["--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"]
# The README loop's events, by name: the task's life from creation to completion.
LOOP_EVENTS = ["TASK_CREATED", "PLAN_REPLACED", "TASK_STATUS_CHANGED", "PLAN_ITEM_CLAIMED", "ACTION_RECORDED",
               "ACTION_LOG_APPENDED", "ACTION_COMPLETED", "PLAN_ITEM_UPDATED"]


def readme_loop(readme: Path, language: str) -> str:
    """The code block under the README's "## An agent's loop" heading."""
    text = readme.read_text()
    section = text[text.index("## An agent's loop"):]
    found = re.search(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert found is not None, f"no {language} block under 'An agent's loop' in {readme}"
    return found.group(1)


def run(command: list[str | Path], cwd: Path, timeout: float = 600, env: dict[str, str] | None = None) -> str:
    ran = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                         env={**os.environ, **(env or {})})
    assert ran.returncode == 0, f"{command} exited {ran.returncode}:\n{ran.stdout}\n{ran.stderr}"
    return ran.stdout


def assert_ran_the_loop(output: str, event_names: list[str], completed: str) -> None:
    """The loop printed every event by name (never a number), both answers to "where was I?", and the end."""
    printed = re.findall(r"^\[event \d+\] (\S+)$", output, re.MULTILINE)
    assert printed[:len(event_names)] == event_names, output
    assert printed[-1] == event_names[2], output  # the last is the move to COMPLETED, which ends the follower
    assert "where was I? Completed 1/2: reproduce." in output and "where was I? Completed 2/2" in output, output
    assert re.search(rf"^task tsk_\w+ is {completed}$", output, re.MULTILINE), output


def assert_no_goaway_logged(server: ServerProcess) -> None:
    """Closing a client's channel is routine: nothing about it in the server's log at the default level."""
    server.stop()
    logged = "".join(server.output)
    assert "goaway" not in logged.lower(), logged


def fresh_copy(source: Path, destination: Path) -> Path:
    return shutil.copytree(source, destination, ignore=shutil.ignore_patterns(
        "node_modules", "dist", "*.tgz", "__pycache__", "*.egg-info", "build"))


def test_the_typescript_client_installs_from_its_folder_and_from_a_packed_tarball(
        tmp_path: Path, fresh_server: ServerProcess) -> None:
    package = fresh_copy(CLIENTS / "ts", tmp_path / "checkout" / "clients" / "ts")
    address = fresh_server.start()

    # From the folder: npm links it and runs its prepare, which installs its dependencies there and builds
    # dist/ (with --omit=dev in force, which the inner install must not inherit). TypeScript is the project's.
    project = tmp_path / "agent"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "agent", "private": True, "type": "module"}))
    run(["npm", "install", *NPM_QUIET, "--omit=dev", package, "typescript@5.9.3", "@types/node@20.19.43"], project)
    assert (project / "node_modules" / "@taskmem" / "client").resolve() == package.resolve()
    (project / "agent.ts").write_text(readme_loop(CLIENTS / "ts" / "README.md", "ts"))
    (project / "tsconfig.json").write_text(json.dumps({"compilerOptions": {
        "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "strict": True,
        "types": ["node"], "outDir": "out"}, "files": ["agent.ts"]}))
    run(["node", project / "node_modules" / "typescript" / "bin" / "tsc", "-p", "."], project)
    output = run(["node", "out/agent.js"], project, timeout=120, env={"TASKMEM_ADDRESS": address})
    assert_ran_the_loop(output, LOOP_EVENTS, "COMPLETED")

    # From a tarball: `npm pack` builds it (prepare) and it installs with no script and no build.
    packed = run(["npm", "pack", "--loglevel=error"], package).strip().splitlines()[-1]
    assert packed == "taskmem-client-0.1.0.tgz"
    other = tmp_path / "orchestrator"
    other.mkdir()
    (other / "package.json").write_text(json.dumps({"name": "orchestrator", "private": True, "type": "module"}))
    run(["npm", "install", *NPM_QUIET, package / packed], other)
    assert not (other / "node_modules" / "@taskmem" / "client").is_symlink()
    (other / "call.js").write_text(
        'import { createTaskmemClient, TaskStatus } from "@taskmem/client";\n'
        'const client = createTaskmemClient({ baseUrl: `http://${process.env.TASKMEM_ADDRESS}` });\n'
        'const { task } = await client.tasks.createTask({ name: "from the tarball" });\n'
        'const { task: read } = await client.tasks.getTask({ taskId: task.id });\n'
        'console.log(read.name, TaskStatus[read.status]);\n'
        "client.close();\n")
    assert run(["node", "call.js"], other, env={"TASKMEM_ADDRESS": address}).strip() == "from the tarball PENDING"
    assert_no_goaway_logged(fresh_server)


def test_the_python_client_installs_from_its_folder_and_as_a_wheel(tmp_path: Path,
                                                                  fresh_server: ServerProcess) -> None:
    client = fresh_copy(CLIENTS / "python", tmp_path / "checkout" / "clients" / "python")
    address = fresh_server.start()

    from_folder = tmp_path / "agent-venv"
    venv.create(from_folder, with_pip=True)
    run([from_folder / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", client],
        tmp_path)
    (tmp_path / "agent.py").write_text(readme_loop(CLIENTS / "python" / "README.md", "python"))
    output = run([from_folder / "bin" / "python", "agent.py"], tmp_path, timeout=120,
                 env={"TASKMEM_ADDRESS": address})
    assert_ran_the_loop(output, [f"EVENT_TYPE_{name}" for name in LOOP_EVENTS], "TASK_STATUS_COMPLETED")

    wheels = tmp_path / "wheels"
    run([from_folder / "bin" / "python", "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
         "--no-deps", "-w", wheels, client], tmp_path)
    (wheel,) = wheels.glob("taskmem_client-*.whl")
    from_wheel = tmp_path / "wheel-venv"
    venv.create(from_wheel, with_pip=True)
    run([from_wheel / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel],
        tmp_path)
    call = ("import asyncio\n"
            "from taskmem.v1 import task_pb2, task_service_pb2 as tasks\n"
            "from taskmem_client import TaskmemClient\n"
            "async def main():\n"
            "    async with TaskmemClient('" + address + "') as client:\n"
            "        made = await client.tasks.CreateTask(tasks.CreateTaskRequest(name='from the wheel'))\n"
            "        print(made.task.name, task_pb2.TaskStatus.Name(made.task.status))\n"
            "asyncio.run(main())\n")
    assert run([from_wheel / "bin" / "python", "-c", call], tmp_path).strip() == "from the wheel TASK_STATUS_PENDING"


def test_the_go_client_is_required_by_path_with_a_replace_directive(tmp_path: Path,
                                                                   fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    module = tmp_path / "agent"
    module.mkdir()
    # The commands of the Go README's "Install" section, with this checkout's path.
    run(["go", "mod", "init", "example.com/agent"], module)
    run(["go", "mod", "edit", f"-replace=github.com/taskmem/taskmem/clients/go={CLIENTS / 'go'}"], module)
    run(["go", "get", "github.com/taskmem/taskmem/clients/go@v0.0.0"], module)
    (module / "main.go").write_text(readme_loop(CLIENTS / "go" / "README.md", "go"))
    run(["go", "mod", "tidy"], module)
    output = run(["go", "run", "."], module, timeout=300, env={"TASKMEM_ADDRESS": address})
    assert_ran_the_loop(output, [f"EVENT_TYPE_{name}" for name in LOOP_EVENTS], "TASK_STATUS_COMPLETED")
    assert_no_goaway_logged(fresh_server)


def test_the_server_installs_from_the_checkout_with_its_command(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(ROOT / "pyproject.toml", checkout / "pyproject.toml")
    fresh_copy(ROOT / "server", checkout / "server")
    fresh_copy(CLIENTS / "python", checkout / "clients" / "python")
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    pip = [environment / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
    # The root README's "Install the server": the client's folder and the server's, in one command (the
    # server requires taskmem-client, which pip takes from the folder given beside it).
    run([*pip, "install", "--quiet", checkout / "clients" / "python", checkout], tmp_path)
    taskmem = environment / "bin" / "taskmem"
    server = ServerProcess(tmp_path / "taskmem.db", command=(str(taskmem),))
    address = server.start(timeout=120)
    try:
        (tmp_path / "agent.py").write_text(readme_loop(CLIENTS / "python" / "README.md", "python"))
        run([environment / "bin" / "python", "agent.py"], tmp_path, timeout=120, env={"TASKMEM_ADDRESS": address})
        listed = run([taskmem, "tasks", "list", "--address", address], tmp_path)
        assert "fix the refund test" in listed and "completed" in listed.lower(), listed
    finally:
        server.stop()

    # Its wheels: built once, installed with --find-links (taskmem-client comes from beside taskmem).
    wheels = tmp_path / "wheels"
    run([*pip, "wheel", "--quiet", "--no-deps", "-w", wheels, checkout / "clients" / "python", checkout], tmp_path)
    run([*pip, "uninstall", "--quiet", "--yes", "taskmem", "taskmem-client"], tmp_path)
    run([*pip, "install", "--quiet", "--no-index", "--find-links", wheels, "taskmem"], tmp_path)
    assert run([taskmem, "serve", "--help"], tmp_path).startswith("usage: taskmem serve")

