"""`gpu-advisor tickets ...`: the staff command line.

    gpu-advisor tickets list [--status open] [--lang fa] [--category quote] [--json]
    gpu-advisor tickets show T-261129-ABCDEF [--json]
    gpu-advisor tickets close T-261129-ABCDEF --note "called back, quote sent"

bot/cli.py loads this lazily through `register(subparsers)`; `python -m bot.staff.cli list ...` runs it on its own.
Closing resumes the bot in the customer's conversation (RASA_URL / RASA_TOKEN): a staff tool over the ticket store,
so it lives in bot/staff (which depends on bot/tickets, never the other way round).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, List, Optional

from bot.privacy import mask_sender_id
from bot.staff.rasa_api import RasaClient
from bot.staff.service import close
from bot.tickets.models import CATEGORIES, STATUSES, Ticket, normalize_ticket_id
from bot.tickets.store import StoreUnavailable, TicketNotFound, TicketStore
from bot.tickets.texts import reason_label, staff_labels

EXIT_NOT_FOUND = 3
EXIT_UNAVAILABLE = 4


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("tickets", help="support tickets: list, show, close")
    parser.add_argument("--db", help="database URL (default: $TICKETS_DB_URL or sqlite var/tickets.db)")
    parser.add_argument("--ui-lang", default="en", choices=("en", "fa", "tr"), help="language of the labels")
    sub = parser.add_subparsers(dest="tickets_command", required=True)

    p_list = sub.add_parser("list", help="tickets, most urgent first")
    p_list.add_argument("--status", choices=STATUSES)
    p_list.add_argument("--lang", choices=("fa", "tr", "en"))
    p_list.add_argument("--category", choices=CATEGORIES)
    p_list.add_argument("--limit", type=int, default=100)
    p_list.add_argument("--json", action="store_true", help="machine-readable output")
    p_list.set_defaults(func=_guarded(cmd_list))

    p_show = sub.add_parser("show", help="one ticket with excerpt, estimate and notes")
    p_show.add_argument("id")
    p_show.add_argument("--json", action="store_true")
    p_show.set_defaults(func=_guarded(cmd_show))

    p_close = sub.add_parser("close", help="close a ticket and let the bot answer the customer again")
    p_close.add_argument("id")
    p_close.add_argument("--note", required=True, help="what was done (kept in the ticket history)")
    p_close.add_argument("--author", default="cli")
    p_close.set_defaults(func=_guarded(cmd_close))
    return parser


def _store(args: argparse.Namespace) -> TicketStore:
    return TicketStore(args.db) if args.db else TicketStore()


def _row(t: Ticket, labels: dict) -> List[str]:
    return [t.id, labels["priorities"][t.priority], labels["statuses"][t.status], t.language,
            labels["categories"][t.category], t.channel, f"{t.created_at:%Y-%m-%d %H:%M}",
            t.contact or "-"]


def cmd_list(args: argparse.Namespace) -> int:
    store = _store(args)
    tickets = store.list(status=args.status, language=args.lang, category=args.category, limit=args.limit)
    if args.json:
        print(json.dumps([t.to_json_dict() for t in tickets], ensure_ascii=False, indent=2))
        return 0
    labels = staff_labels(args.ui_lang)
    header = [labels[k] for k in ("id", "priority", "status", "language", "category", "channel", "created",
                                  "contact")]
    rows = [header] + [_row(t, labels) for t in tickets]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    if not tickets:
        print(labels["no_tickets"])
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    ticket = _store(args).get(normalize_ticket_id(args.id))
    if args.json:
        print(json.dumps(ticket.to_json_dict(), ensure_ascii=False, indent=2))
        return 0
    print(render_ticket_text(ticket, args.ui_lang))
    return 0


def render_ticket_text(t: Ticket, lang: str = "en") -> str:
    L = staff_labels(lang)
    lines = [
        f"{t.id}  [{L['statuses'][t.status]}]  {L['priority']}: {L['priorities'][t.priority]}"
        + (f"  ({L['spooled']})" if t.spooled else ""),
        f"{L['reasons']}: " + ", ".join(reason_label(r, lang) for r in t.priority_reasons),
        f"{L['category']}: {L['categories'][t.category]}   {L['language']}: {t.language}   "
        f"{L['channel']}: {t.channel}   {L['sender']}: {mask_sender_id(t.sender_id)}",
        f"{L['created']}: {t.created_at:%Y-%m-%d %H:%M} UTC   {L['updated']}: {t.updated_at:%Y-%m-%d %H:%M} UTC",
        f"{L['contact']}: {t.contact} ({t.contact_kind})" if t.contact else f"{L['contact']}: {L['anonymous']}",
        "",
        f"{L['gathered']}:",
    ]
    lines += [f"  {k}: {v}" for k, v in t.slots.items() if v not in (None, "", [], {})] or ["  -"]
    if t.estimate_summary:
        lines += ["", f"{L['estimate']}:"] + [f"  {k}: {v}" for k, v in t.estimate_summary.items()]
    if t.cards:
        lines += ["", f"{L['cards']}: {', '.join(t.cards)}"]
    lines += ["", f"{L['excerpt']}:"]
    lines += [f"  {L['roles'][m.role]}: {m.text}" for m in t.excerpt] or ["  -"]
    if t.notes:
        lines += ["", f"{L['notes']}:"]
        lines += [f"  {n.at:%Y-%m-%d %H:%M} {n.author} [{L['note_kinds'][n.kind]}] {n.text}" for n in t.notes]
    return "\n".join(lines)


def cmd_close(args: argparse.Namespace) -> int:
    outcome = close(_store(args), RasaClient(), normalize_ticket_id(args.id), author=args.author, note=args.note)
    L = staff_labels(args.ui_lang)
    print(f"{outcome.ticket.id}: {L['statuses'][outcome.ticket.status]}")
    for key in outcome.messages:
        print(L[key], file=sys.stdout if outcome.ok else sys.stderr)
    return 0 if outcome.ok else 1


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Errors a staff member can act on become a message and an exit code, not a traceback."""

    def wrapper(args: argparse.Namespace) -> int:
        from bot.tickets.store import UNAVAILABLE

        lang = getattr(args, "ui_lang", "en")
        try:
            return command(args)
        except TicketNotFound as err:
            print(f"{staff_labels(lang)['not_found']} {err.args[0]}", file=sys.stderr)
            return EXIT_NOT_FOUND
        except (StoreUnavailable, *UNAVAILABLE):
            print(staff_labels(lang)["db_down"], file=sys.stderr)
            return EXIT_UNAVAILABLE

    return wrapper


def run(args: argparse.Namespace) -> int:
    return args.func(args)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-advisor")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main(["tickets", *sys.argv[1:]]))
