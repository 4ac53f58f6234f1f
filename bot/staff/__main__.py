"""python -m bot.staff [--host 127.0.0.1] [--port 8081]   (needs STAFF_TOKEN; RASA_URL, RASA_TOKEN, TICKETS_DB_URL)"""
import argparse
import logging

from aiohttp import web

from bot.staff.app import create_app
from bot.privacy import install_log_redaction
from bot.privacy.logs import mask_handlers


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bot.staff", description="CloudRUX support staff page")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    args = parser.parse_args()
    install_log_redaction()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    mask_handlers()
    web.run_app(create_app(), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
