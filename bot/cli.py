"""`gpu-advisor`: the advisor on the command line.

    gpu-advisor estimate --model llama-3.1-8b --method qlora --seq-len 2048 [--budget 50]
                         [--tokens 20M | --examples 5000 --avg-tokens 600 --epochs 3] [--gpus N]
                         [--lang fa|tr|en] [--json]
    gpu-advisor estimate --config config.json --method lora --seq-len 2048   (a Hugging Face config.json)
    gpu-advisor estimate --plan plan.yaml            (a plan in the calibration schema; model may be a preset name)
    gpu-advisor estimate --cases cases.yaml --json   (replay calibration cases, one JSON object per line)
    gpu-advisor chart ... --out breakdown.png

Start-up stays fast: this module imports only the standard library; pydantic, the knowledge base, matplotlib and
the plug-in sub-commands (``bot.assistant.channels.telegram_cli``, ``bot.staff.cli``) are imported when a command
needs them.
Bad input exits with status 2 and one line naming the field.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional, Sequence

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_FAILED = 1

# Sub-commands written elsewhere in the project; each module exposes register(subparsers).
PLUGINS = {"telegram": "bot.assistant.channels.telegram_cli", "tickets": "bot.staff.cli",
           "dataset": "bot.dataset.cli"}
CORE_COMMANDS = ("estimate", "chart")
# bot.advisor.schema.STACK_IDS, written out: the parser is built before the advisor is imported (start-up time);
# tests/test_cli.py checks the two agree.
STACK_CHOICES = ("hf", "unsloth", "axolotl", "torchtune", "nemo_automodel", "llama_factory")

_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kmbg]?)\s*$", re.IGNORECASE)
_SCALE = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9}


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (no usage dump) and exits with status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


class BadValue(Exception):
    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


def parse_count(field: str, text: Optional[str]) -> Optional[float]:
    """"20M" -> 2e7, "1.5B" -> 1.5e9, "500k" -> 5e5, "20,000" -> 2e4."""
    if text is None:
        return None
    match = _COUNT.match(text.replace(",", "").replace("_", ""))
    if not match:
        raise BadValue(field, f"expected a number such as 20000, 500k, 20M or 1.5B, got {text!r}")
    return float(match.group(1)) * _SCALE[match.group(2).lower()]


def parse_number(field: str, text: Optional[str], *, integer: bool = False) -> Optional[float]:
    if text is None:
        return None
    cleaned = text.strip().lstrip("$").replace(",", "").replace("_", "")
    try:
        value = float(cleaned)
    except ValueError:
        raise BadValue(field, f"expected a {'whole ' if integer else ''}number, got {text!r}") from None
    if integer:
        if not value.is_integer():
            raise BadValue(field, f"expected a whole number, got {text!r}")
        return int(value)
    return value


# ---------------------------------------------------------------------------------------------- parser


def _add_job_arguments(parser: argparse.ArgumentParser) -> None:
    job = parser.add_argument_group("job")
    job.add_argument("--model", help="preset id or name as people type it (llama-3.1-8b, 'llama 8b', mistral)")
    job.add_argument("--size", metavar="BILLIONS", help="model size in billions when no name is given (7, 13, 70)")
    job.add_argument("--config", metavar="CONFIG.JSON", help="the model's Hugging Face config.json (dense, MoE, "
                                                             "hybrid attention, multimodal text_config)")
    job.add_argument("--method", help="full, lora or qlora")
    job.add_argument("--seq-len", metavar="TOKENS", help="tokens per sequence (e.g. 2048)")
    job.add_argument("--gpus", metavar="N", help="GPUs in one server (ZeRO-3 sharding above 1)")
    job.add_argument("--lora-rank", metavar="R", help="LoRA rank (default 16, all linear layers)")
    job.add_argument("--micro-batch", metavar="N", help="sequences per GPU per step (default 1)")
    job.add_argument("--stack", choices=STACK_CHOICES, help="training stack (knowledge/stacks.yml; default: the one "
                     "that makes the job cheapest and safe): hf = Transformers + PEFT + TRL")
    volume = parser.add_argument_group("volume and budget")
    volume.add_argument("--tokens", metavar="COUNT", help="dataset tokens per epoch: 20000, 500k, 20M, 1.5B")
    volume.add_argument("--examples", metavar="COUNT", help="number of training examples")
    volume.add_argument("--avg-tokens", metavar="TOKENS", help="average tokens per example")
    volume.add_argument("--epochs", metavar="N", help="epochs (default 1)")
    volume.add_argument("--budget", metavar="USD", help="budget in USD, VAT included")
    volume.add_argument("--budget-unlimited", action="store_true", help="budget is no constraint")
    parser.add_argument("--plan", metavar="FILE", help="YAML/JSON training plan (calibration schema; "
                                                       "model may be a preset name)")
    parser.add_argument("--lang", choices=("fa", "tr", "en"), default=os.environ.get("ADVISOR_LANG", "en"),
                        help="language of the answer (default: $ADVISOR_LANG or en)")


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = OneLineParser(prog="gpu-advisor", description="CloudRUX GPU fine-tuning advisor")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    estimate = subparsers.add_parser("estimate", help="memory, fitting cards, time, cost and budget verdict")
    _add_job_arguments(estimate)
    estimate.add_argument("--cases", metavar="FILE", help="replay calibration cases (YAML with cases:)")
    estimate.add_argument("--json", action="store_true", help="machine-readable output")
    estimate.set_defaults(func=cmd_estimate)

    chart = subparsers.add_parser("chart", help="PNG bar chart of the memory breakdown against the cards")
    _add_job_arguments(chart)
    chart.add_argument("--out", required=True, metavar="FILE.png", help="where to write the PNG")
    chart.set_defaults(func=cmd_chart)

    _register_plugins(subparsers, argv)
    return parser


def _register_plugins(subparsers, argv: Sequence[str]) -> None:
    """Import only the plug-in the command line asks for.

    For top-level help or an unknown command the plug-ins are only listed (their imports - aiohttp, SQLAlchemy -
    would double the start-up time of a help screen).
    """
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if command in CORE_COMMANDS:
        return
    if command not in PLUGINS:
        for name, module_name in PLUGINS.items():
            if _module_exists(module_name):
                subparsers.add_parser(name, help=f"{name} commands (gpu-advisor {name} --help)", add_help=False)
        return
    module_name = PLUGINS[command]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:  # that sub-command is not written yet
            return
        raise
    module.register(subparsers)


def _module_exists(module_name: str) -> bool:
    """Whether the module's file is there, without importing it or its package's __init__."""
    import importlib.util

    parent, _, leaf = module_name.rpartition(".")
    try:
        spec = importlib.util.find_spec(parent) if parent else None
    except ModuleNotFoundError:
        return False
    if parent and (spec is None or not spec.submodule_search_locations):
        return False
    if not parent:
        return importlib.util.find_spec(leaf) is not None
    return any(os.path.exists(os.path.join(location, leaf + ".py")) or
               os.path.isdir(os.path.join(location, leaf)) for location in spec.submodule_search_locations)


# ---------------------------------------------------------------------------------------------- commands


def _request_values(args: argparse.Namespace) -> Dict[str, Any]:
    return {
        "model": args.model,
        "size_b": parse_number("size_b", args.size),
        "method": args.method.lower() if args.method else None,
        "seq_len": parse_number("seq_len", args.seq_len, integer=True),
        "gpus": parse_number("gpus", args.gpus, integer=True),
        "lora_rank": parse_number("lora_rank", args.lora_rank, integer=True),
        "micro_batch": parse_number("micro_batch", args.micro_batch, integer=True),
        "total_tokens": parse_count("total_tokens", args.tokens),
        "examples": parse_count("examples", args.examples),
        "avg_tokens": parse_number("avg_tokens", args.avg_tokens),
        "epochs": parse_number("epochs", args.epochs),
        "budget_usd": parse_number("budget_usd", args.budget),
        "budget_unlimited": bool(args.budget_unlimited),
        "stack": getattr(args, "stack", None),
    }


def _load_mapping(path: str) -> Any:
    import yaml  # JSON is YAML too

    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError as exc:
        raise BadValue("plan", f"cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise BadValue("plan", f"{path} is not valid YAML/JSON: {str(exc).splitlines()[0]}") from None


def _preset_resolver(kb):
    from bot.advisor.knowledge import resolve_model

    return lambda name: resolve_model(name, kb).preset.arch


def read_config_file(path: str):
    """The ModelArch of a config.json file (errors name the file or the missing key)."""
    from bot.advisor.hf_config import read_hf_config

    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise BadValue("config", f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise BadValue("config", f"{path} is not valid JSON: {exc}") from None
    return read_hf_config(data)


def _hub_model(name: str):
    """The architecture of a Hub model id or URL given as --model (None: not an id, or not fetched)."""
    from bot.advisor.hf_hub import arch_from_hub, model_id_in

    repo_id = model_id_in(name)
    return arch_from_hub(repo_id) if repo_id is not None else None


def build_advice(args: argparse.Namespace):
    """Advice for the command line's job description or plan file."""
    from bot.advisor.advice import AdviceRequest, advise, advise_plan
    from bot.advisor.knowledge import load_knowledge
    from bot.advisor.plans import plan_from_mapping

    kb = load_knowledge()
    values = _request_values(args)
    if getattr(args, "config", None):
        if args.model:
            raise BadValue("config", "give either --model or --config, not both")
        values["custom_arch"] = read_config_file(args.config).dict()
    elif args.model:
        hub_arch = _hub_model(args.model)
        if hub_arch is not None:  # a Hugging Face id or page URL: its config.json from the Hub (or its cache)
            values.update(custom_arch=hub_arch.dict(), model=None)
    if args.plan:
        data = _load_mapping(args.plan)
        if isinstance(data, dict) and isinstance(data.get("plan"), dict):
            data = data["plan"]  # a single calibration case
        if isinstance(data, dict) and args.stack and "stack" not in data:
            data = {**data, "stack": args.stack}
        try:
            plan = plan_from_mapping(data, _preset_resolver(kb))
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            raise BadValue(field if message else "plan", message or str(exc)) from None
        if isinstance(data, dict) and data.get("sharding") is None:
            from bot.advisor.stack_choice import choose_layout

            plan = choose_layout(plan, kb.gpus)  # several GPUs and no layout given: DDP when it fits each card
        values.update(method=plan.method, seq_len=plan.seq_len)
        request = AdviceRequest.from_values(**values)
        return advise_plan(plan, request, kb), kb
    missing = [name for name in ("method", "seq_len") if values.get(name) is None]
    if missing:
        raise BadValue(missing[0], f"--{missing[0].replace('_', '-')} is required (or give --plan FILE)")
    try:
        return advise(AdviceRequest.from_values(**values), kb), kb
    except ValueError as exc:
        from bot.advisor.hf_hub import model_id_in

        if getattr(exc, "field", None) == "model" and values.get("model") and model_id_in(values["model"]):
            exc.hub_id = model_id_in(values["model"])  # a Hub id we could not fetch: say so, offer --config
        raise


def _table(headers: List[str], rows: List[List[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * width for width in widths))
    for row in rows:
        lines.append("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
    return "\n".join(lines)


def format_report(advice, lang: str, kb) -> str:
    """The chat answer, then the full breakdown and the table of every card."""
    from bot.present.render import duration, gb, money, number, render_advice

    parts = [[kb.text(f"part_{name}", lang), gb(value, lang)] for name, value in advice.estimate.components_gib.items()]
    parts.append(["=", gb(advice.estimate.per_gpu_gib, lang)])
    rows = []
    for card in advice.cards:
        rows.append([
            card.name, gb(card.usable_gib, lang), kb.text(f"status_{card.status}", lang),
            money(card.price_usd_hour, lang), money(card.price_usd_hour_with_vat, lang),
            number(card.tokens_per_second or 0, lang, 0),
            duration(card.hours, lang, kb) if card.hours is not None else "-",
            money(card.cost_usd_with_vat, lang) if card.cost_usd_with_vat is not None else "-",
            money(card.cost_per_million_tokens_usd, lang) if card.cost_per_million_tokens_usd is not None else "-",
        ])
    headers = [kb.text(key, lang) for key in ("table_card", "table_usable", "table_status", "table_price",
                                              "table_price_vat", "table_speed", "table_time", "table_cost",
                                              "table_per_million")]
    return "\n\n".join([
        render_advice(advice, lang, kb),
        _table(["", "GB"], parts),
        _table(headers, rows),
    ])


def _cases(args: argparse.Namespace) -> int:
    from bot.advisor.calibration import evaluate_cases, load_cases
    from bot.advisor.knowledge import load_knowledge

    try:
        cases = load_cases(args.cases)
    except OSError as exc:
        raise BadValue("cases", f"cannot read {args.cases}: {exc.strerror}") from None
    except Exception as exc:  # yaml errors and schema complaints from load_cases
        raise BadValue("cases", str(exc).splitlines()[0]) from None
    try:
        rows = evaluate_cases(cases, _preset_resolver(load_knowledge()))
    except ValueError as exc:
        raise BadValue("cases", str(exc).splitlines()[0]) from None
    keys = ("id", "per_gpu_gib", "components_gib", "low_gib", "high_gib", "measured_gib", "error_pct")
    if args.json:
        for row in rows:
            print(json.dumps({key: row[key] for key in keys if key in row}, ensure_ascii=False))
        return EXIT_OK
    from bot.advisor.calibration import format_table

    print(format_table(rows))
    return EXIT_OK


def cmd_estimate(args: argparse.Namespace) -> int:
    if args.cases:
        return _cases(args)
    advice, kb = build_advice(args)
    if args.json:
        print(advice.json(ensure_ascii=False))
    else:
        if getattr(args, "config", None):
            from bot.advisor.hf_config import describe

            print(f"config.json: {', '.join(describe(advice.plan.model))}\n")
        print(format_report(advice, args.lang, kb))
    return EXIT_OK


def cmd_chart(args: argparse.Namespace) -> int:
    from bot.present.chart import render_chart

    advice, kb = build_advice(args)
    path = render_chart(advice, args.lang, args.out, kb=kb)
    print(path)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------- entry point


def _error_line(exc: Exception, lang: str) -> str:
    from bot.advisor.knowledge import InputError

    if isinstance(exc, InputError):
        from bot.present.render import render_error

        line = f"error: {exc.field}: {render_error(exc, lang)}"
        if getattr(exc, "substitute", None):
            # an unknown name of a known family: say which preset would stand in and how it may differ
            from bot.advisor.knowledge import load_knowledge

            kb = load_knowledge()
            differences = kb.text("list_separator", lang).join(
                kb.text(f"model_difference_{code}", lang) for code in exc.differences)
            line += " " + kb.text("unknown_model_stand_in", lang, model=kb.model(exc.substitute).display,
                                  differences=differences)
        if exc.field == "model" and getattr(exc, "hub_id", None):
            from bot.advisor.stacks import load_stacks

            line += " " + load_stacks().text("hub_not_fetched", lang, model=exc.hub_id)
        return line
    if isinstance(exc, BadValue):
        return f"error: {exc.field}: {exc.message}"
    return f"error: {exc}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    lang = getattr(args, "lang", "en") or "en"
    try:
        return int(args.func(args) or EXIT_OK)
    except BrokenPipeError:  # output piped into `head` and closed early (Python docs, "Note on SIGPIPE")
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except BadValue as exc:
        print(_error_line(exc, lang).replace("\n", " "), file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:  # InputError and UnknownModel are ValueErrors carrying a field
        if hasattr(exc, "field"):
            print(_error_line(exc, lang).replace("\n", " "), file=sys.stderr)
            return EXIT_BAD_INPUT
        raise


if __name__ == "__main__":
    sys.exit(main())
