"""Rasa NLU components of the advisor (the only part of bot/ besides channels that imports rasa)."""
from bot.assistant.components.language_normalizer import LanguageNormalizer, IntentGuard

__all__ = ["LanguageNormalizer", "IntentGuard"]
