"""The Rasa glue: NLU components, input channels (Telegram, socket.io) and the redacting tracker store.

The only part of `bot` that imports rasa ; config.yml, credentials*.yml and endpoints*.yml
name classes in here."""

# The changes to Rasa's own code (speed, outage answers) must be in effect in every Rasa process of this project
# (run, shell, test): importing this package is what those processes have in common. What they replace, why, their
# measured gain, the Rasa version guard and the off switch (ADVISOR_RASA_PATCHES=off): bot/assistant/patches/.
from bot.assistant import patches  # noqa: E402,F401
