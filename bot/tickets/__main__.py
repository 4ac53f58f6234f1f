import sys

from bot.tickets.cli import main

sys.exit(main(["tickets", *sys.argv[1:]]))
