"""`gpu-advisor telegram ...`: register the bot's webhook with Telegram (the channel never does it at boot).

No rasa import: bot/cli.py calls `register(subparsers)`.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Optional

from bot.telegram_api import (
    ALLOWED_UPDATES,
    WEBHOOK_PATH,
    BotApi,
    BotApiError,
    TelegramConfigError,
    TelegramSettings,
)


def register(subparsers: "argparse._SubParsersAction") -> None:
    telegram = subparsers.add_parser("telegram", help="Telegram bot administration")
    commands = telegram.add_subparsers(dest="telegram_command", required=True)
    set_webhook = commands.add_parser(
        "set-webhook",
        help="register TELEGRAM_WEBHOOK_URL with Telegram (with TELEGRAM_SECRET_TOKEN and allowed_updates)",
        description="Reads TELEGRAM_TOKEN, TELEGRAM_SECRET_TOKEN, TELEGRAM_WEBHOOK_URL and TELEGRAM_API_URL.")
    set_webhook.add_argument("--url", help="public HTTPS URL of the webhook (default: $TELEGRAM_WEBHOOK_URL)")
    set_webhook.add_argument("--drop-pending-updates", action="store_true",
                             help="discard updates Telegram queued while no webhook answered")
    set_webhook.set_defaults(func=run_set_webhook)
    info = commands.add_parser("webhook-info", help="show what Telegram knows about the webhook (getWebhookInfo)")
    info.set_defaults(func=run_webhook_info)


def _settings(url: Optional[str] = None) -> TelegramSettings:
    overrides = {"webhook_url": url} if url else None
    return TelegramSettings.from_env(overrides)


def run_set_webhook(args: argparse.Namespace) -> int:
    try:
        settings = _settings(args.url)
    except TelegramConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not settings.webhook_url:
        print("error: set TELEGRAM_WEBHOOK_URL (or --url), e.g. https://bot.example.com" + WEBHOOK_PATH,
              file=sys.stderr)
        return 2
    if not settings.webhook_url.startswith("https://") and settings.api_url.startswith("https://api.telegram.org"):
        print("error: Telegram only delivers to https:// webhook URLs", file=sys.stderr)
        return 2
    if not settings.webhook_url.rstrip("/").endswith(WEBHOOK_PATH):
        print(f"warning: the channel listens on {WEBHOOK_PATH}; {settings.webhook_url} does not end with it",
              file=sys.stderr)
    api = BotApi(settings.token, settings.api_url)
    try:
        asyncio.run(api.set_webhook(settings.webhook_url, settings.secret_token, args.drop_pending_updates))
    except BotApiError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"webhook set: {settings.webhook_url} (allowed updates: {', '.join(ALLOWED_UPDATES)}, secret token on)")
    return 0


def run_webhook_info(args: argparse.Namespace) -> int:
    try:
        settings = _settings()
    except TelegramConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        info = asyncio.run(BotApi(settings.token, settings.api_url).call("getWebhookInfo"))
    except BotApiError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for key in ("url", "pending_update_count", "last_error_message", "allowed_updates"):
        print(f"{key}: {info.get(key) if isinstance(info, dict) else None}")
    return 0


def main(argv: Optional[list] = None) -> int:
    """Stand-alone entry (`python -m bot.assistant.channels.telegram_cli set-webhook`) for when bot/cli.py is not
    wired yet."""
    parser = argparse.ArgumentParser(prog="gpu-advisor")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["telegram", *(argv if argv is not None else sys.argv[1:])])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
