"""Presentation: the advice as text (render) and as a picture (chart). Imports `bot.advisor`; never rasa."""
