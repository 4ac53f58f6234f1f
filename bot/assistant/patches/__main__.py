"""`python -m bot.assistant.patches`: the table of the patches to Rasa (what, why, measured gain) as Markdown."""
from bot.assistant.patches import table

print(table())
