"""Rasa NLU components of the advisor (the only part of bot/ besides channels that imports rasa)."""
from bot.assistant.components.language_normalizer import LanguageNormalizer, IntentGuard
from bot.assistant.components.tokenizer import LinearWhitespaceTokenizer

__all__ = ["LanguageNormalizer", "IntentGuard", "LinearWhitespaceTokenizer"]
