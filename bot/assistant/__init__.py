"""The Rasa glue: NLU components, input channels (Telegram, socket.io) and the redacting tracker store.

The only part of `bot` that imports rasa ; config.yml, credentials*.yml and endpoints*.yml
name classes in here."""
