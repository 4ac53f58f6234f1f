"""`gpu-advisor dataset FILE --model M [--json]`: the data check and the estimate it leads to.

    gpu-advisor dataset train.jsonl --model qwen2.5-7b [--method qlora] [--epochs 3] [--budget 50]
                        [--seq-len 2048] [--question-column 1 --answer-column 2] [--masked-out masked.jsonl]
                        [--chart lengths.png] [--lang fa|tr|en] [--json]

--json prints one JSON object: the report's figures (examples, invalid_lines, duplicates, pii, tokens,
seq_len_cover, tokenizer ...) and `estimate` (card, hours, cost, budget verdict; `advice` has the full answer).
A file that cannot be read at all exits with status 2 and one line saying why.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def register(subparsers) -> None:
    parser = subparsers.add_parser("dataset", help="check a training file: tokens, sequence length, volume, "
                                                   "duplicates, personal data, and the estimate")
    parser.add_argument("file", metavar="FILE", help="JSONL (chat, ShareGPT, Alpaca, prompt/completion, text), "
                                                     "CSV or XLSX with a question and an answer column")
    parser.add_argument("--model", required=True, help="the model to train (its tokenizer counts the tokens)")
    parser.add_argument("--method", help="full, lora or qlora (default lora)")
    parser.add_argument("--epochs", type=float, help="epochs (default 1)")
    parser.add_argument("--budget", type=float, metavar="USD", help="budget in USD, VAT included")
    parser.add_argument("--seq-len", type=int, metavar="TOKENS", help="sequence length to plan with "
                                                                      "(default: the standard length covering 99%%)")
    parser.add_argument("--question-column", type=int, metavar="N", help="spreadsheet question column (1 = first)")
    parser.add_argument("--answer-column", type=int, metavar="N", help="spreadsheet answer column (1 = first)")
    parser.add_argument("--masked-out", metavar="FILE", help="write a copy with personal data masked")
    parser.add_argument("--chart", metavar="FILE.png", help="write the length histogram as a PNG")
    parser.add_argument("--lang", choices=("fa", "tr", "en"), default=os.environ.get("ADVISOR_LANG", "en"))
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.set_defaults(func=cmd_dataset)


def _columns(args):
    if args.question_column is None and args.answer_column is None:
        return None
    if not args.question_column or not args.answer_column:
        raise SystemExit(_fail("give both --question-column and --answer-column"))
    return args.question_column - 1, args.answer_column - 1


def _fail(message: str) -> int:
    print(f"error: dataset: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def estimate_summary(advice) -> dict:
    """The figures the issue asks for: card, hours, cost with VAT, budget verdict."""
    card = advice.recommended_card
    verdict = advice.budget_verdict
    return {
        "card": card.card_id if card else None,
        "card_name": card.name if card else None,
        "hours": round(card.hours, 2) if card and card.hours is not None else None,
        "cost_usd_with_vat": round(card.cost_usd_with_vat, 2) if card and card.cost_usd_with_vat is not None
        else None,
        "budget_verdict": verdict.verdict if verdict else None,
        "seq_len": advice.plan.seq_len,
        "volume_tokens": advice.volume_tokens,
    }


def cmd_dataset(args: argparse.Namespace) -> int:
    from bot.dataset.analysis import analyse_file
    from bot.dataset.reader import ColumnsNeeded, FileRejected
    from bot.dataset.report import advice_json, estimate, render_histogram, render_summary
    from bot.dataset.texts import load_dataset_knowledge

    kb = load_dataset_knowledge()
    model = _model_id(args.model)
    try:
        report = analyse_file(args.file, kb.limits["cli"].read_limits(), model_id=model, seq_len=args.seq_len,
                              columns=_columns(args))
    except FileNotFoundError:
        return _fail(f"cannot read {args.file}")
    except FileRejected as exc:
        return _fail(kb.text(f"reject_{exc.code}", args.lang, **exc.params))
    except ColumnsNeeded as exc:
        return _fail(kb.text("reject_columns_needed", args.lang, count=exc.count) +
                     " (--question-column N --answer-column N)")
    advice, advisor_kb = (estimate(report, model, args.method, args.epochs, args.budget)
                          if report.examples else (None, None))
    if args.masked_out:
        from bot.dataset.masking import write_masked_copy

        write_masked_copy(args.file, args.masked_out, report.file_kind, kb.limits["cli"].read_limits())
        report.extra["masked_copy"] = {"channel": "cli", "file": args.masked_out}
    elif report.pii:
        report.extra["masked_copy"] = {"channel": "hint_cli"}
    if args.chart:
        render_histogram(report, args.lang, args.chart, kb)
    if args.json:
        data = report.to_json()
        if advice is not None:
            data["estimate"] = dict(estimate_summary(advice), advice=advice_json(advice))
        print(json.dumps(data, ensure_ascii=False))
        return EXIT_OK
    print(render_summary(report, args.lang, advice.preset.display if advice else None, kb))
    if advice is not None:
        from bot.present.render import render_advice

        epochs = advice.request.epochs or 1
        print()
        print(kb.text("summary_estimate", args.lang, epochs=f"{epochs:g}"))
        print(render_advice(advice, args.lang, advisor_kb))
    return EXIT_OK


def _model_id(name: str) -> str:
    """The catalogue id of the model as typed ("qwen 7b" -> qwen2.5-7b); the name itself when unknown."""
    from bot.advisor.knowledge import load_knowledge, resolve_model

    try:
        return resolve_model(name, load_knowledge()).preset.id
    except ValueError:
        return name
