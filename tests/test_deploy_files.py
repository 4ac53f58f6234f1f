"""The systemd units (deploy/systemd/) and the Compose file (deploy/container/compose.yaml) describe the cluster that
`make cluster` runs and tests/e2e/test_cluster.py tests (deploy/supervisor/cluster.conf, deploy/haproxy/cluster.cfg).

Neither systemd nor a container engine runs on these machines, so the files are checked against the tested
supervisord configuration and against what the code reads: the same programs with the same options, every setting a
role reads present where that role runs, the balancer's servers pointing at the ports the services listen on.
A Compose service that adds one variable to `environment:` replaces the map it extends (YAML merge is shallow):
that lost the action servers their database, Redis, chart folder and listening address once; the checks below
would have failed on it.
"""
from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
INSTALL_DIR = "/opt/gpu-advisor"  # where the units expect the checkout (gpu-advisor.env.example ADVISOR_ROOT)

# supervisord program -> (systemd unit, instance), Compose service
ROLES = {
    "rasa-a": (("gpu-advisor-rasa@.service", "RASA_A_PORT"), "rasa-a"),
    "rasa-b": (("gpu-advisor-rasa@.service", "RASA_B_PORT"), "rasa-b"),
    "actions-a": (("gpu-advisor-actions@.service", "ACTIONS_A_PORT"), "actions-a"),
    "actions-b": (("gpu-advisor-actions@.service", "ACTIONS_B_PORT"), "actions-b"),
    "website": (("gpu-advisor-website.service", None), "website"),
    "staff": (("gpu-advisor-staff.service", None), "staff"),
}
# What each role reads from its environment in production (endpoints.production.yml for Rasa, bot/ for the rest).
ROLE_SETTINGS = {
    "rasa": {"ACTION_SERVER_URL", "ACTION_SERVER_TOKEN", "TRACKER_DB_HOST", "TRACKER_DB_NAME", "TRACKER_DB_USER",
             "TRACKER_DB_PASSWORD", "REDIS_HOST", "REDIS_USERNAME", "REDIS_PASSWORD", "RASA_TOKEN",
             "SOCKET_SESSION_SECRET", "ADVISOR_ALLOWED_ORIGINS"},
    "actions": {"ACTION_SERVER_TOKEN", "TICKETS_DB_URL", "TICKETS_SPOOL_DIR", "ADVISOR_CHART_DIR",
                "ADVISOR_PUBLIC_URL"},
    "website": {"ADVISOR_CHART_DIR", "ADVISOR_SOCKET_URL"},
    "staff": {"STAFF_TOKEN", "RASA_URL", "RASA_TOKEN", "TICKETS_DB_URL", "TICKETS_SPOOL_DIR"},
}
# Per-process settings: in the shared env file they would override every unit's own value (systemd gives
# EnvironmentFile= precedence over Environment=).
PER_PROCESS = {"TICKETS_SPOOL_DIR"}


def role(program: str) -> str:
    return program.split("-")[0]


def module_and_options(command: List[str]) -> Tuple[str, Dict[str, str]]:
    """`python -m bot.x run --port 1 --flag` -> ("bot.x", {"--port": "1", "--flag": ""})."""
    module = command[command.index("-m") + 1]
    options: Dict[str, str] = {}
    for index, word in enumerate(command):
        if word.startswith("--"):
            following = command[index + 1] if index + 1 < len(command) else ""
            options[word] = "" if following.startswith("--") else following
    return module, options


def supervisor_programs() -> Dict[str, List[str]]:
    parser = configparser.RawConfigParser()
    parser.read(DEPLOY / "supervisor" / "cluster.conf")
    programs = {section.split(":", 1)[1]: shlex.split(parser[section]["command"])
                for section in parser.sections() if section.startswith("program:")}
    for name, words in programs.items():
        # `python -m bot.launcher exec -- COMMAND`: the server dies with supervisord (issue 20, finding 8)
        assert words[1:4] == ["-m", "bot.launcher", "exec"] and words[4] == "--", name
        programs[name] = words[5:]
    return programs


def systemd_unit(name: str) -> Dict[str, List[str]]:
    """Key -> values of a unit file (continued lines joined; repeated keys kept in order)."""
    values: Dict[str, List[str]] = {}
    text = re.sub(r"\\\n\s*", " ", (DEPLOY / "systemd" / name).read_text())
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, _, value = line.partition("=")
        values.setdefault(key.strip(), []).append(value.strip())
    return values


def env_file(path: Path) -> Dict[str, str]:
    pairs = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs


def systemd_command(program: str, env: Dict[str, str]) -> Tuple[List[str], Dict[str, str]]:
    """The ExecStart of the program's unit as systemd runs it (instance and ${VAR} filled in), and its environment."""
    (unit_name, instance_var), _ = ROLES[program]
    unit = systemd_unit(unit_name)
    instance = env[instance_var] if instance_var else ""
    environment = {}
    for assignment in unit.get("Environment", []):
        key, _, value = assignment.replace("%i", instance).partition("=")
        environment[key] = value
    environment.update(env)  # EnvironmentFile= wins over Environment=
    line = unit["ExecStart"][0].replace("%i", instance)
    line = re.sub(r"\$\{(\w+)\}", lambda match: environment[match.group(1)], line)
    return shlex.split(line), environment


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "container" / "compose.yaml").read_text())


def haproxy_servers() -> Dict[str, Tuple[str, str, str, str]]:
    """server name -> (host variable, host default, port variable, port default) in deploy/haproxy/cluster.cfg."""
    found = {}
    pattern = re.compile(r'server\s+([\w-]+)\s+"\$\{(\w+)-([^}]*)\}:\$\{(\w+)-(\d+)\}"')
    for match in pattern.finditer((DEPLOY / "haproxy" / "cluster.cfg").read_text()):
        found[match.group(1)] = match.group(2, 3, 4, 5)
    return found


ENV_EXAMPLE = env_file(DEPLOY / "systemd" / "gpu-advisor.env.example")


@pytest.mark.parametrize("program", sorted(ROLES))
def test_systemd_units_run_what_supervisord_runs(program):
    supervised = supervisor_programs()[program]
    command, environment = systemd_command(program, ENV_EXAMPLE)
    module, options = module_and_options(command)
    expected_module, expected_options = module_and_options(supervised)
    assert module == expected_module
    assert set(options) == set(expected_options), program
    assert command[0] == f"{INSTALL_DIR}/.venv/bin/python"
    # Files named on the command line are the repository's own (the model is built by `make model`).
    for option in ("--credentials", "--endpoints"):
        if option in options:
            assert (ROOT / options[option].replace(f"{INSTALL_DIR}/", "")).is_file(), options[option]
    if "--port" in options and program in ("rasa-a", "rasa-b", "actions-a", "actions-b"):
        assert options["--port"] == ENV_EXAMPLE[ROLES[program][0][1]]
    missing = ROLE_SETTINGS[role(program)] - set(environment)
    assert not missing, f"{program} under systemd lacks {sorted(missing)}"


def test_systemd_env_file_feeds_the_balancer_and_sets_nothing_per_process():
    endpoints = [line for line in (ROOT / "endpoints.production.yml").read_text().splitlines()
                 if not line.lstrip().startswith("#")]
    for variable in re.findall(r"\$\{(\w+)\}", "\n".join(endpoints)):
        assert variable in ENV_EXAMPLE, variable
    for host_var, _, port_var, _ in haproxy_servers().values():
        assert port_var in ENV_EXAMPLE, port_var
    assert not PER_PROCESS & set(ENV_EXAMPLE)
    # Each action server keeps its own spool; the target starts the instances the balancer points at.
    spools = {systemd_command(program, ENV_EXAMPLE)[1]["TICKETS_SPOOL_DIR"] for program in ("actions-a", "actions-b",
                                                                                             "staff")}
    assert len(spools) == 3
    wanted = systemd_unit("gpu-advisor.target")["Wants"][0].split()
    for program in ("rasa-a", "rasa-b", "actions-a", "actions-b"):
        (unit_name, port_var), _ = ROLES[program]
        assert unit_name.replace("@", f"@{ENV_EXAMPLE[port_var]}") in wanted
    assert "haproxy.service" in wanted
    dropin = systemd_unit("haproxy.service.d/gpu-advisor.conf")
    assert f"CONFIG={INSTALL_DIR}/deploy/haproxy/cluster.cfg" in dropin["Environment"]


@pytest.mark.parametrize("program", sorted(ROLES))
def test_compose_services_run_what_supervisord_runs_with_every_setting(program):
    services = compose()["services"]
    service = services[ROLES[program][1]]
    command = shlex.split(service["command"]) if isinstance(service["command"], str) else service["command"]
    module, options = module_and_options(command)
    expected_module, expected_options = module_and_options(supervisor_programs()[program])
    assert module == expected_module
    assert set(expected_options) <= set(options), program
    env_names = set(service.get("environment") or {}) | set(ENV_EXAMPLE)  # env_file: .env, same names
    missing = ROLE_SETTINGS[role(program)] - env_names
    assert not missing, f"{program} in Compose lacks {sorted(missing)}"
    environment = service["environment"]
    # Reached from other containers: servers listen on all addresses, state lives on the shared servers.
    assert environment["TRACKER_DB_HOST"] == "postgres" and environment["REDIS_HOST"] == "redis"
    assert "@postgres:" in environment["TICKETS_DB_URL"]
    if role(program) == "actions":
        assert environment["ACTION_SERVER_HOST"] == "0.0.0.0"
    if role(program) in ("website", "staff"):
        assert options.get("--host") == "0.0.0.0"
    if "ADVISOR_CHART_DIR" in ROLE_SETTINGS[role(program)]:  # written by the action servers, served by the website
        chart_dir = environment["ADVISOR_CHART_DIR"]
        assert any(volume == f"charts:{chart_dir}" for volume in service["volumes"]), program
    health = service.get("healthcheck")
    if health:
        assert f":{options['--port']}/health" in " ".join(health["test"])


def test_compose_balancer_points_at_the_services_and_their_ports():
    services = compose()["services"]
    balancer = services["balancer"]
    assert any(volume.startswith("../haproxy/cluster.cfg:") for volume in balancer["volumes"])
    environment = balancer["environment"]
    action_spools = set()
    for server, (host_var, host_default, port_var, port_default) in haproxy_servers().items():
        name = "website" if server == "web" else server
        assert environment.get(host_var, host_default) == name, server
        command = services[name]["command"]
        _, options = module_and_options(shlex.split(command) if isinstance(command, str) else command)
        assert str(environment.get(port_var, port_default)) == options["--port"], server
        if server.startswith("actions"):
            action_spools |= {volume for volume in services[name]["volumes"] if volume.endswith(":/spool")}
    assert len(action_spools) == 2  # one spool volume per action server
    assert services["rasa-a"]["environment"]["ACTION_SERVER_URL"].startswith("http://balancer:")


def test_container_image_lets_its_user_write_the_mounted_volumes():
    """A named volume mounted where the image has no folder belongs to root; the image runs as an unprivileged user."""
    dockerfile = (DEPLOY / "container" / "Dockerfile").read_text()
    user = re.findall(r"^USER (\S+)", dockerfile, re.MULTILINE)[-1]
    owned = set()
    for paths in re.findall(rf"chown {user} ([^\n]+)", dockerfile):
        owned |= set(paths.split())
    for name, service in compose()["services"].items():
        if service.get("image") != "gpu-advisor":
            continue
        for volume in service.get("volumes", []):
            assert volume.split(":")[1] in owned, (name, volume)


def test_production_redis_has_no_anonymous_user_and_stays_private():
    """Issue 20, finding 4: the Redis of the cluster configurations asks for a password and listens privately."""
    from bot.assistant.redis_account import acl_rules
    from bot.assistant.redis_settings import RedisSettings

    redis_service = compose()["services"]["redis"]
    assert "ports" not in redis_service  # the Compose network only
    command = redis_service["command"]
    assert command[command.index("default") + 1] == "off"
    product = command[command.index("gpuadvisor"):]
    assert product[1] == "on" and product[2].startswith(">${REDIS_PASSWORD")
    assert "-@dangerous" in product and "~*" not in product
    for program in ("rasa-a", "rasa-b"):
        assert compose()["services"][program]["environment"]["REDIS_USERNAME"] == "gpuadvisor"

    conf = (DEPLOY / "redis" / "gpu-advisor.conf").read_text()
    assert re.search(r"^bind 127\.0\.0\.1", conf, re.MULTILINE) and "aclfile" in conf
    users = (DEPLOY / "redis" / "users.acl.example").read_text()
    assert re.search(r"^user default off$", users, re.MULTILINE)
    assert ENV_EXAMPLE["REDIS_USERNAME"] == "gpuadvisor" and ENV_EXAMPLE["REDIS_PASSWORD"]
    # The systemd users file and the user `make cluster` creates grant the same.
    rules = acl_rules(RedisSettings(host="-", username="gpuadvisor", password="change-me"))
    line = next(line for line in users.splitlines() if line.startswith("user gpuadvisor "))
    assert sorted(line.split()[2:]) == sorted(r for r in rules if r != "reset")
    cluster = (ROOT / "scripts" / "cluster.sh").read_text()
    assert "bot.assistant.redis_account provision" in cluster and "secret REDIS_PASSWORD" in cluster
