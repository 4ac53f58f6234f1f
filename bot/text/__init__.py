"""Reading what people type: normaliser, language detection, numbers and the value parser.

May import `bot.advisor` (presets, lexicon); never rasa."""
